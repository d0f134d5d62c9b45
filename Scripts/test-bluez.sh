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
# same VM, `otactl gateway` on hci3 serves the three as targets of goosebit, which runs HERE on the
# host (installed here first, on a free port of 127.0.0.1, with the 3.0.0+0 release uploaded and
# one rollout made before the VM boots), reached by the guest through run.sh --forward-host-port
# (qemu's user-mode network with restrict=on: nothing else leaves the guest), as a gateway on a
# real Pi reaches a remote server. The guest checks what the devices say, this script what
# goosebit says after the VM ended: "PASS gateway: ..." lines, one "gateway: N passed, M failed"
# line for both, and GATEWAY-VM seconds.
# Prints the figures of each run. Part of Scripts/test.sh; also runnable by hand.
#
# BLUEOTA_BIN=DIR: use the otad and otactl in DIR (release builds) instead of building them here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

# Release builds: the figures are the ones a device would see (a debug build's CPU bounds them).
if [[ -n "${BLUEOTA_BIN:-}" ]]; then
  bin="$(cd "$BLUEOTA_BIN" && pwd)"
  [[ -x "$bin/otad" && -x "$bin/otactl" ]] || { echo "test-bluez: no otad and otactl in BLUEOTA_BIN=$BLUEOTA_BIN" >&2; exit 2; }
  echo "test-bluez: otad and otactl from BLUEOTA_BIN=$bin (not built here)"
else
  # In the background: on a clean clone this build takes about seven minutes, and the host's
  # installs below (smpclient, imgtool and goosebit venvs from PyPI, the signed SMP image) need
  # neither otad nor otactl; they run while it builds. Its messages follow once it is done.
  build_log="$(mktemp)"
  # No debug information: the same machine code, less to compile and link (test-bootloaders.sh builds
  # with the same flags, so it finds this build done).
  { swift build -c release -debug-info-format none --product otad >/dev/null &&
    swift build -c release -debug-info-format none --product otactl >/dev/null; } \
    2>"$build_log" &
  build_pid=$!
fi
# Step 11's MCUmgr client (smpclient with bleak, its own venv) and the image it uploads: 256 KiB,
# signed by imgtool with the test key, version 4.0.0 (the guest's root is the host's: it reads both).
# 256 KiB, not 1 MiB: smpclient's upload runs at 7-14 kB/s here, and a quarter of the bytes saves
# nearly three minutes of the test command for the same figure.
blueota_install_smpclient
# Step 13's Nordic Legacy DFU clients (nrf-ota, adafruit-nrfutil), their own venv.
blueota_install_nordic_clients
# Step 14's Secure DFU client and packager: Nordic's nrfutil, its own venv.
blueota_install_nrfutil
# Step 16's MCUmgr command line: smpmgr, its own venv (smpclient and bleak as step 11's).
blueota_install_smpmgr
blueota_install_imgtool
# The multi run's gateway step: goosebit on the host, from its venv (.build-goosebit) ...
# shellcheck source=Scripts/fleet/goosebit.sh
source Scripts/fleet/goosebit.sh
goosebit_install
# ... and its empty schema, which goosebit_start copies instead of running aerich.
[[ -s "$goosebit_venv/schema-$goosebit_version.sqlite3" ]] || goosebit_make_schema "$goosebit_venv/schema-$goosebit_version.sqlite3"
smp_image="$PWD/.build-smpclient/smp-4.0.0-256KiB.bin"
if [[ ! -s "$smp_image" ]]; then
  head -c 262144 Images/raw-1MiB.bin >"$smp_image.raw"
  "$BLUEOTA_IMGTOOL" sign --key Images/keys/test-ed25519.pem --header-size 0x20 \
    --pad-header --slot-size 0x200000 --version 4.0.0 "$smp_image.raw" "$smp_image" >/dev/null
  rm -f "$smp_image.raw"
fi
if [[ -n "${build_pid:-}" ]]; then
  build_status=0
  wait "$build_pid" || build_status=$?
  cat "$build_log" >&2
  rm -f "$build_log"
  ((build_status == 0)) || { echo "test-bluez: swift build -c release failed (exit $build_status)" >&2; exit 1; }
  bin="$(swift build -c release --show-bin-path)"
fi
# Step 5b's and step 8's raw L2CAP client, built here for the guest (whose root is this host's: the
# same headers and libc) instead of by `cc` in the guest, which takes about 9 s under emulation.
l2cap_raw="${BLUEOTA_VM_CACHE:-$HOME/.cache/blueota-vm}/l2cap-raw"
mkdir -p "$(dirname "$l2cap_raw")"
# (Built beside and renamed over it: another run's guest may be copying the one there.)
cc -O2 -o "$l2cap_raw.$$" Scripts/bluez/l2cap-raw.c && mv -f "$l2cap_raw.$$" "$l2cap_raw" ||
  { echo "test-bluez: Scripts/bluez/l2cap-raw.c does not build" >&2; exit 1; }
