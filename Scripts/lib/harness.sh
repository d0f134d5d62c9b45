# What the harnesses share, sourced by them (docs/TESTING.md):
#
#   source "$root/Scripts/lib/harness.sh"
#   harness_workdir work gateway-test        # $work: a temporary folder, removed at exit
#   on_exit kill "$pid"                      # run at exit, the last registered first
#   check "otad answers" "$bin/otactl" info --device "$sock"   # PASS/FAIL line, counted
#   pass "what held"; fail "what did not"    # a check decided by the script itself
#   skip "a tool missing here"               # a check left out, counted as skipped
#   wait_until 10 test -S "$sock"            # polls every 0.1 s; 1 when the time is up
#   port="$(free_port)"                      # a free TCP port on 127.0.0.1
#   json "$file" 'j["status"]'               # a Python expression over a JSON file
#   harness_counts gateway                   # "gateway: N passed, M failed, K skipped"; 1 on a failure
#
# The counting line is the one Scripts/test.sh reads from every stage. HARNESS_QUIET=1 prints no
# PASS lines (a failure still says FAIL and why), and `check` then shows a command's output only
# when it fails.
# shellcheck shell=bash

harness_passed=0
harness_failed=0
harness_skipped=0
harness_exit_commands=()

# on_exit COMMAND...: runs COMMAND when the script exits, after those registered later.
on_exit() {
  local quoted
  printf -v quoted '%q ' "$@"
  harness_exit_commands=("$quoted" "${harness_exit_commands[@]}")
  trap harness_run_exit_commands EXIT
}

harness_run_exit_commands() {
  local command
  for command in "${harness_exit_commands[@]}"; do eval "$command" 2>/dev/null || true; done
}

# harness_workdir VARIABLE NAME: VARIABLE names a new temporary folder (under TMPDIR), removed
# when the script exits. (Not `$(...)`: the removal is registered in this shell, not a subshell.)
harness_workdir() {
  local dir
  dir="$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")"
  on_exit rm -rf "$dir"
  printf -v "$1" '%s' "$dir"
}

pass() {
  harness_passed=$((harness_passed + 1))
  [[ "${HARNESS_QUIET:-0}" == 1 ]] || echo "PASS $*"
}

fail() {
  harness_failed=$((harness_failed + 1))
  echo "FAIL $*"
}

skip() {
  harness_skipped=$((harness_skipped + 1))
  echo "SKIP $*"
}

# check NAME COMMAND...: PASS when the command succeeds, else FAIL (with its output when quiet).
check() {
  local name="$1" output
  shift
  if [[ "${HARNESS_QUIET:-0}" == 1 ]]; then
    if output="$("$@" 2>&1)"; then
      pass "$name"
    else
      fail "$name"
      [[ -z "$output" ]] || printf '    %s\n' "${output//$'\n'/$'\n'    }"
    fi
  elif "$@"; then
    pass "$name"
  else
    fail "$name"
  fi
}

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds (0) or SECONDS pass (1).
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  while ! "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# json FILE EXPRESSION: the Python expression's value, `j` being the file's JSON.
json() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}

# harness_counts NAME [SECONDS]: the counting line; returns 1 when a check failed.
harness_counts() {
  echo "$1: $harness_passed passed, $harness_failed failed, $harness_skipped skipped${2:+ ($2 s)}"
  ((harness_failed == 0))
}
