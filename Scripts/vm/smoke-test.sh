#!/usr/bin/env bash
# Guest test: proves the BlueZ stack in the harness VM works end to end with nothing but what
# Debian ships (no project code). Run it through the harness:
#
#   Scripts/vm/run.sh Scripts/vm/smoke-test.sh [--eatt off]
#
# A GATT peripheral on hci0 (RegisterApplication + RegisterAdvertisement) is discovered from hci1,
# connected, its services resolved, written and read back: see smoke_gatt.py. Prints PASS and the
# times; exits 0 on success.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ "${BLUEOTA_VM:-}" != 1 ]]; then
  echo "smoke-test: runs inside the harness VM: Scripts/vm/run.sh $0" >&2
  exit 2
fi

echo "smoke-test: bluetoothd $(/usr/libexec/bluetooth/bluetoothd --version), kernel $(uname -r)," \
     "bluetoothd args: $(cat "$GUEST_RESULTS/bluetoothd.cmdline" 2>/dev/null || echo '?')"
# -B: write no .pyc next to the script (the host's root is read-only in the guest anyway).
exec timeout 90 python3 -B "$here/smoke_gatt.py"
