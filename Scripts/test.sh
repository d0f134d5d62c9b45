#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the Debian packages it needs,
# builds, runs every Swift test, the Raspberry Pi install script staged into a temporary root, then
# a 10 s run of each fuzz target (Scripts/fuzz.sh --seconds 10), then the real-stack test (bluetoothd in a VM
# with two virtual controllers, Scripts/test-bluez.sh; it installs qemu and fetches Debian's kernel itself),
# then the real bootloaders (Debian's U-Boot and GRUB under qemu, Scripts/test-bootloaders.sh). The
# gateway (otactl gateway) runs against a real goosebit from PyPI (Scripts/fleet/test-gateway.sh)
# after the lab test.
# The lint (`swift format lint --strict`, the project's .swift-format) runs first and fails the run;
# the statement check (Scripts/check-statements.py: every statement of docs/PROTOCOL.md, docs/SMP.md
# and docs/SECURITY.md named by a test) runs always and counts as one test. Non-interactive; CI runs
# exactly this (.ci/run).
#
#   Scripts/test.sh                      # everything
#   Scripts/test.sh --filter PowerCut    # extra arguments go to `swift test`; the six stages after
#                                        # it are left out (it says which) and counted as skipped
#
# It ends with a table of the stages (counts and times), every failure by name, and the closing line
# "N passed, M failed, K skipped": skipped counts the Swift tests Swift Testing skipped (root-only,
# no private D-Bus), the checks a stage left out, and the stages that did not run (left out by an
# argument, the lab browser not installable). Each stage after the Swift tests counts its own tests
# in one line (run_stage; docs/TESTING.md). The lab test's screenshots go to a temporary directory,
# so a run leaves docs/lab/*.png as they are (docs/LAB.md says how to regenerate them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh
source Scripts/test-counts.sh
# Each stage header says how long the test command has run so far (bash $SECONDS), so that a CI
# log shows where the time went: "== [12:34 elapsed] real BlueZ stack (VM)".
stage() { printf "== [%d:%02d elapsed] %s\n" "$((SECONDS / 60))" "$((SECONDS % 60))" "$*"; }
# Every failure by name, said again under the closing count, so that the tail of a CI log (all a
# reader may get) names what failed: a failed Swift test, a stage's FAIL lines, a fuzz target's
# crash, or the stage and its exit status when it named nothing.
failures=()
note_failures() { # stage-name status log
  local name="$1" stage_status="$2" log_file="$3" line named=0
  while IFS= read -r line; do
    failures+=("$name: $line")
    named=$((named + 1))
  done < <(grep -E '^(✘ Test .* failed after|FAIL|[A-Za-z0-9 ]+: FAIL|FUZZ target=.* crashes=[1-9])' "$log_file" |
    grep -v '^✘ Test run with' | head -n 10 || true)
  if ((stage_status != 0 && named == 0)); then
    failures+=("$name: exit $stage_status, no failure named in its output")
  fi
}
# What each stage counted and how long it took: the table under the closing count.
table=()
row() { # name passed failed skipped seconds
  table+=("$(printf '%-44s %6s %6s %7s %6s' "$1" "$2" "$3" "$4" "$5 s")")
}
total=0
failed=0
skipped=0
status=0
add() { # name passed failed skipped started-at (SECONDS)
  total=$((total + $2 + $3))
  failed=$((failed + $3))
  skipped=$((skipped + $4))
  row "$1" "$2" "$3" "$4" "$((SECONDS - $5))"
}
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# One counting protocol: a stage's command ends with "[name: ]N passed, M failed[, K skipped]"
# (Scripts/test-counts.sh, stage_counts), and its counts join the total. A stage that exits non-zero
# without counting a failure, or prints no such line, counts one failed test more.
run_stage() { # name command...
  local name="$1" started=$SECONDS stage_status=0 counts passes=0 fails=0 skips=0
  shift
  "$@" 2>&1 | tee "$log" || stage_status=$?
  counts="$(stage_counts "$log")"
  [[ -z "$counts" ]] || read -r passes fails skips <<<"$counts"
  if ((stage_status != 0 && fails == 0)) || [[ -z "$counts" ]]; then
    fails=$((fails + 1))
    [[ -n "$counts" ]] || echo "$name: no counting line (\"N passed, M failed\") in its output"
  fi
  ((stage_status == 0 && fails == 0)) || status=1
  note_failures "$name" "$stage_status" "$log"
  add "$name" "$passes" "$fails" "$skips" "$started"
}