status=0
# Each VM run is one test: the counting line at the end is what Scripts/test.sh reads.
runs_passed=0
runs_failed=0
for eatt in on off; do
  scope=all
  [[ "$eatt" == on ]] || scope=bearer
  # The EATT-off run also does steps 13, 14 and 16, whose clients are Python under emulation (step
  # 16 took 4 minutes on a host loaded by other builds): more time for its VM.
  vm_timeout=660
  [[ "$eatt" == on ]] || vm_timeout=900
  echo "== real BlueZ in a VM, EATT $eatt (guest-e2e.sh scope $scope)"
  run=0
  for attempt in 1 2; do
    run=0
    Scripts/vm/run.sh Scripts/bluez/guest-e2e.sh --eatt "$eatt" --env "BLUEOTA_E2E_SCOPE=$scope" --env "BLUEOTA_BIN=$bin" \
      --env "BLUEOTA_SMPCLIENT_PYTHON=$BLUEOTA_SMPCLIENT_PYTHON" --env "BLUEOTA_SMP_IMAGE=$smp_image" \
      --env "BLUEOTA_NORDIC_PYTHON=$BLUEOTA_NORDIC_PYTHON" --env "BLUEOTA_NRFUTIL_PYTHON=$BLUEOTA_NRFUTIL_PYTHON" \
      --env "BLUEOTA_SMPMGR=$BLUEOTA_SMPMGR" --env "BLUEOTA_L2CAP_RAW=$l2cap_raw" --timeout "$vm_timeout" \
      >"/tmp/blueota-bluez-$eatt.log" 2>&1 || run=$?
    # 125: the harness itself failed (the VM or the stack did not come up): once more. A test
    # failure is never retried.
    ((run == 125 && attempt == 1)) || break
    echo "the VM did not come up; trying once more"
  done
  if ((run == 0)); then
    grep -E "^FIGURES|^DEVICE|resume\"|advertising after|cut the link|\"stage\": \"done\"|^12[a-e] |^13 |^14[abc] |^16[a-d]? |^(PASS|FAIL) hold: |^  (run [0-9]|after run) |warning: bluetoothd exited|^journal: |^[0-9] otad: image check" "/tmp/blueota-bluez-$eatt.log" || true
    echo "EATT $eatt: PASS"
    runs_passed=$((runs_passed + 1))
  else
    status=$run
    # The checks that failed first (the tail below may have scrolled past them), then the tail.
    grep -E '^FAIL' "/tmp/blueota-bluez-$eatt.log" | head -n 10 || true
    tail -n 60 "/tmp/blueota-bluez-$eatt.log"
    echo "EATT $eatt: FAIL (exit $run; whole log: /tmp/blueota-bluez-$eatt.log)"
    runs_failed=$((runs_failed + 1))
  fi
done

# Several devices at once: four controllers (run.sh then runs its patched btvirt, which can hold
# three links from one central: Scripts/vm/build-btvirt.sh), one push to three otads, EATT on
# (bluetoothd's default). Its step 6's gateway reaches goosebit on the host.
echo "== real BlueZ in a VM, several devices at once (4 controllers, EATT on)"
gb_work="/tmp/blueota-bluez-goosebit"
gb_dir="$gb_work/server"
admin() { "$goosebit_venv/bin/python" Scripts/fleet/goosebit_admin.py "$@"; }
stop_goosebit() { goosebit_stop "$gb_dir" 2>/dev/null || true; }
trap stop_goosebit EXIT
gw_version="3.0.0+0"
# goosebit, fresh for each boot of the VM (a boot that failed may have left devices in it), on a free
# port of 127.0.0.1, with the release uploaded and one rollout; false with a message when it failed.
goosebit_ready() {
  stop_goosebit
  rm -rf "$gb_dir"
  local port
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')" || return 1
  GOOSEBIT_DB_TEMPLATE="$goosebit_venv/schema-$goosebit_version.sqlite3" goosebit_start "$gb_dir" "$port" ||
    { echo "goosebit did not start on the host: $(tail -n 5 "$gb_dir/goosebit.log" 2>/dev/null)"; return 1; }
  local software
  software="$(admin upload "$gb_work/gw.swu")" || { echo "goosebit did not take the .swu"; return 1; }
  admin rollout --software "$software" --name vm >/dev/null || { echo "goosebit made no rollout"; return 1; }
  gb_port="$port"
  echo "goosebit on $GOOSEBIT_URL (host), software $software, one rollout"
}
# The release: 128 KiB, an MCUboot image 3.0.0+0 packed for the VM's board (its otads run with
# --model blueota-vm --hardware-revision 1.0).
rm -rf "$gb_work"
mkdir -p "$gb_work"
head -c 131072 Images/raw-1MiB.bin >"$gb_work/gw-payload.bin"
run=0
if ! "$bin/otactl" image create "$gb_work/gw-payload.bin" "$gb_work/gw.img" --version "$gw_version" >/dev/null ||
   ! "$bin/otactl" image pack "$gb_work/gw.img" "$gb_work/gw.swu" --board blueota-vm --revision 1.0 >/dev/null; then
  echo "otactl image create / image pack could not make the $gw_version .swu"
  run=1
