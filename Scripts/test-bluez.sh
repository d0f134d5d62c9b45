#!/usr/bin/env bash
# The real-stack test: builds otad and otactl on the host, then runs Scripts/bluez/guest-e2e.sh
# inside the harness VM (Scripts/vm/run.sh: Debian's kernel, bluetoothd 5.66, two virtual LE
# controllers), once with EATT on (BlueZ's default, which reorders writes) and once with it off.
# Prints the figures of each run. Part of Scripts/test.sh; also runnable by hand.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

swift build --product otad >/dev/null
swift build --product otactl >/dev/null
bin="$(swift build --show-bin-path)"
status=0
for eatt in on off; do
  echo "== real BlueZ in a VM, EATT $eatt"
  if Scripts/vm/run.sh Scripts/bluez/guest-e2e.sh --eatt "$eatt" --env "BLUEOTA_BIN=$bin" --timeout 300 \
    >"/tmp/blueota-bluez-$eatt.log" 2>&1; then
    grep -E "^FIGURES|resume|advertising after|cut the link" "/tmp/blueota-bluez-$eatt.log" || true
    echo "EATT $eatt: PASS"
  else
    status=$?
    tail -n 60 "/tmp/blueota-bluez-$eatt.log"
    echo "EATT $eatt: FAIL (exit $status; whole log: /tmp/blueota-bluez-$eatt.log)"
  fi
done
exit "$status"