# A check that is one test: it passes when its command does.
run_check() { # name command...
  local name="$1" started=$SECONDS check_status=0
  shift
  "$@" || check_status=$?
  if ((check_status != 0)); then
    failures+=("$name: $* exited $check_status")
    status=1
  fi
  add "$name" "$((check_status == 0 ? 1 : 0))" "$((check_status == 0 ? 0 : 1))" 0 "$started"
  return "$check_status"
}

stage "install (Scripts/setup.sh: every Debian package, venv and VM part the stages below need)"
started=$SECONDS
# The Swift tests need the real imgtool (Tests/OTATrustTests), smpmgr and mcumgr-toolkit (the
# interop tests), each a venv under the checkout; the whole run needs the rest too (the same
# three among them). What cannot be installed is left to its stage, which fails or skips as it
# would have.
if [[ $# -eq 0 ]]; then
  blueota_install_test_tools || echo "install: something could not be installed (above); its stage will say"
else
  blueota_install_imgtool
  blueota_install_smpmgr
  blueota_install_mcumgr_toolkit
fi
row "install" - - - "$((SECONDS - started))"

stage "lint (swift format with .swift-format; Tests/.swift-format allows force unwraps in tests)"
run_check lint swift format lint --strict --recursive Sources Tests Package.swift ||
  echo "lint: FAIL: run 'swift format --in-place --recursive Sources Tests Package.swift' and fix what it cannot"

stage "statements (Scripts/check-statements.py: every statement of the wire contracts has a test)"
run_check statements python3 Scripts/check-statements.py || true

stage "build ($(swift --version 2>/dev/null | head -n 1))"
started=$SECONDS
swift build --build-tests
row "build" - - - "$((SECONDS - started))"

stage "test"
started=$SECONDS
swift_status=0
swift test --skip-build "$@" 2>&1 | tee "$log" || swift_status=$?
# The suite is Swift Testing (Scripts/test-counts.sh reads its output).
read -r swift_ran swift_failed swift_skipped < <(swift_test_counts "$log")
# A run that failed with no failed test named (a crash) is one failure.
((swift_status == 0 || swift_failed > 0)) || swift_failed=1
((swift_status == 0)) || status=1
note_failures "swift test" "$swift_status" "$log"
add "swift test" "$((swift_ran - swift_failed < 0 ? 0 : swift_ran - swift_failed))" "$swift_failed" "$swift_skipped" "$started"

if [[ $# -ne 0 ]]; then
  stage "left out by the arguments ($*), counted as 6 skipped: Raspberry Pi install kit, lab browser test, gateway against goosebit, fuzzing, real BlueZ stack (VM), real bootloaders (qemu)"
  row "left out by the arguments" 0 0 6 0
  skipped=$((skipped + 6))
else
  stage "Raspberry Pi install kit (staged into a temporary root)"
  rpi_install() { bash Scripts/rpi/test-install.sh 2>&1 | tail -n 20; }
  run_stage "Raspberry Pi install kit" rpi_install

  stage "the lab page in a browser (Scripts/lab/test_lab.py: headless chromium, selenium)"
  started=$SECONDS
  if blueota_install_lab_browser; then
    # Its screenshots go to a temporary directory: the run leaves docs/lab/*.png as they are.
    shots="$(mktemp -d)"
    run_stage "lab page" "$BLUEOTA_SELENIUM_PYTHON" Scripts/lab/test_lab.py --bin "$(swift build --show-bin-path)" --shots "$shots"
    rm -rf "$shots"
  else
    echo "lab: SKIPPED: chromium, chromium-driver or selenium could not be installed (see above)"
    add "lab page (not installable)" 0 0 1 "$started"
  fi

  stage "the gateway against goosebit (Scripts/fleet/test-gateway.sh: hawkBit's DDI API from PyPI)"
  run_stage "gateway against goosebit" env BLUEOTA_BIN="$(swift build --show-bin-path)" bash Scripts/fleet/test-gateway.sh

  stage "fuzzing (Scripts/fuzz.sh: each libFuzzer target for 10 s; docs/FUZZING.md)"
  run_stage "fuzzing" bash Scripts/fuzz.sh --seconds 10

  stage "real BlueZ stack (VM)"
  # Three VM runs, one test each: EATT on, EATT off, several devices (with the gateway on goosebit).
  run_stage "real BlueZ stack (VM)" bash Scripts/test-bluez.sh

  stage "real bootloaders (Scripts/test-bootloaders.sh: Debian's U-Boot and GRUB under qemu)"
  run_stage "real bootloaders (qemu)" bash Scripts/test-bootloaders.sh
fi

echo
printf '%-44s %6s %6s %7s %8s\n' "stage" passed failed skipped time
printf '%s\n' "${table[@]}"
if ((${#failures[@]} != 0)); then
  echo "what failed:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$((total - failed)) passed, ${failed} failed, ${skipped} skipped"
exit "$status"
