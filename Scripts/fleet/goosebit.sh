#!/usr/bin/env bash
# goosebit (https://github.com/UpstreamDataInc/goosebit), a hawkBit DDI server, for the gateway's
# tests. Source it for the functions, or run it with a subcommand:
#
#   Scripts/fleet/goosebit.sh install
#   Scripts/fleet/goosebit.sh start DIR PORT [--tls] [--device-auth MODE]
#   Scripts/fleet/goosebit.sh stop DIR
#   Scripts/fleet/goosebit.sh make-schema FILE
#
# goosebit_install   pip-installs goosebit (pinned) into <repo>/.build-goosebit; fast when done.
# goosebit_start     runs it on 127.0.0.1:PORT with everything under DIR: goosebit.yaml (its
#                    config, given by GOOSEBIT_SETTINGS), db.sqlite3, artifacts/, goosebit.log,
#                    goosebit.pid, and with --tls a CA and server certificate (tls/ca.crt,
#                    tls/server.crt, tls/server.key; give CERT KEY after --tls to use your own).
#                    The admin user is admin / goosebit-admin (GOOSEBIT_ADMIN_USER/_PASSWORD).
#                    Polls every 2 s (GOOSEBIT_POLL_TIME), 1000 concurrent updates.
#                    --device-auth MODE: setup, strict, lax or external (default: off).
# goosebit_stop      stops the server started in DIR.
# goosebit_make_schema FILE
#                    writes an empty database with goosebit's schema (aerich's migrations) to FILE;
#                    goosebit_start copies GOOSEBIT_DB_TEMPLATE, when it names such a file, instead
#                    of running aerich (a Python start less: under emulation, as in the BlueZ VM,
#                    that is most of a minute).
#
# After goosebit_start: GOOSEBIT_URL (http(s)://127.0.0.1:PORT), GOOSEBIT_CA (with --tls),
# GOOSEBIT_ADMIN_USER, GOOSEBIT_ADMIN_PASSWORD are exported.

goosebit_version=0.2.12
goosebit_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
goosebit_venv="$goosebit_root/.build-goosebit"
: "${GOOSEBIT_ADMIN_USER:=admin}"
: "${GOOSEBIT_ADMIN_PASSWORD:=goosebit-admin}"
: "${GOOSEBIT_POLL_TIME:=00:00:02}"

goosebit_install() {
  local installed
  installed="$("$goosebit_venv/bin/python" -m pip show goosebit 2>/dev/null | sed -n 's/^Version: //p' || true)"
  [[ "$installed" == "$goosebit_version" ]] && return 0
  echo "goosebit: installing goosebit==$goosebit_version into $goosebit_venv" >&2
  if [[ ! -x "$goosebit_venv/bin/python" ]]; then
    "${PYTHON:-python3}" -m venv "$goosebit_venv" >&2 || { echo "goosebit: python3 -m venv failed" >&2; return 1; }
  fi
  "$goosebit_venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    "goosebit==$goosebit_version" </dev/null >&2 || { echo "goosebit: pip install failed" >&2; return 1; }
}

# A CA and a server certificate for 127.0.0.1 and localhost, in DIR.
goosebit_make_certs() {
  local dir="$1"
  mkdir -p "$dir"
  (
    cd "$dir" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=BlueOTA test CA" \
      -keyout ca.key -out ca.crt -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null &&
      openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr 2>/dev/null &&
      printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
        "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost" >server.ext &&
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
        -extfile server.ext -out server.crt 2>/dev/null &&
      rm -f server.csr server.ext ca.srl
  )
}

