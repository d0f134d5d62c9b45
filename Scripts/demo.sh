#!/usr/bin/env bash
# The demo, from a fresh Debian 12 machine: installs the Debian packages it needs, builds, and
# tells two A/B firmware updates end to end with two real processes and no Bluetooth: the device
# daemon otad (slots in files in a temporary folder) and the central otactl, talking over the
# simulated BLE link with 2% loss and one forced disconnect. The device trusts one signing key
# (Images/keys/test-ed25519.pub.pem, which signed the sample firmware).
#   0. an unsigned image is refused at VALIDATE: "signature invalid", nothing changes.
#   1. 1.0.0 -> 2.0.0: the transfer resumes after the drop, 2.0.0 boots on trial, its health check
#      (Images/firmware/health-check.sh runs the firmware's self-test) passes: confirmed.
#   2. 2.0.0 -> 3.0.0: 3.0.0's self-test fails at each of its 2 trial boots: the device rolls back
#      to 2.0.0 and otactl fails, naming the reason.
# It cleans up after itself.
#
#   Scripts/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

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

# The device: slot A holds its factory firmware 1.0.0 (the sample MCUboot image); slot B is empty.
cp Images/firmware-v1.bin "$work/slot-a.img"
device=(--slot-a "$work/slot-a.img" --slot-b "$work/slot-b.img" --capacity 64KiB --state-dir "$work/state"
  --trusted-key Images/keys/test-ed25519.pub.pem)
otad_start "$bin" "$work/device.sock" "$work/otad.log" "${device[@]}" \
  --health-check "sh Images/firmware/health-check.sh" --attempts 2 --window 8KiB --log-level info

link="mtu=247,interval=15ms,packets=6,loss=0.02,disconnect-after=20000"
slots() { "$bin/otad" status "${device[@]}" | sed 's/^/  /'; }

cat <<TEXT

BlueOTA demo: A/B firmware updates over a simulated BLE link, two processes, no radio.
  device  otad, slots in $work, listening on device.sock;
          a trial boot runs Images/firmware/health-check.sh (the new firmware's self-test), 2 boots;
          it installs only images signed by Images/keys/test-ed25519.pem (a test key)
  central otactl push Images/firmware-v2.bin, then Images/firmware-v3.bin
  link    $link
          (ATT MTU 247, a 15 ms connection interval, 2% of data packets lost,
           and the link drops once after 20000 bytes)

== the device before
TEXT
slots

echo
echo "== a push the device must refuse: an MCUboot image without a signature"
unsigned=0
"$bin/otactl" push Images/mcuboot-unsigned-4099B.bin --device "$work/device.sock" 2>&1 | cat || unsigned=$?
echo "  (otactl exit code: $unsigned)"

echo
echo "== update 1: 1.0.0 -> 2.0.0 (PREPARE, TRANSFER and a resume, VALIDATE, ACTIVATE, trial boot, VERIFY)"
first=0
# --full: v2 is a sibling of v1, and without it otactl would send only the blocks the device lacks
# (under the 20000 bytes after which the link drops): the demo shows a whole transfer and its resume.
"$bin/otactl" push Images/firmware-v2.bin --full --device "$work/device.sock" --link "$link" | cat || first=$?
echo
slots

echo
echo "== update 2: 2.0.0 -> 3.0.0, whose self-test fails (the push must fail and say why)"
second=0
"$bin/otactl" push Images/firmware-v3.bin --device "$work/device.sock" --link "mtu=247,interval=15ms,packets=6" \
  2>&1 | cat || second=$?
echo "  (otactl exit code: $second)"
echo
slots

echo
echo "== what otad logged"
grep -E "boot stage|health check|firmware|rolled back|confirmed|marked bad|restarting|PREPARE|refused the image|ACTIVATE|signed by" \
  "$work/otad.log" | sed -E 's/^[^ ]+ ([a-z]+) otad: ([^[]*)\[[A-Za-z]+\] /  \1: /; /^  [a-z]+: /!s/^/    | /' |
  head -n 40

echo
if [[ $unsigned -eq 11 && $first -eq 0 && $second -eq 7 ]]; then
  echo "demo: as expected, the unsigned image was refused, 2.0.0 was confirmed and 3.0.0 rolled back to it."
else
  echo "demo: unexpected result (pushes exited $unsigned, $first, $second; expected 11, 0 and 7)" >&2
  exit 1
fi
