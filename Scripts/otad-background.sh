#!/usr/bin/env bash
# Sourced by the demo and the link benchmark: a work folder that is removed on exit, and an otad
# started in the background and stopped again.
#   otad_start BIN SOCKET LOG ARGS...   starts "BIN/otad run ARGS... --socket SOCKET", waits for it
#   otad_stop                            SIGTERM, and waits for it to exit
work="$(mktemp -d)"
otad_pid=""
otad_cleanup() {
  otad_stop
  rm -rf "$work"
}
trap otad_cleanup EXIT

otad_start() {
  local bin="$1" socket="$2" log="$3"
  shift 3
  "$bin/otad" run "$@" --socket "$socket" >"$log" 2>&1 &
  otad_pid=$!
  for _ in $(seq 250); do [[ -S "$socket" ]] && return 0; sleep 0.02; done
  cat "$log" >&2
  echo "otad did not start" >&2
  return 1
}

otad_stop() {
  if [[ -n "$otad_pid" ]]; then
    kill "$otad_pid" 2>/dev/null && wait "$otad_pid" 2>/dev/null || true
    otad_pid=""
  fi
}
