#!/usr/bin/env bash
# Benchmark: one client cannot stall another (release build, two real processes and a flooder).
# A device runs a 4 MiB MCUboot image in slot A and serves SMP over UDP; an otactl push of another
# 4 MiB image goes over the simulated link, alone, then while a UDP client floods SMP with
# requests and never reads an answer: image state reads (each would hash both slots without the
# cache), OS info and bootloader info (which read no slot), in turns. Prints each push's goodput
# and the ratio with a flooder to without (the goal: at least 0.9), and how many requests the
# flooder sent and otad answered. docs/BENCHMARKS.md ("One client cannot stall another") keeps
# the figures.
#
#   Scripts/bench-flood.sh [--runs 3] [--otad PATH]   # --otad: another build's otad (a before/after)
#   BLUEOTA_BIN=DIR Scripts/bench-flood.sh           # otad and otactl from DIR (release builds), not built here
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

runs=3
otad_override=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --otad) otad_override="$2"; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bench-flood: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [[ -n "${BLUEOTA_BIN:-}" ]]; then
  bin="$(cd "$BLUEOTA_BIN" && pwd)"
else
  swift build -c release --product otad >/dev/null
  swift build -c release --product otactl >/dev/null
  bin="$(swift build -c release --show-bin-path)"
fi
source Scripts/otad-background.sh
otad_bin="$bin"
if [[ -n "$otad_override" ]]; then
  otad_bin="$work/override"
  mkdir -p "$otad_bin" && cp "$otad_override" "$otad_bin/otad"
fi

# The images: 4 MiB payloads from a seeded generator, wrapped as MCUboot 1.0.0 and 2.0.0.
python3 - "$work" <<'PY'
import random, sys
for name, seed in (("old", 1), ("new", 2)):
    open(f"{sys.argv[1]}/{name}.bin", "wb").write(random.Random(seed).randbytes(4 << 20))
PY
"$bin/otactl" image create "$work/old.bin" "$work/running.img" --version 1.0.0 >/dev/null
"$bin/otactl" image create "$work/new.bin" "$work/update.img" --version 2.0.0 >/dev/null

address=127.0.0.61
link="mtu=247,interval=7.5ms,packets=6"
start_device() {
  rm -rf "$work/dev" && mkdir -p "$work/dev" && cp "$work/running.img" "$work/dev/a.img"
  otad_start "$otad_bin" "$work/dev/sock" "$work/otad.log" --slot-a "$work/dev/a.img" --slot-b "$work/dev/b.img" \
    --capacity 8MiB --state-dir "$work/dev/state" --factory-version 1.0.0 --smp-udp "$address:1337" \
    --log-level warning
}

push() { # prints the push's JSON line
  "$bin/otactl" push "$work/update.img" --no-activate --json --device "$work/dev/sock" --link "$link" | tail -n 1
}

# The flooder: SMP requests as fast as the socket takes them, never reading an answer; stops when
# its stop file appears, and prints how many it sent.
flood() {
  python3 - "$address" "$work/stop-flood" <<'PY' &
import os, socket, sys
address, stop = sys.argv[1], sys.argv[2]
requests = [
    bytes.fromhex("0000000000010000"),  # image state read (group 1, command 0)
    bytes.fromhex("0000000000000007"),  # OS info (group 0, command 7)
    bytes.fromhex("0000000000000008"),  # bootloader info (group 0, command 8)
]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.setblocking(False)
sent = 0
while not os.path.exists(stop):
    for request in requests:
        try:
            s.sendto(request, (address, 1337))
            sent += 1
        except BlockingIOError:
            pass
open(stop + ".sent", "w").write(f"{sent}\n")
PY
  flooder=$!
}

declare -a alone=() flooded=()
sent_total=0
for run in $(seq "$runs"); do
  start_device
  alone+=("$(push | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["ok"], r; print(r["goodput"])')")
  otad_stop
  start_device
  rm -f "$work/stop-flood"
  flood
  sleep 0.5
  flooded+=("$(push | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["ok"], r; print(r["goodput"])')")
  touch "$work/stop-flood"
  wait "$flooder" 2>/dev/null || true
  sent_total=$((sent_total + $(cat "$work/stop-flood.sent")))
  kill -0 "$otad_pid" 2>/dev/null || { cat "$work/otad.log" >&2; echo "bench-flood: otad died under the flood" >&2; exit 1; }
  otad_stop
done

python3 - "${alone[*]}" "${flooded[*]}" "$sent_total" <<'PY'
import statistics, sys
alone = [float(x) for x in sys.argv[1].split()]
flooded = [float(x) for x in sys.argv[2].split()]
sent = int(sys.argv[3])
a, f = statistics.median(alone), statistics.median(flooded)
print("a 4 MiB push over the simulated link (mtu=247, interval=7.5ms, packets=6), median of", len(alone), "runs")
print(f"  alone                   {a/1000:8.1f} kB/s   runs: {', '.join(f'{x/1000:.1f}' for x in alone)}")
print(f"  while SMP is flooded    {f/1000:8.1f} kB/s   runs: {', '.join(f'{x/1000:.1f}' for x in flooded)}")
print(f"  ratio                   {f/a:8.2f}   (goal: at least 0.9)")
print(f"  the flooder sent {sent} requests in all ({sent // len(flooded)} a run), reading no answer")
PY
