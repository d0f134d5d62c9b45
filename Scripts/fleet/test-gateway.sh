#!/usr/bin/env bash
# otactl gateway end to end, on the simulated link: a real goosebit (hawkBit's DDI API, PyPI) on
# 127.0.0.1, five otad devices, one rollout; then a DDI server that misbehaves on purpose
# (fake_ddi.py). Prints PASS/FAIL lines and exits non-zero when any check fails.
#   1. goosebit: an MCUboot image 2.0.0+0, encrypted for the devices' key (otactl image create
#      --encrypt), packed by `otactl image pack` for board blueota-sim 1.0,
#      uploaded, one rollout. Devices sim-000..sim-004 (slot A 1.0.0), each naming itself by its
#      serial (otad --serial): sim-003's new firmware fails its health check, sim-004 is other
#      hardware (model other-board), which goosebit itself never offers the release. The gateway
#      is killed (kill -9) once a device has committed part of the image, and started again: the
#      device resumes from its journal, and goosebit sees each device's result once (its rollout
#      counts 3 successes and 1 failure, the device's reason in its log).
#   2. HTTPS: goosebit behind TLS with its own CA: the gateway with --ca-file reaches it, without
#      it refuses the certificate; a token file others can read is refused before anything is sent.
#      Then a device that claims sim-001's serial from another socket: an identity alarm for the
#      serial, neither device served (the impostor untouched).
#   3. A server that lies: wrong hash, truncated artifact, an artifact for other hardware, expired
#      token, garbage, `null` deployment, a link to another server; and a cancel, at the poll and
#      while the device waits its turn: each refused or handled with its own log line, and the
#      device untouched (still 1.0.0, no transfer begun).
#   4. Devices that lie (the DDI fake): two devices saying one serial at once (an alarm for both:
#      the alarm attribute and feedback on the server, nothing downloaded, both untouched); a
#      device that says it runs the release's version, confirmed, with another image (pushed, not
#      taken at its word).
#   5. hawkBit's model (the DDI fake: goosebit 0.2.12 has no maintenance window, download-only
#      action or confirmation): a download-only action staged on five devices (validated, none
#      activated, each action closed "downloaded"), then an action in a maintenance window on the
#      same five: unavailable (a restarted gateway finds them staged and pushes nothing), available
#      (activated, confirmed, closed success). A confirmation answered by a device that asks its
#      owner (otad --require-consent: deferred, then `otad consent accept`), denied by one whose
#      owner declined, and confirmed on the behalf of one that asks no consent.
# Needs otad and otactl built (BLUEOTA_BIN, default: swift build's debug folder).
#
#   Scripts/fleet/test-gateway.sh
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=Scripts/fleet/goosebit.sh
source "$here/goosebit.sh"
bin="${BLUEOTA_BIN:-$root/.build/debug}"
admin() { "$goosebit_venv/bin/python" "$here/goosebit_admin.py" "$@"; }
# shellcheck source=Scripts/lib/harness.sh
source "$root/Scripts/lib/harness.sh"
harness_workdir work gateway-test
pids=()
stop_all() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  goosebit_stop "$work/gb" 2>/dev/null
  goosebit_stop "$work/gb-tls" 2>/dev/null
}
on_exit stop_all
started=$SECONDS

# The devices: otad on a socket each, slot A holding firmware 1.0.0.
mkdir -p "$work/sockets" "$work/images"
start_device() { # index serial model health-check [socket-name [slot-a-image [factory-version]]]
  local name="${5:-$2}"
  local dir="$work/dev/$name"
  local factory=()
  [[ -n "${7:-}" ]] && factory=(--factory-version "$7")
  mkdir -p "$dir"
  [[ -f "$dir/a.img" ]] || cp "${6:-$root/Images/firmware-v1.bin}" "$dir/a.img"
  "$bin/otad" run --slot-a "$dir/a.img" --slot-b "$dir/b.img" --capacity 1MiB --state-dir "$dir/state" \
    --socket "$work/sockets/$name.sock" --serial "$2" --model "$3" --hardware-revision 1.0 --attempts 1 \
    --health-check "$4" --decryption-key "$work/images/device.pem" ${factory[@]+"${factory[@]}"} \
    ${device_extra[@]+"${device_extra[@]}"} \
    --log-level info >>"$dir/otad.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 250); do [[ -S "$work/sockets/$name.sock" ]] && return 0; sleep 0.02; done
  echo "otad $name did not start:" >&2
  tail -n 5 "$dir/otad.log" >&2
  return 1
}
info_of() { "$bin/otactl" info --device "$work/sockets/$1.sock" --json 2>/dev/null; }