fi
for attempt in 1 2; do
  ((run == 0)) || break
  goosebit_ready >/tmp/blueota-bluez-multi.log 2>&1 || { run=1; cat /tmp/blueota-bluez-multi.log; break; }
  Scripts/vm/run.sh Scripts/bluez/guest-multi.sh --controllers 4 --env "BLUEOTA_BIN=$bin" --timeout 600 \
    --forward-host-port "$gb_port" >>/tmp/blueota-bluez-multi.log 2>&1 || run=$?
  # 125: the harness failed (as above): once more. A test failure is never retried.
  ((run == 125 && attempt == 1)) || break
  echo "the VM did not come up; trying once more"
  run=0
done

# What goosebit says, checked here after the VM ended; the guest checked the devices ("gateway in
# the VM: N passed, M failed"). Both go into one "gateway: N passed, M failed" line.
gw_passes=0
gw_failures=0
gw_vm_line="$(grep -E '^gateway in the VM: [0-9]+ passed, [0-9]+ failed' /tmp/blueota-bluez-multi.log | tail -n 1 || true)"
: >"$gb_work/checks.out"
if [[ -n "$gw_vm_line" ]]; then
  exec 3>&1 >"$gb_work/checks.out"
  check() { gateway_check "$@"; }
  admin devices >"$gb_work/goosebit-devices.json" || echo "goosebit_admin.py devices failed"
  admin rollouts >"$gb_work/goosebit-rollouts.json" || echo "goosebit_admin.py rollouts failed"
  json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@" 2>/dev/null; }
  gb_state() { # id field
    json "$gb_work/goosebit-devices.json" "([d for d in j if d['id'] == '$1'] or [{}])[0].get('$2')"
  }
  gb_log() { admin device "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("log") or "")'; }
  for i in 0 2; do
    check "vm-M$i: goosebit shows it finished on $gw_version" \
      test "$(gb_state "vm-M$i" last_state) $(gb_state "vm-M$i" sw_version)" = "Finished $gw_version"
  done
  m1_log="$(gb_log vm-M1 || true)"
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
  check "vm-M1: goosebit shows the error with the device's reason (health check failed)" \
    bash -c '[[ "$1" == Error && "$2" == *"health check failed"* ]]' _ "$(gb_state vm-M1 last_state)" "$m1_log"
  check "the rollout counts each result once: 2 successes, 1 failure" \
    test "$(json "$gb_work/goosebit-rollouts.json" "(j[0]['success_count'], j[0]['failure_count'])")" = "(2, 1)"
  check "goosebit read each device's hardware from its config data (blueota-vm 1.0)" \
    test "$(json "$gb_work/goosebit-devices.json" "sorted((d['id'], (d['hardware'] or {}).get('model'), (d['hardware'] or {}).get('revision')) for d in j)")" \
    = "[('vm-M0', 'blueota-vm', '1.0'), ('vm-M1', 'blueota-vm', '1.0'), ('vm-M2', 'blueota-vm', '1.0')]"
  read -r vm_passes vm_failures < <(echo "$gw_vm_line" | awk '{ print $5, $7 }')
  gw_passes=$((gw_passes + vm_passes))
  gw_failures=$((gw_failures + vm_failures))
  echo "gateway: $gw_passes passed, $gw_failures failed"
  exec >&3 3>&-
  cp "$gb_dir/goosebit.log" "$gb_work/goosebit.log" 2>/dev/null || true
fi
stop_goosebit
if ((run == 0)); then
  grep -E '^FIGURES multi|"event":"summary"|otad \(kill -9\)|^BlueOTA-M[0-9]: ok|^(PASS|FAIL) (gateway|one central)|^GATEWAY-VM|^gateway in the VM: |run.sh: PASS|warning: bluetoothd exited' \
    /tmp/blueota-bluez-multi.log || true
else
  grep -E '^FAIL' /tmp/blueota-bluez-multi.log | head -n 10 || true
  tail -n 60 /tmp/blueota-bluez-multi.log
fi
# goosebit's side, after the guest's.
cat "$gb_work/checks.out"
if ((run == 0 && gw_failures > 0)); then
  run=1
  echo "goosebit does not say what the gateway did (goosebit.log and its JSON in $gb_work)"
fi
if ((run == 0)); then
  echo "several devices: PASS"
  runs_passed=$((runs_passed + 1))
else
  status=$run
  echo "several devices: FAIL (exit $run; whole log: /tmp/blueota-bluez-multi.log; goosebit: $gb_work)"
  runs_failed=$((runs_failed + 1))
fi
echo "real BlueZ: $runs_passed passed, $runs_failed failed"
exit "$status"
