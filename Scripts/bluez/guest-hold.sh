#!/usr/bin/env bash
# guest-e2e.sh step 16, the device has a say (issue 47; docs/OTAD.md, "The device has a say"):
# activations held on the device, through bluetoothd, with the world's own clients. A fresh device
# serving SMP and Legacy DFU (and Secure DFU for c), otad run with --lock-dir:
#   a. an update lock held by `otad inhibit -- sleep`: smpmgr's upgrade (upload to slot 1, test)
#      gets rc 10 at the test; otad status shows the upload validated and its activation kept, held
#      by the lock; the device runs what it ran. The lock released (its command ends), otad
#      activates on its own once nothing holds it (SMP's session ends when smpmgr disconnects,
#      [S-ONE-2]) and restarts; its health check confirms the trial, and smpmgr's
#      image list shows the new image in slot 0, active and confirmed
#   b. the same with nrf-ota (Legacy DFU): ACTIVATE AND RESET is answered [0x10, 0x05, 0x06] (nrf-ota
#      does not read the answer: it reports success), the image kept; the lock released, activated
#      within seconds, the trial confirmed by its health check
#   c. the same with nrfutil's Secure DFU client: the last EXECUTE is answered 0x08 (operation not
#      permitted), nrfutil fails; the lock released, activated and confirmed
#   d. otad restarted with --require-consent, the owner having declined the version (otad consent
#      decline): smpmgr's test gets rc 11 and the uploaded image is dropped. The device ends on a
#      good image (c's, confirmed).
# Each check prints a "PASS hold: ..." or "FAIL hold: ..." line; a sub-step with a failed check
# ends the step (FAIL). What each client printed goes to the output ("16x <client> printed: ...").
# Runs where bluetoothd has one ATT bearer ([GATT] Channels = 1, test-bluez.sh's EATT-off run):
# Nordic's DFU packets carry no offsets, and smpmgr, unchanged, sends a request in MTU-sized pieces
# that EATT's several bearers deliver out of order (docs/SMP.md).
#
# Sourced by guest-e2e.sh (its helpers, its central and the device's address); also runnable alone:
#   Scripts/vm/run.sh Scripts/bluez/guest-hold.sh --eatt off --timeout 300 --env BLUEOTA_BIN=DIR \
#     --env BLUEOTA_SMPMGR=.../.build-smpmgr/bin/smpmgr --env BLUEOTA_NORDIC_PYTHON=... \
#     --env BLUEOTA_NRFUTIL_PYTHON=...
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  # Alone: what guest-e2e.sh would have given.
  set -euo pipefail
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  root="$(cd "$here/../.." && pwd)"
  # shellcheck source=Scripts/lib/guest.sh
  source "$root/Scripts/lib/guest.sh" guest-hold # bin, results, central, work; step, fail, discovering
  : >>"$results/otad.log"
  address="$(busctl get-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Address | cut -d'"' -f2)"
  grep -q "Channels = 1" "$results/main.conf" 2>/dev/null || fail "step 16 needs one ATT bearer: run.sh --eatt off"
fi

step "16. the device has a say: activations held by an update lock and by the owner, through smpmgr, nrf-ota and nrfutil"
hold_started="$(now)"
smpmgr_python="${BLUEOTA_SMPMGR:?BLUEOTA_SMPMGR names smpmgr in its venv (Scripts/setup.sh)}"
smpmgr_python="${smpmgr_python%/smpmgr}/python"
nordic_python="${BLUEOTA_NORDIC_PYTHON:?BLUEOTA_NORDIC_PYTHON names the python of the Nordic venv (Scripts/setup.sh)}"
nrfutil_python="${BLUEOTA_NRFUTIL_PYTHON:?BLUEOTA_NRFUTIL_PYTHON names the python of the nrfutil venv (Scripts/setup.sh)}"
nrfutil="${nrfutil_python%/python}/nrfutil"