# The release: an MCUboot image 2.0.0+0 of 128 KiB, encrypted for the fleet's X25519 device key
# (each otad holds it: --decryption-key), packed for blueota-sim 1.0. goosebit, the gateway's cache
# and the link see only ciphertext; each device decrypts it after its checks.
head -c 131072 "$root/Images/raw-1MiB.bin" >"$work/images/payload.bin"
"$bin/otactl" image keygen --type x25519 --key "$work/images/device.pem" --public "$work/images/device.pub.pem" >/dev/null
"$bin/otactl" image create "$work/images/payload.bin" "$work/images/fw-2.0.0.img" --version 2.0.0+0 \
  --encrypt "$work/images/device.pub.pem" >/dev/null
check "otactl image pack makes the .swu" \
  "$bin/otactl" image pack "$work/images/fw-2.0.0.img" "$work/images/fw-2.0.0.swu" --board blueota-sim --revision 1.0
"$bin/otactl" image pack "$work/images/fw-2.0.0.img" "$work/images/fw-rpi4.swu" --board rpi4 --revision 1.4 >/dev/null

# ---- 1. goosebit, five devices, one rollout, the gateway killed and started again ----
check "goosebit installs" goosebit_install
port="$(free_port)"
check "goosebit starts on 127.0.0.1:$port" goosebit_start "$work/gb" "$port"
# shellcheck disable=SC2016 # $OTAD_VERSION is otad's to expand, in the health check's shell
ok='echo "self-test of $OTAD_VERSION passed"'
# shellcheck disable=SC2016 # the same
bad='echo "self-test of $OTAD_VERSION: no sensor on this board"; exit 3'
for i in 0 1 2; do start_device "$i" "sim-00$i" blueota-sim "$ok" || exit 1; done
start_device 3 sim-003 blueota-sim "$bad" || exit 1
start_device 4 sim-004 other-board "$ok" || exit 1
software="$(admin upload "$work/images/fw-2.0.0.swu")"
check "goosebit takes the .swu and reads its version and hardware" \
  test "$(admin software | python3 -c 'import json,sys; s=json.load(sys.stdin)[0]; print(s["version"], s["hardware"])')" \
  = "2.0.0+0 [{'model': 'blueota-sim', 'revision': '1.0'}]"
admin rollout --software "$software" --name "room 1" >/dev/null

gateway() { # log-file extra-arguments...: the gateway for goosebit, in the background
  local log="$1"
  shift
  "$bin/otactl" gateway --server "$GOOSEBIT_URL" --socket-dir "$work/sockets" --state-dir "$work/gw" \
    --parallel 2 --restart-timeout 30 --trial-timeout 60 "$@" >>"$log" 2>&1 </dev/null &
  gateway_pid=$!
}
gateway "$work/gateway-1.log" --until-idle
# Killed once a device has committed part of the image (its progress feedback says so on the server).
committed() { admin device sim-000 2>/dev/null | grep -q 'Downloaded [1-9]'; }
for _ in $(seq 600); do committed && break; sleep 0.1; done
kill -9 "$gateway_pid" 2>/dev/null
wait "$gateway_pid" 2>/dev/null
check "the first gateway was killed mid-push, sim-000 part-way" \
  bash -c "grep -q 'pushing 2.0.0+0' '$work/gateway-1.log' && ! grep -q 'sim-000: runs' '$work/gateway-1.log'"