# aerich creates the schema in DIR's database (goosebit only checks that it is there), as
# goosebit's Dockerfile does. DIR has goosebit.yaml.
goosebit_migrate() {
  local dir="$1" migrations
  migrations="$(cd "$dir" && GOOSEBIT_SETTINGS="$dir/goosebit.yaml" "$goosebit_venv/bin/python" -c \
    'import importlib.util,os;print(os.path.dirname(importlib.util.find_spec("goosebit").origin)+"/db/migrations")')" || return 1
  printf '[tool.aerich]\ntortoise_orm = "goosebit.db.config.TORTOISE_CONF"\nlocation = "%s"\n' "$migrations" >"$dir/aerich.toml"
  (cd "$dir" && GOOSEBIT_SETTINGS="$dir/goosebit.yaml" TMPDIR="$dir/tmp" \
    "$goosebit_venv/bin/aerich" --config "$dir/aerich.toml" upgrade </dev/null >>"$dir/goosebit.log" 2>&1) || {
    echo "goosebit: aerich upgrade failed, see $dir/goosebit.log" >&2; return 1
  }
}

goosebit_make_schema() {
  local file="$1" dir
  goosebit_install || return 1
  dir="$(mktemp -d "${TMPDIR:-/tmp}/goosebit-schema.XXXXXX")" || return 1
  mkdir -p "$dir/tmp"
  printf 'db_uri: "sqlite://%s/db.sqlite3"\nartifacts_dir: "%s/artifacts"\n' "$dir" "$dir" >"$dir/goosebit.yaml"
  goosebit_migrate "$dir" && cp "$dir/db.sqlite3" "$file.tmp" && mv "$file.tmp" "$file"
  local status=$?
  ((status == 0)) || cat "$dir/goosebit.log" >&2
  rm -rf "$dir"
  return "$status"
}

