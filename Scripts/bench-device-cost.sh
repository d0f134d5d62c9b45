#!/usr/bin/env bash
# What a push costs otad itself: peak RSS and CPU seconds (and CPU seconds per MB of image) of the
# real daemon, under /usr/bin/time -v, for a delta push (otactl --base OLD) and a plain one
# (--full), over the simulated link with pacing off and short, full connection events (the ends
# measured, not the air: 2 ms events of 32 packets), and for an
# otad started and stopped with no push (what starting costs: it checks its running image). OLD and
# NEW are payloads: each is made an unsigned MCUboot image (1.0.0 and 1.1.0), OLD the factory image
# in slot A, known by its own header, so the device announces it and the central can use the delta.
# The air time of the same pushes at MTU 247: `ota-bench --delta OLD NEW --mtu 247`
# (Scripts/bench-delta.sh). docs/BENCHMARKS.md has the figures for a 64 MiB FAT partition.
#
#   Scripts/bench-device-cost.sh OLD NEW [--debug]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
configuration=release
[[ "${3:-}" == --debug ]] && configuration=debug
old_payload="$(realpath "$1")"
new_payload="$(realpath "$2")"
swift build -c "$configuration" --product otad >&2
swift build -c "$configuration" --product otactl >&2
bin="$(swift build -c "$configuration" --show-bin-path)"
work="$(mktemp -d)"
otad_pid=""
cleanup() {
  [[ -n "$otad_pid" ]] && kill "$otad_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/otactl" image create "$old_payload" "$work/old.img" --version 1.0.0 >/dev/null
"$bin/otactl" image create "$new_payload" "$work/new.img" --version 1.1.0 >/dev/null
size="$(stat -c %s "$work/new.img")"
old_size="$(stat -c %s "$work/old.img")"
((old_size > size)) && size=$old_size
capacity_mib=$(((size + (1 << 20) - 1) / (1 << 20) + 1))
megabytes="$(echo "scale=3; $(stat -c %s "$work/new.img") / 1000000" | bc)"
echo "otad's cost: $(basename "$new_payload") ($(stat -c %s "$work/new.img") B as an image) to a device" \
  "running $(basename "$old_payload"), slots of ${capacity_mib} MiB, $configuration build"

run() { # MODE [otactl push options...]
  local mode="$1" folder="$work/$1" log wall result cpu
  shift
  mkdir -p "$folder"
  cp "$work/old.img" "$folder/slot-a.img"
  /usr/bin/time -v -o "$folder/time.log" "$bin/otad" run --slot-a "$folder/slot-a.img" \
    --slot-b "$folder/slot-b.img" --capacity "${capacity_mib}MiB" --state-dir "$folder/state" \
    --socket "$folder/device.sock" >"$folder/otad.log" 2>&1 &
  local time_pid=$!
  for _ in $(seq 1 600); do
    [[ -S "$folder/device.sock" ]] && break
    sleep 0.1
  done
  otad_pid="$(pgrep -P "$time_pid" otad)"
  local started
  started=$(date +%s.%N)
  result="(no push)"
  if (($#)); then
    "$bin/otactl" push "$work/new.img" --device "$folder/device.sock" --link mtu=247,pace=off,interval=2ms,packets=32 \
      --no-activate --json "$@" >"$folder/push.json"
    result="$(python3 - "$folder/push.json" <<'PY'
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
r = [line for line in lines if line.get("event") == "result"][-1]
print(f"{r.get('transferMode')}, {r.get('bytesOnAir')} B on air")
PY
)"
  fi
  wall=$(echo "$(date +%s.%N) - $started" | bc)
  kill -TERM "$otad_pid"
  wait "$time_pid" || true
  otad_pid=""
  log="$folder/time.log"
  cpu=$(echo "$(sed -n 's/^\tUser time (seconds): //p' "$log") + $(sed -n 's/^\tSystem time (seconds): //p' "$log")" | bc)
  printf '  %-6s %-34s push %7.2f s  otad CPU %6.2f s (%5.3f s/MB)  peak RSS %4d MiB\n' "$mode" "$result" \
    "$wall" "$cpu" "$(echo "scale=4; $cpu / $megabytes" | bc)" \
    "$(($(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$log") / 1024))"
}

run idle
run delta --base "$work/old.img"
run full --full