gateway "$work/gateway-2.log" --until-idle
if ! wait "$gateway_pid"; then echo "the second gateway failed:" >&2; tail -n 20 "$work/gateway-2.log" >&2; fi
admin devices >"$work/devices.json"
admin rollouts >"$work/rollouts.json"
state() { json "$work/devices.json" "[d for d in j if d['id'] == '$1'][0]['$2']"; }
for id in sim-000 sim-001 sim-002; do
  check "$id: goosebit shows it finished on 2.0.0+0" test "$(state $id last_state) $(state $id sw_version)" = "Finished 2.0.0+0"
  check "$id: the device runs 2.0.0+0, confirmed" \
    test "$(info_of $id | python3 -c 'import json,sys; i=json.load(sys.stdin); print(i["runningVersion"], i["onTrial"])')" = "2.0.0+0 False"
done
# The release traveled encrypted and was decrypted on the device: the image goosebit holds has no
# plaintext in it, sim-000's slot B holds the plaintext after the 512-byte header.
check "the released image carries ciphertext, not the payload" \
  bash -c '! cmp -s <(tail -c +513 "$0" | head -c 131072) "$1"' "$work/images/fw-2.0.0.img" "$work/images/payload.bin"
check "sim-000: slot B holds the plaintext (decrypted with the device's key after its checks)" \
  bash -c 'cmp -s <(tail -c +513 "$0" | head -c 131072) "$1"' "$work/dev/sim-000/b.img" "$work/images/payload.bin"
