#!/usr/bin/env bash
# Checks the goosebit harness (Scripts/fleet/goosebit.sh, goosebit_admin.py, make_test_swu.py)
# against a real goosebit: a device conversation over DDI with curl, then TLS and device tokens.
# Prints PASS/FAIL lines; exits non-zero when any check fails. Leaves nothing behind.
#
#   Scripts/fleet/test-goosebit-harness.sh
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=Scripts/fleet/goosebit.sh
source "$here/goosebit.sh"
admin() { "$goosebit_venv/bin/python" "$here/goosebit_admin.py" "$@"; }
# shellcheck source=Scripts/lib/harness.sh
source "$here/../lib/harness.sh"
# field JSON PYTHON-EXPRESSION-ON-j: prints the value
field() { python3 -c 'import json,sys; j=json.loads(sys.argv[1]); v=eval(sys.argv[2]); print(v if isinstance(v,str) else json.dumps(v))' "$1" "$2"; }

harness_workdir work goosebit-harness
stop_goosebits() {
  goosebit_stop "$work/plain" 2>/dev/null
  goosebit_stop "$work/tls" 2>/dev/null
}
on_exit stop_goosebits

start_time=$SECONDS
check "goosebit installs (pinned $goosebit_version)" goosebit_install
echo "     install check took $((SECONDS - start_time)) s"

# --- plain HTTP: the device conversation ---
port="$(free_port)"
check "goosebit starts on 127.0.0.1:$port" goosebit_start "$work/plain" "$port"
B="$GOOSEBIT_URL/DEFAULT/controller/v1"
json_put() { curl -sf -X PUT -H 'Content-Type: application/json' -d "$2" "$1"; }
json_post() { curl -sf -H 'Content-Type: application/json' -d "$2" "$1"; }
register() {  # register ID: first poll, then configData as the poll asks
  local poll
  poll="$(curl -sf "$B/$1")" || return 1
  [[ "$(field "$poll" 'j["_links"]["configData"]["href"]')" == "$B/$1/configData" ]] || return 1
  json_put "$B/$1/configData" \
    '{"mode":"merge","data":{"hw_boardname":"blueota-sim","hw_revision":"1.0","sw_version":"1.0.0+0"}}' >/dev/null
}
check "a new device's first poll asks for configData, configData is accepted" register sim-1
poll="$(curl -sf "$B/sim-1")"
check "no deploymentBase before a rollout" [ "$(field "$poll" 'j["_links"]')" = "{}" ]
check "poll sleep is the configured 00:00:02" [ "$(field "$poll" 'j["config"]["polling"]["sleep"]')" = "00:00:02" ]

"$goosebit_venv/bin/python" "$here/make_test_swu.py" "$work/fw-2.0.0.swu" --version 2.0.0+0 >/dev/null
software="$(admin upload "$work/fw-2.0.0.swu")"
check "upload answers a software id ($software)" [ -n "$software" ]
sw_json="$(admin software)"
check "goosebit read version 2.0.0+0 and hardware blueota-sim/1.0 from sw-description" \
  [ "$(field "$sw_json" '[(s["version"], s["hardware"]) for s in j]')" = \
    '[["2.0.0+0", [{"model": "blueota-sim", "revision": "1.0"}]]]' ]
rollout="$(admin rollout --software "$software" --name harness)"
check "rollout created ($rollout)" [ -n "$rollout" ]

poll="$(curl -sf "$B/sim-1")"
base_href="$(field "$poll" 'j["_links"].get("deploymentBase",{}).get("href","")')"
check "deploymentBase offered after the rollout" [ "$base_href" = "$B/sim-1/deploymentBase/$software" ]
base="$(curl -sf "$base_href")"
artifact="$(field "$base" 'j["deployment"]["chunks"][0]["artifacts"][0]')"
sha1="$(field "$artifact" 'j["hashes"]["sha1"]')"
href="$(field "$artifact" 'j["_links"]["download"]["href"]')"
check "deploymentBase is forced, version 2.0.0+0" \
  [ "$(field "$base" '[j["deployment"]["download"], j["deployment"]["chunks"][0]["version"]]')" = '["forced", "2.0.0+0"]' ]
curl -sf -o "$work/download.swu" "$href"
check "the download's sha1 equals hashes.sha1" [ "$(sha1sum <"$work/download.swu" | cut -d' ' -f1)" = "$sha1" ]
check "the download is the uploaded file" cmp -s "$work/download.swu" "$work/fw-2.0.0.swu"
range_status="$(curl -s -o "$work/tail.bin" -w '%{http_code}' -H 'Range: bytes=1000-' "$href")"
check "Range: bytes=1000- answers 206 with the file's tail" \
  bash -c "[ $range_status = 206 ] && cmp -s <(tail -c +1001 '$work/fw-2.0.0.swu') '$work/tail.bin'"

