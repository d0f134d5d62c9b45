#!/usr/bin/env bash
# What encryption costs a push: the same payload as an MCUboot image in clear and encrypted for an
# X25519 device key (otactl image create [--encrypt], AES-128), pushed by otactl to otad (release
# builds, two processes) over the simulated link:
#  1. paced (MTU 247, 15 ms interval, 6 packets an event, 2M PHY, as Scripts/bench-link.sh): the
#     push's goodput and its transfer goodput, clear against encrypted; the air is the bound, so
#     they should match;
#  2. unpaced (pace=off, 2 ms events of 32 packets: the ends measured, not the air): otad's CPU
#     seconds under /usr/bin/time and per MB of image, clear against encrypted (the difference is
#     the check's decryption of the hash's view plus the in-place decryption), and the wall time of
#     VALIDATE (its answer after the last window);
#  3. the floor: `openssl enc -aes-128-ctr` over the same payload (AES-CTR alone, no IO), and
#     SHA-256 over it (`sha256sum`), which the clear check already pays.
#
#   Scripts/bench-encrypted.sh [--size MiB]   (default 16)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
size_mib=16
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size_mib="$2"; shift 2 ;;
    *) echo "bench-encrypted: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ "$size_mib" =~ ^[0-9]+$ ]] && ((size_mib >= 1 && size_mib <= 256)) \
  || { echo "bench-encrypted: --size is 1 to 256 (MiB), not $size_mib" >&2; exit 2; }

swift build -c release --product otad >/dev/null
swift build -c release --product otactl >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d)"
otad_pid=""
cleanup() {
  [[ -n "$otad_pid" ]] && kill "$otad_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

head -c $((size_mib << 20)) /dev/urandom >"$work/payload.bin"
"$bin/otactl" image keygen --type x25519 --key "$work/device.pem" --public "$work/device.pub.pem" >/dev/null
"$bin/otactl" image create "$work/payload.bin" "$work/clear.img" --version 2.0.0 >/dev/null
"$bin/otactl" image create "$work/payload.bin" "$work/encrypted.img" --version 2.0.0 \
  --encrypt "$work/device.pub.pem" >/dev/null
megabytes="$(echo "scale=3; $(stat -c %s "$work/clear.img") / 1000000" | bc)"
capacity_mib=$((size_mib + 1))
echo "encryption's cost: a ${size_mib} MiB payload as an MCUboot image, in clear and encrypted (X25519, AES-128)"

run() { # KIND LINK: one push of KIND.img over LINK; prints a line
  local kind="$1" link="$2" folder="$work/$1-$RANDOM"
  mkdir -p "$folder"
  head -c 65536 /dev/urandom >"$folder/slot-a.img"
  /usr/bin/time -v -o "$folder/time.log" "$bin/otad" run --slot-a "$folder/slot-a.img" \
    --slot-b "$folder/slot-b.img" --capacity "${capacity_mib}MiB" --state-dir "$folder/state" \
    --socket "$folder/device.sock" --decryption-key "$work/device.pem" --log-level warning >"$folder/otad.log" 2>&1 &
  local time_pid=$!
  for _ in $(seq 1 600); do
    [[ -S "$folder/device.sock" ]] && break
    sleep 0.1
  done
  otad_pid="$(pgrep -P "$time_pid" otad)"
  "$bin/otactl" push "$work/$kind.img" --device "$folder/device.sock" --link "$link" --no-activate --json \
    >"$folder/push.json"
  kill -TERM "$otad_pid"
  wait "$time_pid" || true
  otad_pid=""
  local cpu
  cpu=$(echo "$(sed -n 's/^\tUser time (seconds): //p' "$folder/time.log") + $(sed -n 's/^\tSystem time (seconds): //p' "$folder/time.log")" | bc)
  python3 - "$kind" "$folder/push.json" "$cpu" "$megabytes" <<'PY'
import json, sys
kind, path, cpu, megabytes = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
lines = [json.loads(line) for line in open(path) if line.startswith("{")]
r = [line for line in lines if line.get("event") == "result"][-1]
assert r["ok"], r
print(f"  {kind:<9} goodput {r['goodput']/1000:8.1f} kB/s  transfer {r['transferGoodput']/1000:8.1f} kB/s  "
      f"push {r['seconds']:6.2f} s  otad CPU {cpu:6.2f} s ({cpu/megabytes:.4f} s/MB)")
PY
}

echo "1. paced: MTU 247, interval 15 ms, 6 packets an event, 2M PHY (the air bounds both)"
for kind in clear encrypted; do run "$kind" "mtu=247,interval=15ms,packets=6"; done
echo "2. unpaced: pace=off, 2 ms events of 32 packets (the ends measured)"
for kind in clear encrypted clear encrypted; do run "$kind" "mtu=247,pace=off,interval=2ms,packets=32"; done
echo "3. floors over the same ${size_mib} MiB in memory, one process each"
key="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
started=$(date +%s.%N)
openssl enc -aes-128-ctr -K "$key" -iv 00000000000000000000000000000000 -in "$work/payload.bin" -out /dev/null
aes=$(echo "$(date +%s.%N) - $started" | bc)
started=$(date +%s.%N)
sha256sum "$work/payload.bin" >/dev/null
sha=$(echo "$(date +%s.%N) - $started" | bc)
printf '  AES-128-CTR (openssl enc)  %6.3f s (%5.0f MB/s)\n' "$aes" "$(echo "$megabytes / $aes" | bc -l)"
printf '  SHA-256 (sha256sum)        %6.3f s (%5.0f MB/s)\n' "$sha" "$(echo "$megabytes / $sha" | bc -l)"