hold_passes=0
hold_failures=0
# hold_check NAME COMMAND...: one PASS or FAIL line, counted; hold_verdict WHAT ends the step on a failure.
hold_check() {
  local name="$1"
  shift
  if "$@"; then
    echo "PASS hold: $name"
    hold_passes=$((hold_passes + 1))
  else
    echo "FAIL hold: $name"
    hold_failures=$((hold_failures + 1))
  fi
}
# hold_equal NAME EXPECTED ACTUAL: a check that ACTUAL is EXPECTED; a failure says what it was.
hold_equal() {
  hold_check "$1" test "$3" = "$2"
  [[ "$3" == "$2" ]] || echo "  expected: $2; got: $3"
}
hold_verdict() { ((hold_failures == 0)) || fail "16$1: $hold_failures check(s) failed"; }

# The lock's holder, `otad inhibit` over a sleep: stopped on the way out whatever happens.
# (And the background job that makes the Nordic packages.)
inhibit=""
hold_packages=""
hold_cleanup() {
  if [[ -n "$inhibit" ]]; then
    # shellcheck disable=SC2046 # the pids are words
    kill $(cat "/proc/$inhibit/task/$inhibit/children" 2>/dev/null) "$inhibit" 2>/dev/null
  fi
  [[ -z "$hold_packages" ]] || kill "$hold_packages" 2>/dev/null
  return 0
}
trap hold_cleanup EXIT

