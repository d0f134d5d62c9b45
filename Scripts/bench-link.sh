#!/usr/bin/env bash
# Benchmark over the simulated link, two real processes (release build):
#  1. a 1 MiB image at ATT MTU 23, 185, 247 and 517 (or $MTUS), with a fixed connection interval,
#     event length and packets per event: the goodput; the model's capacity for the same settings
#     (the ATT value bytes the link could carry in the same time, at that MTU and packet limit) and
#     the goodput's share of it; the physical ceiling for the same interval and event length (no
#     controller packet limit, any MTU: what no ATT writes can beat on this air) and the goodput's
#     share of that; the wall time; and the transfer's goodput (PREPARE to VALIDATE's answer,
#     without the connection, Info and STATUS) and its share of the ceiling;
#  2. GATT writes against the L2CAP channel (coc=4100: K-frames, credits) on the same simulated
#     radio, 1M and 2M PHY: transfer goodput beside each path's capacity and the air's ceiling
#     (skipped with NO_PATHS=1);
#  3. otad's peak memory (VmHWM) while it receives a 64 MiB image (skipped with NO_MEMORY=1).
# Prints a table; docs/BENCHMARKS.md keeps the figures.
#
#   Scripts/bench-link.sh [--interval 15ms] [--event 15ms] [--packets 6]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

interval=15ms
event=""
packets=6
while [[ $# -gt 0 ]]; do
  case "$1" in
    --interval) interval="$2"; shift 2 ;;
    --event) event="$2"; shift 2 ;;
    --packets) packets="$2"; shift 2 ;;
    *) echo "bench-link: unknown argument $1" >&2; exit 2 ;;
  esac
done

swift build -c release --product otad >/dev/null
swift build -c release --product otactl >/dev/null
bin="$(swift build -c release --show-bin-path)"
source Scripts/otad-background.sh

start_otad() { # capacity
  rm -rf "$work/dev" && mkdir -p "$work/dev" && cp Images/firmware-v1.bin "$work/dev/a.img"
  otad_start "$bin" "$work/dev/sock" "$work/otad.log" --slot-a "$work/dev/a.img" --slot-b "$work/dev/b.img" \
    --capacity "$1" --state-dir "$work/dev/state" --log-level warning
}

link="interval=$interval,packets=$packets${event:+,event=$event}"
echo "simulated link: $link phy=2M dle=on; image Images/raw-1MiB.bin"
echo "goodput: the image over the whole push (connect to VALIDATE's answer); transfer: over PREPARE to VALIDATE's answer"
printf "%-5s %12s %14s %8s %14s %8s %8s %14s %8s\n" "MTU" "goodput" "capacity" "ratio" "ceiling" "ratio" "wall" "transfer" "ratio"
for mtu in ${MTUS:-23 185 247 517}; do
  start_otad 2MiB
  result="$("$bin/otactl" push Images/raw-1MiB.bin --version 1.1.0 --no-activate --json \
    --device "$work/dev/sock" --link "mtu=$mtu,$link" | tail -n 1)"
  otad_stop
  python3 - "$mtu" "$result" <<'PY'
import json, sys
mtu, result = sys.argv[1], json.loads(sys.argv[2])
assert result["ok"], result
assert result["mtu"] == int(mtu), f'negotiated MTU {result["mtu"]}, not {mtu}'
print(f'{mtu:<5} {result["goodput"]/1000:7.1f} kB/s {result["rawCapacity"]/1000:9.1f} kB/s '
      f'{100*result["ratio"]:7.1f}% {result["physicalCeiling"]/1000:9.1f} kB/s {100*result["ceilingRatio"]:7.1f}% '
      f'{result["seconds"]:7.2f}s {result["transferGoodput"]/1000:9.1f} kB/s {100*result["transferCeilingRatio"]:7.1f}%')
PY
done

[[ "${NO_PATHS:-}" == 1 ]] || {
  echo
  echo "GATT writes and the L2CAP channel on the same simulated radio ($link dle=on, MTU 517; 1 MiB,"
  echo "transfer goodput; capacity: the path's payload bytes in the air model, the channel with Linux's credits;"
  echo "ceiling: the air's for ATT writes with no packet limit)"
  printf "%-4s %-6s %14s %14s %8s %14s %8s\n" "PHY" "path" "transfer" "capacity" "ratio" "ceiling" "ratio"
  for phy in 1M 2M; do
    for path in gatt coc; do
      spec="mtu=517,phy=$phy,$link"
      [[ "$path" == coc ]] && spec="$spec,coc=4100"
      start_otad 2MiB
      result="$("$bin/otactl" push Images/raw-1MiB.bin --version 1.1.0 --no-activate --full --json \
        --device "$work/dev/sock" --link "$spec" | tail -n 1)"
      otad_stop
      python3 - "$phy" "$path" "$result" <<'PY'
import json, sys
phy, path, result = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
assert result["ok"], result
assert result["dataPath"] == ("l2cap" if path == "coc" else "gatt"), result["dataPath"]
transfer = result["transferGoodput"]
print(f'{phy:<4} {path:<6} {transfer/1000:9.1f} kB/s {result["rawCapacity"]/1000:9.1f} kB/s '
      f'{100*transfer/result["rawCapacity"]:7.1f}% {result["physicalCeiling"]/1000:9.1f} kB/s '
      f'{100*result["transferCeilingRatio"]:7.1f}%')
PY
    done
  done
}

[[ "${NO_MEMORY:-}" == 1 ]] && exit 0
echo
echo "otad's peak memory receiving a 64 MiB image (link unpaced: pace=off, to measure the ends)"
head -c $((64 << 20)) /dev/urandom >"$work/big.img"
start_otad 64MiB
before="$(grep VmHWM /proc/$otad_pid/status | awk '{print $2}')"
started=$(date +%s.%N)
"$bin/otactl" push "$work/big.img" --version 9.0.0 --no-activate --json --device "$work/dev/sock" \
  --link "mtu=517,interval=7.5ms,packets=64,queue=128,pace=off" | tail -n 1 >"$work/big.json"
ended=$(date +%s.%N)
peak="$(grep VmHWM /proc/$otad_pid/status | awk '{print $2}')"
otad_stop
python3 - "$before" "$peak" "$started" "$ended" "$(cat "$work/big.json")" <<'PY'
import json, sys
before, peak, started, ended, result = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), json.loads(sys.argv[5])
assert result["ok"], result
print(f"  VmHWM at start {before/1024:.1f} MiB, after 64 MiB received {peak/1024:.1f} MiB "
      f"(image/peak = {64*1024/peak:.1f}); push took {ended-started:.1f} s")
PY
