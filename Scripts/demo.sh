#!/usr/bin/env bash
# The demo, from a fresh Debian 12 machine: installs the Debian packages it needs, builds, and
# tells one A/B firmware update end to end with two real processes and no Bluetooth: the device
# daemon otad (slots in files in a temporary folder) and the central otactl, talking over the
# simulated BLE link with 2% loss and one forced disconnect. It cleans up after itself.
#
#   Scripts/demo.sh [IMAGE]     (default: Images/mcuboot-ed25519-100KiB.bin)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

image="${1:-Images/mcuboot-ed25519-100KiB.bin}"
[[ -r "$image" ]] || { echo "demo: cannot read $image" >&2; exit 1; }

echo "== building otad and otactl"
log="$(mktemp)"
if ! swift build --product otad >"$log" 2>&1 || ! swift build --product otactl >>"$log" 2>&1; then
  cat "$log" >&2
  echo "demo: the build failed (above)" >&2
  exit 1
fi
rm -f "$log"
bin="$(swift build --show-bin-path)"

source Scripts/otad-background.sh

# The device: slot A holds its factory firmware (1.0.0); slot B is empty.
head -c 65536 Images/raw-1MiB.bin >"$work/slot-a.img"
otad_start "$bin" "$work/device.sock" "$work/otad.log" --slot-a "$work/slot-a.img" \
  --slot-b "$work/slot-b.img" --capacity 256KiB --state-dir "$work/state"

link="mtu=247,interval=15ms,packets=6,loss=0.02,disconnect-after=70000"
cat <<TEXT

BlueOTA demo: an A/B firmware update over a simulated BLE link, two processes, no radio.
  device  otad, slots in $work, listening on device.sock
  central otactl push $image
  link    $link
          (ATT MTU 247, a 15 ms connection interval, 2% of data packets lost,
           and the link drops once after 70000 bytes)

== the device before
TEXT
"$bin/otactl" info --device "$work/device.sock"

echo
echo "== the push: 1 PREPARE, 2 TRANSFER (resumes after the drop), 3 VALIDATE, 4 ACTIVATE, 5 VERIFY"
status=0
"$bin/otactl" push "$image" --device "$work/device.sock" --link "$link" | cat || status=$?

echo
echo "== the device after (it restarted into the other slot, which runs on trial until confirmed)"
"$bin/otactl" info --device "$work/device.sock"

echo
echo "== what otad logged"
grep -E "notice|PREPARE|VALIDATE|ACTIVATE|disconnected|missing" "$work/otad.log" | sed 's/^[^ ]* /  /' | head -n 20
exit "$status"
