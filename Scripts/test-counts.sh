# Counting for Scripts/test.sh's closing line, kept apart so it can be checked on captured output:
#   source Scripts/test-counts.sh && swift_test_counts saved-swift-test-output.txt
# prints "ran failed skipped" for one `swift test` run (Swift Testing's console output).

# Swift Testing ends with "Test run with N tests in M suites passed|failed after ...", and N counts
# the tests it skipped too. A skipped test (`.enabled(if:)` false: root-only, no dbus-daemon) is
# one line "➜ Test name() skipped." or "➜ Test name() skipped: "why""; a skipped suite has a line
# of its own and one per test in it, so only the test lines are counted. XCTest's own summary says
# 0 tests and is not counted.
swift_test_counts() {
  local log="$1" total failed skipped
  total="$(grep -oE 'Test run with [0-9]+ tests?' "$log" | tail -n 1 | grep -oE '[0-9]+' || true)"
  # A failed test ends in "✘ Test name() failed after 1.4 seconds with 2 issues."; its issues'
  # lines ("recorded an issue at …: Expectation failed") and the run's own line are not tests.
  failed="$(grep -E '^✘ Test .* failed after [0-9.]+ seconds' "$log" | grep -cv '^✘ Test run with' || true)"
  skipped="$(grep -cE '^\S+ Test .* skipped(\.|: ".*")$' "$log" || true)"
  echo "$((${total:-0} - ${skipped:-0})) ${failed:-0} ${skipped:-0}"
}

# The one counting protocol of the other stages: each ends with a line
#   "[name: ]N passed, M failed[, K skipped][ anything after]"
# ("gateway: 77 passed, 0 failed (41 s)", "bootloaders: 38 passed, 0 failed", "3 passed, 0 failed").
# stage_counts LOG prints "passed failed skipped" from the last such line, or nothing when there is
# none (test.sh then counts the stage as one failure).
stage_counts() {
  { grep -E '^([A-Za-z][A-Za-z0-9 ]*: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?' "$1" || true; } | tail -n 1 |
    sed -E 's/^([A-Za-z][A-Za-z0-9 ]*: )?([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*$/\2 \3 \5/' |
    awk 'NF { print $1, $2, ($3 == "" ? 0 : $3) }'
}