feedback() { json_post "$B/$1/deploymentBase/$software/feedback" "$2" >/dev/null; }
check "feedback proceeding" feedback sim-1 \
  '{"status":{"execution":"proceeding","result":{"finished":"none","progress":{"cnt":1,"of":2}},"details":["transfer started"]}}'
check "feedback closed success" feedback sim-1 \
  '{"status":{"execution":"closed","result":{"finished":"success"},"details":["image confirmed"]}}'
device="$(admin device sim-1)"
check "after success: sw_version 2.0.0+0, state Finished" \
  [ "$(field "$device" '[j["sw_version"], j["last_state"]]')" = '["2.0.0+0", "Finished"]' ]
poll="$(curl -sf "$B/sim-1")"
check "after success: nothing offered" [ "$(field "$poll" 'j["_links"]')" = "{}" ]

check "a second device registers" register sim-2
check "feedback closed failure" feedback sim-2 \
  '{"status":{"execution":"closed","result":{"finished":"failure"},"details":["BlueOTA: image rejected","signature check failed"]}}'
device="$(admin device sim-2)"
check "after failure: state Error, sw_version unchanged" \
  [ "$(field "$device" '[j["sw_version"], j["last_state"]]')" = '["1.0.0+0", "Error"]' ]
check "after failure: the details are the device's log" \
  [ "$(field "$device" 'j["log"]')" = $'BlueOTA: image rejected\nsignature check failed' ]
poll="$(curl -sf "$B/sim-2")"
check "after failure: the action is not offered again" [ "$(field "$poll" 'j["_links"]')" = "{}" ]
counts="$(admin rollouts)"
check "the rollout counts 1 success, 1 failure" \
  [ "$(field "$counts" '[j[0]["success_count"], j[0]["failure_count"]]')" = "[1, 1]" ]
cp "$work/plain/goosebit.pid" "$work/plain.pid"
goosebit_stop "$work/plain"
check "goosebit stopped (plain)" bash -c "! curl -s -o /dev/null '$B/sim-1'"

# --- HTTPS, and device tokens (strict: the token must be set by the admin first) ---
port="$(free_port)"
check "goosebit starts with --tls --device-auth strict" goosebit_start "$work/tls" "$port" --tls --device-auth strict
B="$GOOSEBIT_URL/DEFAULT/controller/v1"
check "https with the CA succeeds (url $GOOSEBIT_URL)" curl -sf --cacert "$GOOSEBIT_CA" -o /dev/null "$GOOSEBIT_URL/login"
check "https without the CA fails" bash -c "! curl -s -o /dev/null '$GOOSEBIT_URL/login'"
check "https via localhost with the CA succeeds" \
  curl -sf --cacert "$GOOSEBIT_CA" -o /dev/null "https://localhost:$port/login"
status() { curl -s --cacert "$GOOSEBIT_CA" -o /dev/null -w '%{http_code}' "$@"; }
check "strict: an unknown device is refused (401)" [ "$(status -H 'Authorization: TargetToken t0ken' "$B/sim-3")" = 401 ]
"$goosebit_venv/bin/python" - "$GOOSEBIT_URL" "$GOOSEBIT_CA" <<'EOF' >/dev/null
import json, ssl, sys, urllib.parse, urllib.request
url, ca = sys.argv[1], sys.argv[2]
ctx = ssl.create_default_context(cafile=ca)
form = urllib.parse.urlencode({"username": "admin", "password": "goosebit-admin"}).encode()
token = json.load(urllib.request.urlopen(urllib.request.Request(url + "/login", data=form), context=ctx))["access_token"]
body = json.dumps({"devices": ["sim-3"], "auth_token": "t0ken"}).encode()
urllib.request.urlopen(urllib.request.Request(url + "/api/v1/devices", data=body, method="PUT",
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + token}), context=ctx)
EOF
check "strict: the right TargetToken is accepted" [ "$(status -H 'Authorization: TargetToken t0ken' "$B/sim-3")" = 200 ]
check "strict: a wrong TargetToken is refused" [ "$(status -H 'Authorization: TargetToken wrong' "$B/sim-3")" = 401 ]
check "strict: no token is refused" [ "$(status "$B/sim-3")" = 401 ]
check "admin client over https with --ca" bash -c "'$goosebit_venv/bin/python' '$here/goosebit_admin.py' devices >/dev/null"
pids="$(cat "$work/plain.pid") $(cat "$work/tls/goosebit.pid")"
goosebit_stop "$work/tls"

check "no goosebit process left" bash -c "for p in $pids; do kill -0 \$p 2>/dev/null && exit 1; done; exit 0"
harness_run_exit_commands
trap - EXIT
check "the work directory is gone" [ ! -e "$work" ]
harness_counts "goosebit harness"
