#!/usr/bin/env bash
# The demo, from a fresh Debian 12 machine: installs the Debian packages it needs, builds, and
# runs one A/B firmware update over a simulated BLE link (loss, reordering, a forced disconnect)
# into file-backed slots in a temporary folder, then prints what happened. No Bluetooth needed.
#
#   Scripts/demo.sh [IMAGE]     (default: Images/mcuboot-ed25519-100KiB.bin)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

log="$(mktemp)"
if ! swift build --product ota-demo >"$log" 2>&1; then
  cat "$log" >&2
  echo "demo: the build failed (above)" >&2
  exit 1
fi
rm -f "$log"
exec "$(swift build --show-bin-path)/ota-demo" "$@"
