#!/usr/bin/env bash
# Benchmark of lost chunks over the simulated link, two real processes (release build): a 1 MiB raw
# image pushed with `otactl push --no-activate --json` at ATT MTU 247 and 517 (or $MTUS), loss 0,
# 1, 3, 5 and 10 % (or $LOSSES), without and with reordering (or $REORDERS), 15 ms interval,
# 6 packets per event. Per run: the goodput, its ratio to 0.9 × (1 − loss) × the lossless goodput
# at the same MTU and reordering (issue 18's target: ≥ 1 up to 5 %), windows committed, windows
# failed, bytes resent, and bytes on air per image byte against its target (1 + 1.5 × loss).
#
# MODE=after (default) lets otactl turn on the device's missing-range reports; MODE=before passes
# --no-missing-ranges: the base protocol's path (whole windows resent from their first gap, AIMD),
# as a central from before the feature does against the same device.
#
#   MODE=before Scripts/bench-loss.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

mode="${MODE:-after}"
extra=()
[[ "$mode" == before ]] && extra=(--no-missing-ranges)

swift build -c release --product otad >/dev/null
swift build -c release --product otactl >/dev/null
bin="$(swift build -c release --show-bin-path)"
source Scripts/otad-background.sh

start_otad() {
  rm -rf "$work/dev" && mkdir -p "$work/dev" && cp Images/firmware-v1.bin "$work/dev/a.img"
  otad_start "$bin" "$work/dev/sock" "$work/otad.log" --slot-a "$work/dev/a.img" --slot-b "$work/dev/b.img" \
    --capacity 2MiB --state-dir "$work/dev/state" --log-level warning
}

echo "simulated link: interval=15ms,packets=6 phy=2M dle=on; image Images/raw-1MiB.bin; mode $mode"
printf "%-4s %-7s %-5s %11s %7s %8s %7s %9s %11s %7s\n" \
  MTU reorder loss goodput ratio windows failed resent "air/image" target
for mtu in ${MTUS:-247 517}; do
  for reorder in ${REORDERS:-0 0.05}; do
    lossless=""
    for loss in ${LOSSES:-0 0.01 0.03 0.05 0.1}; do
      start_otad
      result="$("$bin/otactl" push Images/raw-1MiB.bin --version 1.1.0 --no-activate --json "${extra[@]}" \
        --device "$work/dev/sock" \
        --link "mtu=$mtu,interval=15ms,packets=6,loss=$loss,reorder=$reorder" | tail -n 1 || true)"
      otad_stop
      line="$(python3 - "$mtu" "$reorder" "$loss" "$result" "$lossless" <<'PY'
import json, sys
mtu, reorder, loss, result, lossless = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
if not result["ok"]:
    print(f'{mtu:<4} {reorder:<7} {100*float(sys.argv[3]):4.0f}%   push failed: {result.get("error")}|')
    sys.exit(0)
image = 1 << 20
goodput = result["goodput"]
base = float(lossless) if lossless else goodput
ratio = goodput / (0.9 * (1 - loss) * base)
air = result["bytesSent"] / image
print(f'{mtu:<4} {reorder:<7} {100*loss:4.0f}% {goodput/1000:6.1f} kB/s {ratio:7.2f} {result["windows"]:8d} '
      f'{result["windowFailures"]:7d} {result["bytesResent"]:9d} {air:11.3f} {1 + 1.5*loss:7.3f}|{goodput}')
PY
)"
      echo "${line%|*}"
      # (an `if`: a bare `[[ ]] &&` as the loop's last command made the script exit 1)
      if [[ -z "$lossless" ]]; then lossless="${line##*|}"; fi
    done
  done
done