head -c 65536 "$root/Images/raw-1MiB.bin" >"$work/hold-a.img"
hold_storage=(--slot-a "$work/hold-a.img" --slot-b "$work/hold-b.img" --capacity 2MiB --state-dir "$work/hold-state")
locks="$work/hold-locks"
mkdir -p "$locks"
# Only this step's lines of otad's log (guest-e2e.sh's otads wrote there before).
hold_from=$(($(wc -l <"$results/otad.log") + 1))
hold_log() { tail -n +"$hold_from" "$results/otad.log"; }
in_log() { hold_log | grep -q -- "$1"; }
# Microseconds, read without a process (bash's clock), for deadlines and the times told.
clock() { echo "${EPOCHREALTIME/./}"; }
seconds_since() { awk -v a="$1" -v b="$(clock)" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
# wait_log TEXT SECONDS: true once otad's log (this step's part) has TEXT, within SECONDS.
wait_log() {
  local deadline=$(($(clock) + $2 * 1000000))
  until in_log "$1"; do
    (($(clock) < deadline)) || return 1
    sleep 0.1
  done
}
hold_status_json() { "$bin/otad" status "${hold_storage[@]}" --lock-dir "$locks" --json; }
# hold_status PYTHON-EXPRESSION over `otad status --json` (s): its value printed.
hold_status() { hold_status_json | /usr/bin/python3 -c "import json,sys; s=json.load(sys.stdin); print(($1))"; }
# The kept activation's version and what holds it: ('V', 'an update lock'), or (None, None).
kept_activation() { hold_status '(s["activation"].get("kept") or {}).get("version"), (s["activation"].get("kept") or {}).get("hold")'; }
running_version() { hold_status '[x["version"] for x in s["slots"] if x["running"]][0]'; }

# The images: MCUboot images for SMP (otactl image create: a SHA-256 TLV, which smpmgr needs; otad
# trusts no key here), a Legacy DFU package by adafruit-nrfutil, a Secure DFU package signed by
# nrfutil with a key whose public half otad holds (step 14's when it ran, else a new one). The
# Nordic ones cost several Python starts under emulation: made in the background while 16a runs.
head -c 300000 "$root/Images/raw-1MiB.bin" | tail -c 20000 >"$work/hold-6.raw"
head -c 400000 "$root/Images/raw-1MiB.bin" | tail -c 20000 >"$work/hold-9.raw"
"$bin/otactl" image create "$work/hold-6.raw" "$work/hold-6.img" --version 6.0.0 >/dev/null &&
  "$bin/otactl" image create "$work/hold-9.raw" "$work/hold-9.img" --version 9.0.0 >/dev/null ||
  fail "16: otactl image create failed"
head -c 500000 "$root/Images/raw-1MiB.bin" | tail -c 12000 >"$work/hold-7.bin"
head -c 600000 "$root/Images/raw-1MiB.bin" | tail -c 12000 >"$work/hold-8.bin"
(
  set -e
  timeout 120 "${nordic_python%/python}/adafruit-nrfutil" dfu genpkg --application "$work/hold-7.bin" \
    --application-version 0x07000000 --dev-type 0x0052 "$work/hold-7.zip"
  if [[ ! -s "$work/secure-key.pem" || ! -s "$work/secure-key.pub.pem" ]]; then
    timeout 120 "$nrfutil" keys generate "$work/secure-key.pem"
    timeout 120 "$nrfutil" keys display --key pk --format pem "$work/secure-key.pem" >"$work/secure-key.pub.pem"
  fi
  timeout 120 "$nrfutil" pkg generate --hw-version 52 --sd-req 0x00 --application "$work/hold-8.bin" \
    --application-version 0x08000000 --key-file "$work/secure-key.pem" "$work/hold-8.zip"
) >"$work/hold-packages.log" 2>&1 &
hold_packages=$!
# packages_made: the background job done (each of its commands has a deadline), or the step fails.
packages_made() {
  [[ -n "$hold_packages" ]] || return 0
  wait "$hold_packages" || fail "16: the Nordic packages could not be made: $(tail -n 3 "$work/hold-packages.log")"
  hold_packages=""
}

# start_hold_otad [OPTIONS...]: the device, serving SMP (always on) and Legacy DFU, reading the
# lock directory, with OPTIONS; until it advertises.
start_hold_otad() {
  local seen
  if [[ -n "${otad:-}" ]]; then
    kill "$otad" 2>/dev/null || true
    wait "$otad" || true
  fi
  seen="$(registered)"
  "$bin/otad" run --adapter hci0 --name BlueOTA-VM "${hold_storage[@]}" --log-level debug --lock-dir "$locks" \
    --legacy-dfu "$@" >>"$results/otad.log" 2>&1 &
  otad=$!
  for _ in $(seq 300); do (("$(registered)" > seen)) && return 0; sleep 0.05; done
  fail "16: otad with --lock-dir did not advertise"
}
# hold_lock NAME WHY: `otad inhibit` holds the lock NAME while its command (a sleep) runs.
hold_lock() {
  "$bin/otad" inhibit --why "$2" --who "$1" --lock-dir "$locks" -- sleep 600 &
  inhibit=$!
  for _ in $(seq 100); do [[ -s "$locks/$1.lock" ]] && return 0; sleep 0.05; done
  fail "16: otad inhibit made no lock file in 5 s"
}
# release_lock NAME: the held command ends (its sleep stopped); otad inhibit removes the lock and
# exits. Sets `released` to the time.
release_lock() {
  local children
  children="$(cat "/proc/$inhibit/task/$inhibit/children" 2>/dev/null || true)"
  [[ -n "$children" ]] || fail "16: otad inhibit runs no command"
  # shellcheck disable=SC2086 # the children's pids are words
  kill $children
  released="$(clock)"
  wait "$inhibit" || true
  inhibit=""
  hold_check "the lock $1 released: otad inhibit removed its file when its command ended" test ! -e "$locks/$1.lock"
}
# carried_out VERSION [FREE]: otad's own activation once nothing holds it (the lock released, and
# the moment FREE when given, a clock() value: SMP's session ends when its client disconnects,
# [S-ONE-2]): the kept activation carried out within 5 s of that (otad looks every second), the
# restart, the new image on trial and its health check's verdict.
carried_out() {
  local free="${2:-$released}" left
  ((free > released)) || free="$released"
  left=$(((free - $(clock)) / 1000000 + 5))
  ((left > 5)) && echo "  (the lock released; SMP's client gone $((left - 5)) s from now)"
  hold_check "otad carried out the kept activation of $1 on its own within 5 s of nothing holding it" \
    wait_log "the kept activation of $1+0 was carried out" "$left"
  echo "  otad: $(hold_log | grep -o "the kept activation of $1+0 was carried out.*" | head -n 1)," \
    "$(seconds_since "$released") s after the release"
  hold_check "otad restarted into $1 on trial" wait_log "version $1+0 (on trial)" 20
  hold_check "the trial of $1 was confirmed by its health check" wait_log "firmware $1+0 confirmed after 1 boot(s)" 20
}
# smpmgr_run NAME SMPMGR-ARGUMENTS...: smpmgr once (output in smpmgr-NAME.txt); its exit code in
# smpmgr_rc. A connection that failed before anything was sent is tried once more (the virtual
# controllers' lost advertising reports: see step 1).
smpmgr_run() {
  local name="$1" try began
  shift
  began="$(clock)"
  for try in 1 2; do
    smpmgr_rc=0
    timeout 120 "$smpmgr_python" -B "$here/smpmgr_ble.py" "$central" --ble "$address" --timeout 20 "$@" \
      >"$results/smpmgr-$name.txt" 2>&1 </dev/null || smpmgr_rc=$?
    grep -qE "Connecting to .* error|not found|Traceback" "$results/smpmgr-$name.txt" || break
    ((try == 1)) || break
    echo "  smpmgr's connection failed ($name, exit $smpmgr_rc): $(tail -n 1 "$results/smpmgr-$name.txt"); once more"
    mv "$results/smpmgr-$name.txt" "$results/smpmgr-$name-1.txt"
  done
  smpmgr_ended="$(clock)"
  echo "  smpmgr $* ($name): exit $smpmgr_rc after $(seconds_since "$began") s"
}
# What a client printed, without its progress bars and spinners.
printed() { tr '\r' '\n' <"$1" | grep -v -e "%" -e "^ *$" -e "━" | sed 's/^ *//' | tail -n "${2:-3}"; }
# What smpmgr said about its requests: the state write's line, the error and its code, the end.
smpmgr_said() {
  tr '\r' '\n' <"$1" | grep -E "Marking|ErrorV|rc=|Upgrade complete" | sed 's/^[^A-Za-z]*//' | tr '\n' ' '
}
# smp_images FILE: each image as smpmgr's image state-read printed it (rich spreads one over several
# lines), one line each: "slot N VERSION", then the flags that are true of pending, confirmed, active.
smp_images() {
  /usr/bin/python3 -c 'import re, sys
text = re.sub(r"\s+", " ", open(sys.argv[1]).read())
for image in re.findall(r"ImageState\((.*?)\)(?= ImageState|$| splitStatus)", text):
    fields = dict(re.findall(r"(\w+)=\x27?([\w.]+)", image))
    print("slot", fields.get("slot"), fields.get("version"),
          *[flag for flag in ("pending", "confirmed", "active") if fields.get(flag) == "True"])' "$1"
}

start_hold_otad
hold_check "the device runs its factory image in slot A before step 16" test "$(hold_status 's["running"]')" = A

# a. SMP: the test answered rc 10 while a lock holds, carried out by the device once it goes.
step "16a. an update lock (otad inhibit) holds smpmgr's upgrade"
hold_lock print-job "printing job 17"
# [S-HOLD-1]: smpmgr's test of the uploaded image answered rc 10 (MGMT_ERR_EBUSY) while an update
# lock holds; the activation kept and carried out by the device itself once nothing holds it.
smpmgr_run upgrade-held upgrade --slot 1 "$work/hold-6.img"
echo "16a smpmgr upgrade printed (exit $smpmgr_rc): $(smpmgr_said "$results/smpmgr-upgrade-held.txt")"
hold_check "smpmgr's upgrade failed at the test (exit $smpmgr_rc, not 0)" test "$smpmgr_rc" -ne 0
hold_check "smpmgr printed rc 10 (EBUSY) for the test" grep -qE "EBUSY|rc=10\b|'rc': 10\b" "$results/smpmgr-upgrade-held.txt"
hold_equal "otad status: the upload went whole and was validated (receiving is never held)" "('validated', '6.0.0+0', 'B')" \
  "$(hold_status 's["transfer"]["state"], s["transfer"]["version"], s["transfer"]["slot"]')"
hold_equal "otad status: the lock print-job holds (printing job 17)" "[('holding', 'printing job 17')]" \
  "$(hold_status '[(l["state"], l["reason"]) for l in s["activation"]["locks"]]')"
hold_equal "otad status: 6.0.0's activation kept, held by an update lock" "('6.0.0+0', 'an update lock')" \
  "$(kept_activation)"
"$bin/otad" status "${hold_storage[@]}" --lock-dir "$locks" | grep -E "^activation|^  (lock |kept activation)" | sed 's/^ */  otad status: /'
hold_equal "the device still runs its factory image in slot A, nothing armed" "('A', False, None)" \
  "$(hold_status 's["running"], s["onTrial"], s.get("trial")')"
hold_verdict a
# What smpmgr's image list shows while the activation waits: the uploaded image in slot 1, neither
# pending nor active. (A read holds nothing: SMP's session was the upload's, and ended when that
# smpmgr disconnected; the reader's own connection is gone when smpmgr exits.)
smpmgr_run state-read image state-read
smp_free="$smpmgr_ended"
echo "16a smpmgr image state-read printed: $(smp_images "$results/smpmgr-state-read.txt" | tr '\n' ';')"
hold_equal "smpmgr's image list while held: 6.0.0 in slot 1, neither pending nor active" \
  "slot 1 6.0.0" "$(smp_images "$results/smpmgr-state-read.txt" | grep " 6\.0\.0")"
hold_verdict a
release_lock print-job
carried_out 6.0.0 "$smp_free"
hold_equal "otad status: 6.0.0 runs confirmed in slot B" "('B', 'B', False)" \
  "$(hold_status 's["running"], s["confirmed"], s["onTrial"]')"
hold_equal "otad status: no kept activation left" None "$(hold_status 's["activation"].get("kept")')"
hold_verdict a

# b. Legacy DFU with nrf-ota: ACTIVATE AND RESET answered [0x10, 0x05, 0x06] while a lock holds.
# nrf-ota asks for the bootloader (START DFU), leaves and searches for the device again; as in step
# 13, the harness does what an nRF's reset does: while nrf-ota discovers, it turns hci0 off and on
# (otad advertises anew), until nrf-ota finds the device.
step "16b. an update lock holds nrf-ota's Legacy DFU"
packages_made
hold_lock calibration "calibrating the sensor"
nrf_ota_searching() {
  discovering && { ! grep -q "^Selected:" "$results/nrf-ota-hold.txt" ||
    { grep -q "Waiting for device to reboot" "$results/nrf-ota-hold.txt" && ! grep -q "Found DFU target" "$results/nrf-ota-hold.txt"; }; }
}
# nrf_ota_hold_run: nrf-ota once, the harness's reset while it searches; its exit code in
# nrf_ota_code.
hold_reboots=0
nrf_ota_hold_run() {
  nrf_ota_code=0
  timeout 120 "$nordic_python" -B "$here/nrf_ota_ble.py" "$central" "$work/hold-7.zip" --device "$address" \
    >"$results/nrf-ota-hold.txt" 2>&1 &
  nrf_ota=$!
  while kill -0 "$nrf_ota" 2>/dev/null; do
    if ((hold_reboots < 12)) && nrf_ota_searching; then
      sleep 0.3
      busctl set-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered b false &&
        busctl set-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered b true || true
      hold_reboots=$((hold_reboots + 1))
      sleep 3
    fi
    sleep 0.1
  done
  wait "$nrf_ota" || nrf_ota_code=$?
}
nrf_ota_hold_run
if ((nrf_ota_code != 0)) && ! grep -q "Sending firmware" "$results/nrf-ota-hold.txt"; then
  # Its connection failed before any firmware went (as step 13 may see): what a user does, once.
  echo "  nrf-ota's first run failed before the transfer: $(printed "$results/nrf-ota-hold.txt" 1); once more"
  mv "$results/nrf-ota-hold.txt" "$results/nrf-ota-hold-1.txt"
  nrf_ota_hold_run
fi
echo "16b nrf-ota printed (exit $nrf_ota_code; hci0 turned off and on $hold_reboots time(s) while it searched): $(printed "$results/nrf-ota-hold.txt" 2 | tr '\n' '|')"
hold_check "nrf-ota sent the whole firmware" grep -q "Sending firmware\|DFU complete" "$results/nrf-ota-hold.txt"
hold_check "otad answered ACTIVATE AND RESET 'operation failed' and kept the activation (the lock holds)" \
  in_log "ACTIVATE AND RESET deferred (an update lock)"
echo "  otad: $(hold_log | grep -o "Legacy DFU: ACTIVATE AND RESET deferred.*" | head -n 1)"
hold_equal "otad status: 7.0.0's activation kept, held by an update lock" "('7.0.0+0', 'an update lock')" \
  "$(kept_activation)"
hold_equal "the device still runs 6.0.0 in slot B" "B 6.0.0+0" "$(hold_status 's["running"]') $(running_version)"
hold_check "slot A holds the firmware nrf-ota sent" cmp -s -n 12000 "$work/hold-7.bin" "$work/hold-a.img"
hold_verdict b
release_lock calibration
carried_out 7.0.0
hold_equal "otad status: 7.0.0 runs confirmed in slot A" "('A', 'A') 7.0.0+0" \
  "$(hold_status 's["running"], s["confirmed"]') $(running_version)"
hold_verdict b

# c. Secure DFU with nrfutil: the last EXECUTE answered 0x08 (operation not permitted) while a lock holds.
step "16c. an update lock holds nrfutil's Secure DFU"
# otad again, serving Secure DFU too, for the packages' key (made in the background meanwhile).
start_hold_otad --secure-dfu --secure-dfu-key "$work/secure-key.pub.pem"
hold_lock backup "a backup is running"
nrfutil_code=0
timeout 120 "$nrfutil_python" -B "$here/nrfutil_dfu_ble.py" "$central" "$address" "$work/hold-8.zip" \
  >"$results/nrfutil-hold.txt" 2>"$results/nrfutil-hold.err" || nrfutil_code=$?
echo "16c nrfutil printed (exit $nrfutil_code): $(tail -n 1 "$results/nrfutil-hold.txt")"
hold_check "nrfutil failed (exit $nrfutil_code, not 0)" test "$nrfutil_code" -ne 0
hold_check "nrfutil named the device's answer: OperationNotPermitted (0x08)" \
  grep -q "OperationNotPermitted" "$results/nrfutil-hold.txt"
hold_equal "otad answered the last EXECUTE while the lock holds, the firmware validated and kept" "('8.0.0+0', 'an update lock')" \
  "$(kept_activation)"
hold_check "otad logged the deferred EXECUTE" in_log "Secure DFU: the activation is deferred (an update lock)"
echo "  otad: $(hold_log | grep -o "Secure DFU: the activation is deferred.*" | head -n 1)"
hold_equal "the device still runs 7.0.0 in slot A" "A 7.0.0+0" "$(hold_status 's["running"]') $(running_version)"
hold_verdict c
release_lock backup
carried_out 8.0.0
hold_equal "otad status: 8.0.0 runs confirmed in slot B" "('B', 'B') 8.0.0+0" \
  "$(hold_status 's["running"], s["confirmed"]') $(running_version)"
hold_verdict c

# d. The owner's consent, declined.
step "16d. otad --require-consent: the owner declined the version smpmgr uploads"
start_hold_otad --require-consent
"$bin/otad" consent decline --image-version 9.0.0 "${hold_storage[@]}" >"$results/consent-decline.txt" 2>&1 ||
  fail "16d: otad consent decline failed: $(cat "$results/consent-decline.txt")"
# [S-HOLD-2]: the owner declined this version: smpmgr's test answered rc 11 (MGMT_ERR_EACCESSDENIED),
# the uploaded image dropped.
smpmgr_run upgrade-declined upgrade --slot 1 "$work/hold-9.img"
echo "16d smpmgr upgrade printed (exit $smpmgr_rc): $(smpmgr_said "$results/smpmgr-upgrade-declined.txt")"
hold_check "smpmgr's upgrade failed at the test (exit $smpmgr_rc, not 0)" test "$smpmgr_rc" -ne 0
hold_check "smpmgr printed rc 11 (EACCESSDENIED) for the test" \
  grep -qE "EACCESSDENIED|rc=11\b|'rc': 11\b" "$results/smpmgr-upgrade-declined.txt"
hold_equal "otad dropped the declined image: slot A holds none, no validated transfer, nothing kept" "(None, False, None)" \
  "$(hold_status '[x["version"] for x in s["slots"] if x["slot"] == "A"][0], isinstance(s["transfer"], dict) and s["transfer"]["state"] == "validated", s["activation"].get("kept")')"
hold_equal "the device still runs 8.0.0 in slot B, confirmed" "('B', 'B') 8.0.0+0" \
  "$(hold_status 's["running"], s["confirmed"]') $(running_version)"
hold_verdict d
echo "16 the device has a say: $hold_passes passed, $hold_failures failed, in $(echo "$(now) - $hold_started" | bc) s"
