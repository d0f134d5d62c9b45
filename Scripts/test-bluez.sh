#!/usr/bin/env bash
# The real-stack test: builds otad and otactl (release) on the host, then runs Scripts/bluez/guest-e2e.sh
# inside the harness VM (Scripts/vm/run.sh: Debian's kernel, bluetoothd 5.66, two virtual LE
# controllers), once with EATT on (BlueZ's default, which reorders writes) and once with it off.
# The EATT-off run has BLUEOTA_E2E_SCOPE=bearer: only the steps whose outcome can depend on the ATT
# bearer (guest-e2e.sh's header says which); the EATT-on run does every step.
# A third VM run, Scripts/bluez/guest-multi.sh with four controllers, has one otactl push update
# three otads at once (hci0-hci2, pushed from hci3, three links up at once): one device's self-test
# fails and rolls back, one otad is killed mid-transfer and resumes, the push exits 14 with two of
# three confirmed; its FIGURES multi line has the aggregate and per-device goodput. Then, in the
# same VM, `otactl gateway` on hci3 serves the three as targets of goosebit (run in the guest from
# the host's venv, installed here first): "PASS gateway: ..." lines and GATEWAY-VM seconds.
# Prints the figures of each run. Part of Scripts/test.sh; also runnable by hand.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

# Release builds: the figures are the ones a device would see (a debug build's CPU bounds them).
swift build -c release --product otad >/dev/null
swift build -c release --product otactl >/dev/null
bin="$(swift build -c release --show-bin-path)"
# Step 11's MCUmgr client (smpclient with bleak, its own venv) and the image it uploads: 256 KiB,
# signed by imgtool with the test key, version 4.0.0 (the guest's root is the host's: it reads both).
# 256 KiB, not 1 MiB: smpclient's upload runs at 7-14 kB/s here, and a quarter of the bytes saves
# nearly three minutes of the test command for the same figure.
blueota_install_smpclient
blueota_install_imgtool
# The multi run's gateway step runs goosebit in the guest from the host's venv (.build-goosebit).
# shellcheck source=Scripts/fleet/goosebit.sh
source Scripts/fleet/goosebit.sh
goosebit_install
# ... and its empty schema, which the guest copies instead of running aerich (a minute under emulation).
[[ -s "$goosebit_venv/schema-$goosebit_version.sqlite3" ]] || goosebit_make_schema "$goosebit_venv/schema-$goosebit_version.sqlite3"
smp_image="$PWD/.build-smpclient/smp-4.0.0-256KiB.bin"
if [[ ! -s "$smp_image" ]]; then
  head -c 262144 Images/raw-1MiB.bin >"$smp_image.raw"
  "$BLUEOTA_IMGTOOL" sign --key Images/keys/test-ed25519.pem --header-size 0x20 \
    --pad-header --slot-size 0x200000 --version 4.0.0 "$smp_image.raw" "$smp_image" >/dev/null
  rm -f "$smp_image.raw"
fi
status=0
for eatt in on off; do
  scope=all
  [[ "$eatt" == on ]] || scope=bearer
  echo "== real BlueZ in a VM, EATT $eatt (guest-e2e.sh scope $scope)"
  run=0
  for attempt in 1 2; do
    run=0
    Scripts/vm/run.sh Scripts/bluez/guest-e2e.sh --eatt "$eatt" --env "BLUEOTA_E2E_SCOPE=$scope" --env "BLUEOTA_BIN=$bin" \
      --env "BLUEOTA_SMPCLIENT_PYTHON=$BLUEOTA_SMPCLIENT_PYTHON" --env "BLUEOTA_SMP_IMAGE=$smp_image" --timeout 660 \
      >"/tmp/blueota-bluez-$eatt.log" 2>&1 || run=$?
    # 125: the harness itself failed (the VM or the stack did not come up): once more. A test
    # failure is never retried.
    ((run == 125 && attempt == 1)) || break
    echo "the VM did not come up; trying once more"
  done
  if ((run == 0)); then
    grep -E "^FIGURES|^DEVICE|resume\"|advertising after|cut the link|\"stage\": \"done\"" "/tmp/blueota-bluez-$eatt.log" || true
    echo "EATT $eatt: PASS"
  else
    status=$run
    tail -n 60 "/tmp/blueota-bluez-$eatt.log"
    echo "EATT $eatt: FAIL (exit $run; whole log: /tmp/blueota-bluez-$eatt.log)"
  fi
done

# Several devices at once: four controllers (run.sh then runs its patched btvirt, which can hold
# three links from one central: Scripts/vm/build-btvirt.sh), one push to three otads, EATT on
# (bluetoothd's default).
echo "== real BlueZ in a VM, several devices at once (4 controllers, EATT on)"
run=0
for attempt in 1 2; do
  run=0
  Scripts/vm/run.sh Scripts/bluez/guest-multi.sh --controllers 4 --env "BLUEOTA_BIN=$bin" --timeout 600 \
    >/tmp/blueota-bluez-multi.log 2>&1 || run=$?
  # 125: the harness failed (as above): once more. A test failure is never retried.
  ((run == 125 && attempt == 1)) || break
  echo "the VM did not come up; trying once more"
done
if ((run == 0)); then
  grep -E '^FIGURES multi|"event":"summary"|otad \(kill -9\)|^BlueOTA-M[0-9]: ok|^(PASS|FAIL) gateway|^GATEWAY-VM|^gateway: |run.sh: PASS' \
    /tmp/blueota-bluez-multi.log || true
  echo "several devices: PASS"
else
  status=$run
  tail -n 60 /tmp/blueota-bluez-multi.log
  echo "several devices: FAIL (exit $run; whole log: /tmp/blueota-bluez-multi.log)"
fi
exit "$status"
