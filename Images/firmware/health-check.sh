#!/bin/sh
# The sample health check: otad runs it when a slot starts on trial. It takes the new firmware out of
# the slot (the payload of the MCUboot image, where otad's environment says it is) and runs its
# self-test. Exit 0 keeps the new firmware; anything else rolls it back.
#
#   OTAD_SLOT_PATH       the slot's file or partition
#   OTAD_PAYLOAD_OFFSET  where the firmware starts in it (past the MCUboot header)
#   OTAD_PAYLOAD_SIZE    its length
#   OTAD_VERSION, OTAD_SLOT, OTAD_IMAGE_SIZE  for the log
set -eu
firmware="$(mktemp)"
trap 'rm -f "$firmware"' EXIT
tail -c "+$((OTAD_PAYLOAD_OFFSET + 1))" "$OTAD_SLOT_PATH" | head -c "$OTAD_PAYLOAD_SIZE" >"$firmware"
echo "health check: slot $OTAD_SLOT, firmware $OTAD_VERSION ($OTAD_PAYLOAD_SIZE bytes)"
exec sh "$firmware" --self-test
