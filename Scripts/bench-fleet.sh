#!/usr/bin/env bash
# Benchmark: one otactl push to 1, 2, 4 and 8 devices at once over the simulated link (release
# builds, an otad process per device, all links of the one otactl sharing one radio). Per row:
#   aggregate   image bytes of all transfers over the span from the first PREPARE to the last
#               VALIDATE answer (what the links carried together)
#   capacity    what that many links carry together at most on one radio, at the link's packet
#               limit per event (AirTime.sharedCapacityBytesPerSecond), and the aggregate's share
#   ceiling     the radio's physical ceiling (no packet limit), and the aggregate's share
#   per device  the slowest and fastest device's transfer goodput, and the slowest's share of its
#               fair share (the capacity divided by the links)
#   all done    from the start to the last device confirmed
#   memory      otactl's peak resident memory (/usr/bin/time's maximum RSS)
# Prints a table; docs/BENCHMARKS.md ("Several devices") keeps the figures.
#
#   Scripts/bench-fleet.sh [--image Images/raw-1MiB.bin] [--link SPEC] [--counts "1 2 4 8"]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

image=Images/raw-1MiB.bin
link="mtu=247,interval=15ms,packets=6"
counts="1 2 4 8"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --image) image="$2"; shift 2 ;;
    --link) link="$2"; shift 2 ;;
    --counts) counts="$2"; shift 2 ;;
    *) echo "bench-fleet: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x /usr/bin/time ]] || { apt-get install -y -qq time >/dev/null 2>&1 || true; }

swift build -c release --product otad >/dev/null
swift build -c release --product otactl >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d)"
pids=()
stop_devices() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap 'stop_devices; rm -rf "$work"' EXIT

start_devices() { # count
  local i
  rm -rf "$work/dev" && mkdir -p "$work/dev"
  for ((i = 0; i < $1; i++)); do
    cp Images/firmware-v1.bin "$work/dev/a$i.img"
    "$bin/otad" run --slot-a "$work/dev/a$i.img" --slot-b "$work/dev/b$i.img" --capacity 2MiB \
      --state-dir "$work/dev/state$i" --socket "$work/dev/d$i.sock" --log-level warning >>"$work/otad$i.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < $1; i++)); do
    for _ in $(seq 250); do [[ -S "$work/dev/d$i.sock" ]] && break; sleep 0.02; done
    [[ -S "$work/dev/d$i.sock" ]] || { cat "$work/otad$i.log" >&2; echo "otad $i did not start" >&2; exit 1; }
  done
}

echo "simulated link: $link (phy 2M, DLE); image $image ($(stat -c %s "$image") bytes) to each device"
printf "%-8s %11s %21s %21s %23s %8s %10s\n" devices aggregate "capacity (share)" "ceiling (share)" \
  "per device: min–max" "all done" "memory"
for count in $counts; do
  start_devices "$count"
  targets=()
  for ((i = 0; i < count; i++)); do targets+=(--device "$work/dev/d$i.sock"); done
  /usr/bin/time -f "%M" -o "$work/rss" "$bin/otactl" push "$image" --version 2.0.0 --json --link "$link" \
    --parallel "$count" "${targets[@]}" >"$work/push.jsonl" || {
    tail -n 5 "$work/push.jsonl" >&2
    echo "the push to $count devices failed" >&2
    exit 1
  }
  stop_devices
  python3 - "$count" "$work/push.jsonl" "$(tail -n 1 "$work/rss")" <<'PY'
import json, sys
count, path, rss = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
lines = [json.loads(l) for l in open(path)]
summary = lines[-1] if count > 1 else None
if summary is None:
    # One device: the single push's result line.
    result = lines[-1]
    assert result["ok"], result
    aggregate = result["transferGoodput"]
    capacity = result["rawCapacity"]
    ceiling = result["physicalCeiling"]
    goodputs = [aggregate]
    seconds = result["seconds"]
else:
    assert summary["event"] == "summary" and summary["confirmed"] == count, summary
    aggregate = summary["aggregateGoodput"]
    capacity = summary["aggregateCapacity"]
    ceiling = summary["physicalCeiling"]
    goodputs = [d["goodput"] for d in summary["devices"]]
    seconds = summary["seconds"]
fair = capacity / count
print(f'{count:<8} {aggregate/1000:6.1f} kB/s {capacity/1000:7.1f} kB/s ({aggregate/capacity:4.0%}) '
      f'{ceiling/1000:7.1f} kB/s ({aggregate/ceiling:4.0%}) '
      f'{min(goodputs)/1000:5.1f}–{max(goodputs)/1000:5.1f} kB/s ({min(goodputs)/fair:4.0%}) '
      f'{seconds:7.1f}s {rss/1024:7.1f} MiB')
PY
done