goosebit_start() {
  local dir="$1" port="$2" tls=0 cert="" key="" auth="" scheme=http
  shift 2 || { echo "usage: goosebit_start DIR PORT [--tls [CERT KEY]] [--device-auth MODE]" >&2; return 2; }
  while (($#)); do
    case "$1" in
      --tls)
        tls=1
        if [[ $# -ge 3 && "$2" != --* ]]; then cert="$2" key="$3"; shift 2; fi ;;
      --device-auth) auth="$2"; shift ;;
      *) echo "goosebit_start: unknown option $1" >&2; return 2 ;;
    esac
    shift
  done
  goosebit_install || return 1
  mkdir -p "$dir" || return 1
  dir="$(cd "$dir" && pwd)"
  if [[ -f "$dir/goosebit.pid" ]] && kill -0 "$(cat "$dir/goosebit.pid")" 2>/dev/null; then
    echo "goosebit: already running in $dir" >&2; return 1
  fi
  mkdir -p "$dir/artifacts" "$dir/tmp"
  local uvicorn_tls=()
  if ((tls)); then
    scheme=https
    if [[ -z "$cert" ]]; then
      goosebit_make_certs "$dir/tls" || { echo "goosebit: openssl failed" >&2; return 1; }
      cert="$dir/tls/server.crt" key="$dir/tls/server.key"
      export GOOSEBIT_CA="$dir/tls/ca.crt"
    fi
    uvicorn_tls=(--ssl-certfile "$cert" --ssl-keyfile "$key")
  fi
  {
    echo "# written by Scripts/fleet/goosebit.sh"
    echo "port: $port"
    echo "tenant: DEFAULT"
    echo "poll_time: \"$GOOSEBIT_POLL_TIME\""
    echo "max_concurrent_updates: 1000"
    echo "db_uri: \"sqlite://$dir/db.sqlite3\""
    echo "artifacts_dir: \"$dir/artifacts\""
    echo "secret_key: \"$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')\""
    echo "track_device_ip: true"
    if [[ -n "$auth" ]]; then
      echo "device_auth:"
      echo "  enable: true"
      echo "  mode: $auth"
    fi
    echo "metrics:"
    echo "  prometheus:"
    echo "    enable: false"
  } >"$dir/goosebit.yaml"
  if [[ -n "${GOOSEBIT_DB_TEMPLATE:-}" && -s "$GOOSEBIT_DB_TEMPLATE" && ! -e "$dir/db.sqlite3" ]]; then
    cp "$GOOSEBIT_DB_TEMPLATE" "$dir/db.sqlite3" || return 1
  else
    goosebit_migrate "$dir" || return 1
  fi
  (
    cd "$dir" || exit 1
    GOOSEBIT_SETTINGS="$dir/goosebit.yaml" TMPDIR="$dir/tmp" PYTHONDONTWRITEBYTECODE=1 \
      exec "$goosebit_venv/bin/python" -m uvicorn goosebit:app --host 127.0.0.1 --port "$port" \
      "${uvicorn_tls[@]}" </dev/null >>"$dir/goosebit.log" 2>&1
  ) &
  echo $! >"$dir/goosebit.pid"
  export GOOSEBIT_URL="$scheme://127.0.0.1:$port"
  export GOOSEBIT_ADMIN_USER GOOSEBIT_ADMIN_PASSWORD
  local curl_tls=(-k) i
  for ((i = 0; i < 300; i++)); do
    if curl -s -o /dev/null "${curl_tls[@]}" "$GOOSEBIT_URL/login"; then break; fi
    kill -0 "$(cat "$dir/goosebit.pid")" 2>/dev/null || { echo "goosebit: exited, see $dir/goosebit.log" >&2; return 1; }
    sleep 0.1
  done
  ((i < 300)) || { echo "goosebit: no answer on $GOOSEBIT_URL after 30 s" >&2; goosebit_stop "$dir"; return 1; }
  # The first user: POST /setup (a form, as the UI's setup page sends it) makes a user with
  # every permission ("*") if none of that name exists; it then answers a bearer token.
  curl -sf "${curl_tls[@]}" -o /dev/null "$GOOSEBIT_URL/setup" \
    --data-urlencode "username=$GOOSEBIT_ADMIN_USER" --data-urlencode "password=$GOOSEBIT_ADMIN_PASSWORD" || {
    echo "goosebit: could not set up the admin user" >&2; return 1
  }
  curl -sf "${curl_tls[@]}" -o /dev/null "$GOOSEBIT_URL/login" \
    --data-urlencode "username=$GOOSEBIT_ADMIN_USER" --data-urlencode "password=$GOOSEBIT_ADMIN_PASSWORD" || {
    echo "goosebit: the admin user cannot log in (an older db with another password?)" >&2; return 1
  }
}

goosebit_stop() {
  local dir="$1" pid i
  [[ -f "$dir/goosebit.pid" ]] || return 0
  pid="$(cat "$dir/goosebit.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$dir/goosebit.pid"
}

# One check of the VM run's gateway step (Scripts/bluez/guest-multi.sh in the guest, then
# Scripts/test-bluez.sh on the host): a "PASS gateway: NAME" or "FAIL gateway: NAME" line, counted in
# gw_passes and gw_failures. All of a side's checks run; the caller fails once at the end.
gateway_check() { # NAME COMMAND...
  local name="$1"
  shift
  if "$@"; then
    echo "PASS gateway: $name"
    gw_passes=$((gw_passes + 1))
  else
    echo "FAIL gateway: $name"
    gw_failures=$((gw_failures + 1))
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  command="${1:-}"
  shift || true
  case "$command" in
    install) time goosebit_install ;;
    start)
      goosebit_start "$@"
      echo "goosebit: $GOOSEBIT_URL (admin: $GOOSEBIT_ADMIN_USER / $GOOSEBIT_ADMIN_PASSWORD)${GOOSEBIT_CA:+, CA $GOOSEBIT_CA}" ;;
    stop) goosebit_stop "$@" ;;
    make-schema) goosebit_make_schema "$@" ;;
    *) echo "usage: $0 install | start DIR PORT [--tls [CERT KEY]] [--device-auth MODE] | stop DIR | make-schema FILE" >&2; exit 2 ;;
  esac
fi
