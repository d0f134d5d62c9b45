#!/usr/bin/env bash
# Bytes on air and time of delta, block-copy, compressed and plain pushes over the in-memory link
# with the simulated link's air-time model (ota-bench --delta), for:
#  1. Images/firmware-v1.bin -> firmware-v2.bin (their 40 KiB assets are random per version: little
#     in common, so this pair shows the "never more than plain" side);
#  2. a 1 MiB binary-like pair: Images/raw-1MiB.bin, and a copy with bytes inserted, words changed
#     every few KiB and a new tail (what a rebuild does to a binary);
#  3. a filesystem-like pair: 1 MiB of 4 KiB files, a tenth of them rewritten.
# Beside each: gzip -9 of the new image and, when installed, xdelta3 -9's patch, as the anchors.
#
#   Scripts/bench-delta.sh [--debug] [--mtu N ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

configuration=release
mtus=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --debug) configuration=debug; shift ;;
    --mtu) mtus+=(--mtu "$2"); shift 2 ;;
    *) echo "bench-delta: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ ${#mtus[@]} -gt 0 ]] || mtus=(--mtu 247)

swift build -c "$configuration" --product ota-bench >/dev/null
bin="$(swift build -c "$configuration" --show-bin-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import random, sys
work = sys.argv[1]
old = bytearray(open("Images/raw-1MiB.bin", "rb").read())
rng = random.Random("bench-delta")
new = bytearray(old)
new[300_000:300_000] = bytes(rng.randrange(256) for _ in range(1000))   # code inserted
for at in range(4096, len(new) - 4, 4096):                              # addresses moved
    new[at] = (new[at] + 1) % 256
new += bytes(rng.randrange(256) for _ in range(20_000))                 # a new tail
open(f"{work}/binary-old.bin", "wb").write(old)
open(f"{work}/binary-new.bin", "wb").write(new)
files = [bytes(rng.randrange(256) for _ in range(4096)) for _ in range(256)]
fs_old = b"".join(files)
for index in range(0, 256, 10):
    files[index] = bytes(rng.randrange(256) for _ in range(4096))
open(f"{work}/fs-old.img", "wb").write(fs_old)
open(f"{work}/fs-new.img", "wb").write(b"".join(files))
PY

anchor() { # OLD NEW
  local gzip xdelta="(xdelta3 not installed)"
  gzip="$(gzip -9 -c "$2" | wc -c)"
  if command -v xdelta3 >/dev/null; then
    xdelta="xdelta3 -9 patch $(xdelta3 -e -9 -c -s "$1" "$2" | wc -c) B"
  fi
  echo "  anchors: gzip -9 $gzip B, $xdelta"
}

for pair in "Images/firmware-v1.bin Images/firmware-v2.bin" "$work/binary-old.bin $work/binary-new.bin" \
  "$work/fs-old.img $work/fs-new.img"; do
  set -- $pair
  "$bin/ota-bench" --delta "$1" "$2" "${mtus[@]}"
  anchor "$1" "$2"
  echo
done
