#!/usr/bin/env bash
# Writes the man pages of otad (section 8: a daemon), otactl and ota-lab (section 1) into DIR/man,
# made from the programs' own parsers by swift-argument-parser's GenerateManual plugin (offline: it
# builds the package and runs each program's --experimental-dump-help). Man pages are text: make
# them on any machine with the sources, and copy DIR/man beside the binaries for Scripts/rpi/install.sh
# --binaries DIR, which installs them.
#   Scripts/make-manuals.sh [--configuration debug|release] DIR   (default debug: the test build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

configuration=debug
if [[ "${1:-}" == --configuration ]]; then
  [[ $# -ge 2 ]] || { echo "make-manuals: --configuration needs debug or release" >&2; exit 64; }
  configuration="$2"
  shift 2
fi
[[ $# -eq 1 ]] || { echo "usage: Scripts/make-manuals.sh [--configuration debug|release] DIR" >&2; exit 64; }
out="$1/man"
mkdir -p "$out"

outputs=".build/plugins/GenerateManual/outputs"
# generate SECTION: every executable's page in that section (the plugin takes one for all).
generate() {
  swift package --disable-sandbox generate-manual --configuration "$configuration" --section "$1" >/dev/null ||
    { echo "make-manuals: the GenerateManual plugin failed (see above)" >&2; exit 1; }
}
generate 8
cp "$outputs/otad/otad.8" "$out/otad.8"
generate 1
cp "$outputs/otactl/otactl.1" "$outputs/ota-lab/ota-lab.1" "$out/"
echo "make-manuals: $out/otad.8, $out/otactl.1, $out/ota-lab.1"