log_of() { admin device "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("log") or "")'; }
check "sim-003: goosebit shows the error with the device's reason (health check failed)" \
  bash -c "test '$(state sim-003 last_state)' = Error && grep -q 'health check failed' <<<\"\$0\"" "$(log_of sim-003)"
check "sim-003: the device rolled back to 1.0.0" \
  test "$(info_of sim-003 | python3 -c 'import json,sys; print(json.load(sys.stdin)["runningVersion"])')" = "1.0.0+0"
check "sim-004 (other hardware): goosebit offers it nothing, it stays registered on 1.0.0+0" \
  test "$(state sim-004 last_state) $(state sim-004 sw_version)" = "Registered 1.0.0+0"
check "the rollout counts each result once: 3 successes, 1 failure" \
  test "$(json "$work/rollouts.json" "(j[0]['success_count'], j[0]['failure_count'])")" = "(3, 1)"
check "the restarted gateway resumed sim-000 from its committed offset" \
  grep -q "sim-000: runs 2.0.0+0, confirmed; .* resumed at byte [1-9]" "$work/gateway-2.log"
check "the artifact was downloaded once (the restart found it in the cache)" \
  test "$(cat "$work/gateway-1.log" "$work/gateway-2.log" | grep -c 'downloaded fw-2.0.0.swu')" = 1
check "the devices reported their attributes (goosebit read hardware from config data)" \
  test "$(json "$work/devices.json" "sorted(set(str(d['hardware']) for d in j))")" \
  = "[\"{'model': 'blueota-sim', 'revision': '1.0'}\", \"{'model': 'other-board', 'revision': '1.0'}\"]"
grep -h "otactl.gateway" "$work/gateway-2.log" | sed 's/^/     /' | tail -n 12
echo "GATEWAY-CAMPAIGN devices=5 seconds=$((SECONDS - started))"

# A device claiming sim-001's serial from another socket: the gateway bound sim-001 to its socket
# at first sight (bindings.json in its state directory); now neither is served.
check "the gateway bound each serial to its socket" \
  test "$(json "$work/gw/bindings.json" "j['sim-001']['identities']")" = "['socket sim-001.sock']"
start_device 5 sim-001 blueota-sim "$ok" impostor || exit 1
gateway "$work/gateway-3.log" --once
wait "$gateway_pid"
check "impostor: an identity alarm for sim-001 naming both sockets" \
  grep -q "sim-001: identity alarm (.*): serial sim-001 is claimed by 2 Bluetooth identities (socket sim-001.sock, socket impostor.sock)" \
  "$work/gateway-3.log"
check "impostor: kept in the state directory (an alarm for both until --rebind)" \
  test "$(json "$work/gw/bindings.json" "j['sim-001']['identities']")" = "['socket sim-001.sock', 'socket impostor.sock']"
info_path() { "$bin/otactl" info --device "$1" --json 2>/dev/null; }
check "impostor: untouched (1.0.0, no transfer begun)" \
  test "$(info_path "$work/sockets/impostor.sock" | python3 -c 'import json,sys; i=json.load(sys.stdin); print(i["runningVersion"], i["transfer"]["size"])')" = "1.0.0+0 0"

# ---- 2. HTTPS with a private CA, and tokens ----
tls_port="$(free_port)"
check "goosebit starts behind TLS" goosebit_start "$work/gb-tls" "$tls_port" --tls
"$bin/otactl" gateway --server "$GOOSEBIT_URL" --device "$work/sockets/sim-000.sock" --state-dir "$work/gw-tls" \
  --ca-file "$GOOSEBIT_CA" --once >"$work/tls-ok.log" 2>&1
check "HTTPS with --ca-file: the target is registered" \
  bash -c "admin() { \"$goosebit_venv/bin/python\" \"$here/goosebit_admin.py\" \"\$@\"; }; admin devices | grep -q sim-000"
"$bin/otactl" gateway --server "$GOOSEBIT_URL" --device "$work/sockets/sim-000.sock" --state-dir "$work/gw-tls" \
  --once >"$work/tls-bad.log" 2>&1
check "HTTPS without the CA: the certificate is refused, said in the log" grep -q "SSL certificate problem" "$work/tls-bad.log"
printf 'secret-token\n' >"$work/token"
chmod 644 "$work/token"
"$bin/otactl" gateway --server "$GOOSEBIT_URL" --device "$work/sockets/sim-000.sock" --token-file "$work/token" \
  --once >"$work/token.log" 2>&1
status=$?
check "a token file others can read is refused (exit 64, chmod 600 named)" \
  bash -c "test $status = 64 && grep -q 'chmod 600' '$work/token.log'"
goosebit_stop "$work/gb-tls"

# ---- 3. a DDI server that lies ----
start_device 9 sim-009 blueota-sim "$ok" || exit 1
untouched() { # the device still runs 1.0.0 and began no transfer
  test "$(info_of sim-009 | python3 -c 'import json,sys; i=json.load(sys.stdin); print(i["runningVersion"], i["transfer"]["size"])')" = "1.0.0+0 0"
}
hostile() { # mode expected-log-line [artifact]
  local mode="$1" expected="$2" artifact="${3:-$work/images/fw-2.0.0.swu}" fport
  fport="$(free_port)"
  python3 "$here/fake_ddi.py" --port "$fport" --artifact "$artifact" --log "$work/fake-$mode.jsonl" \
    --mode "${mode%%:*}" &
  local fake=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$fport/" && break; sleep 0.05; done
  "$bin/otactl" gateway --server "http://127.0.0.1:$fport" --device "$work/sockets/sim-009.sock" \
    --state-dir "$work/gw-$mode" --once >"$work/hostile-$mode.log" 2>&1
  kill "$fake"
  wait "$fake" 2>/dev/null
  check "$mode: said in the gateway's log ($expected)" grep -qF "$expected" "$work/hostile-$mode.log"
  check "$mode: the device is untouched" untouched
}
hostile wrong-hash "the server said"
closed_failure() { # fake-log: a closing failure feedback was posted
  python3 -c 'import json,sys
bodies = [json.loads(json.loads(l)["body"] or "{}") for l in open(sys.argv[1])]
sys.exit(0 if any(b.get("status", {}).get("execution") == "closed" and b["status"]["result"]["finished"] == "failure" for b in bodies) else 1)' "$1"
}
check "wrong-hash: the failure went to the server as closing feedback" closed_failure "$work/fake-wrong-hash.jsonl"
hostile truncated "ended after"
hostile good:other-hardware "it is for rpi4 1.4; this device is blueota-sim revision 1.0" "$work/images/fw-rpi4.swu"
check "other-hardware: the refusal went to the server as closing feedback" \
  closed_failure "$work/fake-good:other-hardware.jsonl"
hostile expired "the server refused the token (HTTP 401)"
check "expired: nothing was downloaded" bash -c "! grep -q '/download' '$work/fake-expired.jsonl'"
hostile garbage "is not a DDI controller base"
hostile null-deploy "serving devices"
hostile foreign-link "a link to another server"
hostile cancel "cancelled by the server; nothing pushed"
check "cancel: the cancel was closed on the server" grep -q 'cancelAction/9/feedback' "$work/fake-cancel.jsonl"
hostile cancel-late "cancelled by the server; nothing pushed"
check "cancel-late: the artifact was fetched, the cancel taken before the push began" \
  bash -c "grep -q '/download' '$work/fake-cancel-late.jsonl' && grep -q 'cancelAction/9/feedback' '$work/fake-cancel-late.jsonl'"

# ---- 4. devices that lie ----
# Two devices saying one serial at once, never seen before: an alarm for both, not "first keeps it".
start_device 10 sim-010 blueota-sim "$ok" || exit 1
start_device 11 sim-010 blueota-sim "$ok" twin || exit 1
fport="$(free_port)"
python3 "$here/fake_ddi.py" --port "$fport" --artifact "$work/images/fw-2.0.0.swu" --log "$work/fake-twins.jsonl" \
  --mode good &
fake=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$fport/" && break; sleep 0.05; done
"$bin/otactl" gateway --server "http://127.0.0.1:$fport" --device "$work/sockets/sim-010.sock" \
  --device "$work/sockets/twin.sock" --state-dir "$work/gw-twins" --once >"$work/twins.log" 2>&1
kill "$fake"
wait "$fake" 2>/dev/null
check "twins: an identity alarm for sim-010 naming both sockets" \
  grep -q "serial sim-010 is claimed by 2 Bluetooth identities (socket sim-010.sock, socket twin.sock)" "$work/twins.log"
check "twins: the server got the alarm as an attribute and as feedback, and nothing was downloaded" \
  python3 -c 'import json,sys
lines = [json.loads(l) for l in open(sys.argv[1])]
attribute = any(l["method"] == "PUT" and "identity_alarm" in l["body"] and "sim-010" in l["body"] for l in lines)
feedback = any(l["path"].endswith("/feedback") and "not served by the gateway" in l["body"] for l in lines)
download = any("/download" in l["path"] for l in lines)
sys.exit(0 if attribute and feedback and not download else 1)' "$work/fake-twins.jsonl"
for name in sim-010 twin; do
  check "twins: $name untouched (1.0.0, no transfer begun)" \
    test "$(info_path "$work/sockets/$name.sock" | python3 -c 'import json,sys; i=json.load(sys.stdin); print(i["runningVersion"], i["transfer"]["size"])')" = "1.0.0+0 0"
done

# A device that says it runs 2.0.0+0, confirmed, from another image of that version: its Info's
# running image (size and CRC32) is not the release's, so it is pushed, not taken at its word.
head -c 65536 "$root/Images/raw-1MiB.bin" >"$work/images/liar-payload.bin"
"$bin/otactl" image create "$work/images/liar-payload.bin" "$work/images/liar-2.0.0.img" --version 2.0.0+0 >/dev/null
start_device 12 sim-012 blueota-sim "$ok" sim-012 "$work/images/liar-2.0.0.img" 2.0.0+0 || exit 1
check "liar: the device says it runs 2.0.0+0, confirmed" \
  test "$(info_of sim-012 | python3 -c 'import json,sys; i=json.load(sys.stdin); print(i["runningVersion"], i["onTrial"])')" = "2.0.0+0 False"
fport="$(free_port)"
python3 "$here/fake_ddi.py" --port "$fport" --artifact "$work/images/fw-2.0.0.swu" --log "$work/fake-liar.jsonl" \
  --mode good &
fake=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$fport/" && break; sleep 0.05; done
"$bin/otactl" gateway --server "http://127.0.0.1:$fport" --device "$work/sockets/sim-012.sock" \
  --state-dir "$work/gw-liar" --restart-timeout 30 --trial-timeout 60 --once >"$work/liar.log" 2>&1
kill "$fake"
wait "$fake" 2>/dev/null
check "liar: its word that it runs 2.0.0+0 was not taken (its running image is not the release's)" \
  grep -q "sim-012: says it runs 2.0.0+0, confirmed, but its running image" "$work/liar.log"
check "liar: the release was pushed, and the success reported after the push" \
  bash -c "grep -q 'sim-012: pushing 2.0.0+0' '$work/liar.log' && grep -q 'sim-012: runs 2.0.0+0, confirmed; [1-9][0-9]* bytes on air' '$work/liar.log'"
check "liar: slot B holds the release's plaintext (decrypted on the device)" \
  bash -c 'cmp -s <(tail -c +513 "$0" | head -c 131072) "$1"' "$work/dev/sim-012/b.img" "$work/images/payload.bin"

# ---- 5. hawkBit's model: download-only, maintenance windows, confirmation (the DDI fake) ----
model_started=$SECONDS
fake_start() { # mode log [extra fake arguments...]: the fake in the background, $fport its port
  local mode="$1" log="$2"
  shift 2
  fport="$(free_port)"
  python3 "$here/fake_ddi.py" --port "$fport" --artifact "$work/images/fw-2.0.0.swu" --log "$log" --mode "$mode" "$@" &
  fake=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$fport/" && break; sleep 0.05; done
}
fake_stop() { kill "$fake"; wait "$fake" 2>/dev/null; }
model_gateway() { # state-dir log devices...: one poll cycle against the fake
  local state="$1" log="$2" args=()
  shift 2
  for name in "$@"; do args+=(--device "$work/sockets/$name.sock"); done
  "$bin/otactl" gateway --server "http://127.0.0.1:$fport" "${args[@]}" --state-dir "$state" --parallel 5 \
    --restart-timeout 30 --trial-timeout 60 --once >>"$log" 2>&1
}
# feedback FAKE-LOG KIND ACTION: one line per feedback the fake recorded: "target json-body".
feedback_of() {
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    l = json.loads(l); p = l["path"].split("?")[0].strip("/").split("/")
    if l["method"] == "POST" and p[-1] == "feedback" and p[4] == sys.argv[2] and p[5] == sys.argv[3]:
        print(p[3], l["body"])' "$@"
}
count_feedback() { # FAKE-LOG KIND ACTION PYTHON-CONDITION-ON-b: the targets whose feedback matched
  python3 -c 'import json,sys
targets = set()
for l in open(sys.argv[1]):
    l = json.loads(l); p = l["path"].split("?")[0].strip("/").split("/")
    if l["method"] == "POST" and p[-1] == "feedback" and p[4] == sys.argv[2] and p[5] == sys.argv[3]:
        b = json.loads(l["body"])
        if eval(sys.argv[4]): targets.add(p[3])
print(len(targets))' "$@"
}
field_of() { info_of "$1" | python3 -c "import json,sys; i=json.load(sys.stdin); print($2)"; }
same() { # ACTUAL EXPECTED: equal, or both said on stderr
  [[ "$1" == "$2" ]] && return 0
  echo "     got '$1', expected '$2'" >&2
  return 1
}
fleet=(sim-020 sim-021 sim-022 sim-023 sim-024)
for i in 0 1 2 3 4; do start_device "2$i" "sim-02$i" blueota-sim "$ok" || exit 1; done
window="$work/window-open"
fake_start download-only-then-window "$work/fake-model.jsonl" --window-open "$window"
model_gateway "$work/gw-model" "$work/model-1.log" "${fleet[@]}"
staged_all() {
  local device
  for device in "${fleet[@]}"; do
    same "$(field_of "$device" 'i["state"], i["transfer"]["version"], i["runningVersion"], i["keptActivation"]')" \
      'validated 2.0.0+0 1.0.0+0 None' || return 1
  done
}
check "download-only: the five devices hold 2.0.0+0 validated, none activated (all run 1.0.0)" staged_all
check "download-only: each action closed \"downloaded\" (finished none), as hawkBit closes one" \
  test "$(count_feedback "$work/fake-model.jsonl" deploymentBase 9 'b["status"]["execution"] == "downloaded" and b["status"]["result"]["finished"] == "none"')" = 5
check "download-only: the artifact was downloaded once for the five" test "$(grep -c 'downloaded fw.swu' "$work/model-1.log")" = 1
# The gateway restarts; the window is closed: the devices' Info proves the image staged.
model_gateway "$work/gw-model" "$work/model-2.log" "${fleet[@]}"
check "window unavailable: \"staged on the device; waiting for the maintenance window\" for each" \
  test "$(count_feedback "$work/fake-model.jsonl" deploymentBase 10 'b["status"]["execution"] == "proceeding" and b["status"]["details"][0].startswith("staged on the device; waiting for the maintenance window")')" = 5
check "window unavailable: the restarted gateway found them staged and pushed nothing" \
  bash -c "test \$(grep -c 'not pushed again' '$work/model-2.log') = 5 && ! grep -q -e ': staging' -e ': pushing' '$work/model-2.log'"
check "window unavailable: still nothing activated" staged_all
touch "$window"
model_gateway "$work/gw-model" "$work/model-3.log" "${fleet[@]}"
activated_all() {
  local device
  for device in "${fleet[@]}"; do
    same "$(field_of "$device" 'i["runningVersion"], i["onTrial"]')" '2.0.0+0 False' || return 1
  done
}
check "window available: the five run 2.0.0+0, confirmed" activated_all
check "window available: each action closed success" \
  test "$(count_feedback "$work/fake-model.jsonl" deploymentBase 10 'b["status"]["execution"] == "closed" and b["status"]["result"]["finished"] == "success"')" = 5
check "window available: only ACTIVATE went (no image data sent again: under 4 KiB on air each)" \
  python3 -c 'import re,sys
n = [int(m) for m in re.findall(r"sim-02\d: runs 2\.0\.0\+0, confirmed; (\d+) bytes on air", open(sys.argv[1]).read())]
sys.exit(0 if len(n) == 5 and max(n) < 4096 else 1)' "$work/model-3.log"
fake_stop
echo "     what the fake server recorded (target action execution/finished: first detail):"
for action in 9 10; do
  feedback_of "$work/fake-model.jsonl" deploymentBase "$action" | python3 -c 'import json,sys
for l in sys.stdin:
    t, b = l.split(" ", 1); b = json.loads(b)
    print("     ", t, sys.argv[1], b["status"]["execution"] + "/" + b["status"]["result"]["finished"] + ":", b["status"]["details"][0][:90])' "$action" | sort -u -k1,3 | head -n 15
done

# Confirmation: sim-030 asks its owner (deferred, then accepted), sim-031's owner declined 2.0.0+0
# ahead, sim-032 asks no consent (confirmed on its behalf).
device_extra=(--require-consent)
start_device 30 sim-030 blueota-sim "$ok" || exit 1
start_device 31 sim-031 blueota-sim "$ok" || exit 1
device_extra=()
start_device 32 sim-032 blueota-sim "$ok" || exit 1
consent() { # name decision [options]: the owner's answer, as the device's application gives it
  local name="$1" dir="$work/dev/$1"
  shift
  "$bin/otad" consent "$@" --slot-a "$dir/a.img" --slot-b "$dir/b.img" --capacity 1MiB --state-dir "$dir/state"
}
consent sim-031 decline --image-version 2.0.0+0 | sed "s/^/     /"
fake_start confirm "$work/fake-confirm.jsonl"
model_gateway "$work/gw-confirm" "$work/confirm-1.log" sim-030 sim-031 sim-032
check "confirm: sim-030 deferred (awaiting consent), nothing sent to the server for it" \
  bash -c "grep -q 'sim-030: action 11: the device deferred the activation (awaiting consent)' '$work/confirm-1.log' && ! grep -q 'sim-030/confirmationBase/11/feedback' '$work/fake-confirm.jsonl'"
check "confirm: sim-030 holds 2.0.0+0 validated, its activation kept (awaiting consent)" \
  same "$(field_of sim-030 'i["state"], i["runningVersion"], (i["keptActivation"] or {}).get("hold")')" 'validated 1.0.0+0 awaitingConsent'
check "confirm: sim-031 denied with the device's words (its owner declined; code 15)" \
  test "$(count_feedback "$work/fake-confirm.jsonl" confirmationBase 11 'p[3] == "sim-031" and b["confirmation"] == "denied" and b["code"] == 15 and "declined" in b["details"][0]')" = 1
check "confirm: sim-031 still runs 1.0.0, its image dropped" \
  same "$(field_of sim-031 'i["runningVersion"], i["state"]')" '1.0.0+0 idle'
check "confirm: sim-032 (no consent asked) confirmed on its behalf, said so" \
  test "$(count_feedback "$work/fake-confirm.jsonl" confirmationBase 11 'p[3] == "sim-032" and b["confirmation"] == "confirmed" and "on the device" in b["details"][0]')" = 1
consent sim-030 accept | sed "s/^/     /"
for _ in $(seq 300); do [[ "$(field_of sim-030 'i["runningVersion"], i["onTrial"]' 2>/dev/null)" == '2.0.0+0 False' ]] && break; sleep 0.1; done
check "confirm: once its owner accepted, sim-030 activated on its own (runs 2.0.0+0, confirmed)" \
  same "$(field_of sim-030 'i["runningVersion"], i["onTrial"]')" '2.0.0+0 False'
model_gateway "$work/gw-confirm" "$work/confirm-2.log" sim-030 sim-032
model_gateway "$work/gw-confirm" "$work/confirm-3.log" sim-030
check "confirm: sim-030 confirmed (it activated on its own once its owner accepted)" \
  test "$(count_feedback "$work/fake-confirm.jsonl" confirmationBase 11 'p[3] == "sim-030" and b["confirmation"] == "confirmed" and "on its own" in b["details"][0]')" = 1
check "confirm: sim-030's deployment then closed success" \
  test "$(count_feedback "$work/fake-confirm.jsonl" deploymentBase 11 'p[3] == "sim-030" and b["status"]["result"]["finished"] == "success"')" = 1
check "confirm: sim-032 pushed after the confirmation and closed success" \
  test "$(count_feedback "$work/fake-confirm.jsonl" deploymentBase 11 'p[3] == "sim-032" and b["status"]["result"]["finished"] == "success"')" = 1
fake_stop
echo "     what the fake server recorded (target, confirmation or execution/finished: first detail):"
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    l = json.loads(l); p = l["path"].split("?")[0].strip("/").split("/")
    if l["method"] != "POST" or p[-1] != "feedback": continue
    b = json.loads(l["body"])
    what = b.get("confirmation") or b["status"]["execution"] + "/" + b["status"]["result"]["finished"]
    detail = (b.get("details") or b.get("status", {}).get("details") or [""])[0]
    if what.startswith("proceeding"): continue
    print("     ", p[3], p[4], p[5], what + (" code %s" % b["code"] if "code" in b else "") + ":", detail[:100])' "$work/fake-confirm.jsonl"
echo "GATEWAY-MODEL seconds=$((SECONDS - model_started))"

harness_counts gateway "$((SECONDS - started))"
