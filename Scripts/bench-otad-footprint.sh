#!/usr/bin/env bash
# What otad weighs on a board: the static, stripped otad that docs/RASPBERRY-PI.md installs
# (`swift build -c release --static-swift-stdlib`), its size before and after `strip`, how many of its
# symbols are ICU's or Foundation's full library (the part FoundationEssentials leaves out), how many
# are the central's delta planning (which otad never calls), and its peak memory (VmHWM) while it
# receives a 64 MiB image over the simulated link, unpaced, from a release otactl.
#
#   Scripts/bench-otad-footprint.sh                  builds into .build-static and .build (release)
#   Scripts/bench-otad-footprint.sh --otad PATH --otactl PATH
#                                                    measures given binaries (e.g. another checkout's)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

otad=""
otactl=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --otad) otad="$(realpath "$2")"; shift 2 ;;
    --otactl) otactl="$(realpath "$2")"; shift 2 ;;
    *) echo "bench-otad-footprint: unknown argument $1 (--otad PATH, --otactl PATH)" >&2; exit 2 ;;
  esac
done
if [[ -z "$otad" ]]; then
  swift build -c release --static-swift-stdlib --product otad --scratch-path .build-static >&2
  otad="$(swift build -c release --static-swift-stdlib --scratch-path .build-static --show-bin-path)/otad"
fi
if [[ -z "$otactl" ]]; then
  swift build -c release --product otactl >&2
  otactl="$(swift build -c release --show-bin-path)/otactl"
fi

source Scripts/otad-background.sh
mkdir -p "$work/bin"
strip -o "$work/bin/otad" "$otad"
ln -s "$otactl" "$work/bin/otactl"

symbols="$work/symbols.txt"
nm "$otad" 2>/dev/null | awk '{print $NF}' >"$symbols" || true
# ICU's own symbols: its C++ namespace (icu_76::), its versioned C functions (ucal_open_76) and data.
icu=$(grep -c -E '^_ZN6icu_[0-9]+|^u[a-z0-9]+_[A-Za-z0-9]+_[0-9]{2}$|^icudt[0-9]+_dat$' "$symbols" || true)
icu_data_hex=$(nm -S "$otad" 2>/dev/null | awk '$4 ~ /^icudt[0-9]+_dat$/ {print $2}' | head -n 1)
icu_data=$((16#${icu_data_hex:-0}))
full_foundation=$(grep -c -E '^\$s(10Foundation|30FoundationInternationalization)[0-9A-Z]' "$symbols" || true)
planning=$(swift demangle <"$symbols" | grep -c -E "SuffixArray|SuffixMatcher|LongestMatch|BlockMatcher|OperationPlan" || true)
echo "otad: $otad"
printf "  size %.1f MB, stripped %.1f MB\n" "$(echo "$(stat -c %s "$otad") / 1000000" | bc -l)" \
  "$(echo "$(stat -c %s "$work/bin/otad") / 1000000" | bc -l)"
echo "  symbols: $(wc -l <"$symbols") in all; ICU's $icu (its data table $((icu_data / 1000000)) MB);" \
  "Foundation's full library $full_foundation; delta planning $planning"

rm -rf "$work/dev" && mkdir -p "$work/dev" && cp Images/firmware-v1.bin "$work/dev/a.img"
head -c $((64 << 20)) /dev/urandom >"$work/big.img"
otad_start "$work/bin" "$work/dev/sock" "$work/otad.log" --slot-a "$work/dev/a.img" \
  --slot-b "$work/dev/b.img" --capacity 64MiB --state-dir "$work/dev/state" --log-level warning
at_start="$(awk '/VmHWM/ {print $2}' "/proc/$otad_pid/status")"
"$work/bin/otactl" push "$work/big.img" --version 9.0.0 --no-activate --json --device "$work/dev/sock" \
  --link "mtu=517,interval=7.5ms,packets=64,queue=128,pace=off" | tail -n 1 >"$work/big.json"
peak="$(awk '/VmHWM/ {print $2}' "/proc/$otad_pid/status")"
otad_stop
python3 - "$at_start" "$peak" "$(cat "$work/big.json")" <<'PY'
import json, sys
at_start, peak, result = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
assert result["ok"], result
print(f"  VmHWM at start {at_start/1024:.1f} MiB, after receiving 64 MiB {peak/1024:.1f} MiB")
PY
