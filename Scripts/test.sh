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
# The closing line is "N passed, M failed, K skipped": skipped counts the Swift tests Swift Testing
# skipped (root-only, no private D-Bus) and the stages that did not run (left out by an argument,
# the lab browser not installable). The lab test's screenshots go to a temporary directory, so a
# run leaves docs/lab/*.png as they are (docs/LAB.md says how to regenerate them).
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
# The real imgtool, for the interop tests (Tests/OTATrustTests): a venv in .build-imgtool.
blueota_install_imgtool
blueota_install_smpmgr
blueota_install_mcumgr_toolkit

stage "lint (swift format with .swift-format; Tests/.swift-format allows force unwraps in tests)"
lint_status=0
swift format lint --strict --recursive Sources Tests Package.swift || lint_status=$?
if ((lint_status != 0)); then
  failures+=("lint: swift format lint --strict found something")
  echo "lint: FAIL: run 'swift format --in-place --recursive Sources Tests Package.swift' and fix what it cannot"
fi

stage "statements (Scripts/check-statements.py: every statement of the wire contracts has a test)"
statements_status=0
python3 Scripts/check-statements.py || statements_status=$?
((statements_status == 0)) || failures+=("statements: Scripts/check-statements.py exited $statements_status")

stage "build ($(swift --version 2>/dev/null | head -n 1))"
swift build --build-tests

stage "test"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
swift test --skip-build "$@" 2>&1 | tee "$log" || status=$?

# The suite is Swift Testing (Scripts/test-counts.sh reads its output).
read -r total failed skipped < <(swift_test_counts "$log")
note_failures "swift test" "$status" "$log"
# The lint and the statement check count as one test each; either failing fails the run.
total=$((total + 2))
for check_status in "$lint_status" "$statements_status"; do
  if ((check_status != 0)); then
    failed=$((failed + 1))
    status=1
  fi
done

if [[ $# -ne 0 ]]; then
  stage "left out by the arguments ($*), counted as 6 skipped: Raspberry Pi install kit, lab browser test, gateway against goosebit, fuzzing, real BlueZ stack (VM), real bootloaders (qemu)"
  skipped=$((skipped + 6))
fi

# A stage that prints "N passed, M failed": its counts join the total. A stage that failed without
# such a line, or with no failure in it, counts as one failed test.
count_stage() { # status "N passed, M failed"
  local stage_status="$1" line="$2" stage_failed=0
  if [[ -n "$line" ]]; then
    stage_failed="$(echo "$line" | cut -d' ' -f3)"
    total=$((total + $(echo "$line" | cut -d' ' -f1) + stage_failed))
    failed=$((failed + stage_failed))
  fi
  if ((stage_status != 0)); then
    ((stage_failed != 0)) || { total=$((total + 1)); failed=$((failed + 1)); }
    status=1
  fi
}

if [[ $# -eq 0 ]]; then
  stage "Raspberry Pi install kit (staged into a temporary root)"
  rpi_status=0
  bash Scripts/rpi/test-install.sh 2>&1 | tail -n 20 | tee "$log" || rpi_status=$?
  total=$((total + 1))
  note_failures "Raspberry Pi install kit" "$rpi_status" "$log"
  if ((rpi_status != 0)); then
    failed=$((failed + 1))
    status=1
  fi

  stage "the lab page in a browser (Scripts/lab/test_lab.py: headless chromium, selenium)"
  if blueota_install_lab_browser; then
    lab_status=0
    # Its screenshots go to a temporary directory: the run leaves docs/lab/*.png as they are.
    shots="$(mktemp -d)"
    "$BLUEOTA_SELENIUM_PYTHON" Scripts/lab/test_lab.py --bin "$(swift build --show-bin-path)" --shots "$shots" 2>&1 |
      tee "$log" || lab_status=$?
    rm -rf "$shots"
    note_failures "lab" "$lab_status" "$log"
    count_stage "$lab_status" "$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)"
  else
    echo "lab: SKIPPED: chromium, chromium-driver or selenium could not be installed (see above)"
    skipped=$((skipped + 1))
  fi

  stage "the gateway against goosebit (Scripts/fleet/test-gateway.sh: hawkBit's DDI API from PyPI)"
  gateway_status=0
  BLUEOTA_BIN="$(swift build --show-bin-path)" bash Scripts/fleet/test-gateway.sh 2>&1 | tee "$log" || gateway_status=$?
  note_failures "gateway" "$gateway_status" "$log"
  count_stage "$gateway_status" "$(grep -E '^gateway: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 | cut -d' ' -f2-)"

  stage "fuzzing (Scripts/fuzz.sh: each libFuzzer target for 10 s; docs/FUZZING.md)"
  fuzz_status=0
  bash Scripts/fuzz.sh --seconds 10 2>&1 | tee "$log" || fuzz_status=$?
  fuzz_targets="$(grep -c '^FUZZ target=' "$log" || true)"
  fuzz_crashed="$(grep -cE '^FUZZ target=.* crashes=[1-9]' "$log" || true)"
  note_failures "fuzzing" "$fuzz_status" "$log"
  if ((fuzz_status != 0 && fuzz_crashed == 0)); then
    # The fuzzers did not build or run: one failure.
    fuzz_targets=$((fuzz_targets + 1))
    fuzz_crashed=1
  fi
  total=$((total + fuzz_targets))
  failed=$((failed + fuzz_crashed))
  ((fuzz_status == 0)) || status=1

  stage "real BlueZ stack (VM)"
  bluez_status=0
  bash Scripts/test-bluez.sh 2>&1 | tee "$log" || bluez_status=$?
  note_failures "real BlueZ stack" "$bluez_status" "$log"
  # Three VM runs: EATT on, EATT off, several devices (with the gateway on goosebit).
  total=$((total + 3))
  failed=$((failed + $(grep -cE '^(EATT (on|off)|several devices): FAIL' "$log" || true)))
  ((bluez_status == 0)) || status=1

  stage "real bootloaders (Scripts/test-bootloaders.sh: Debian's U-Boot and GRUB under qemu)"
  bootloaders_status=0
  bash Scripts/test-bootloaders.sh 2>&1 | tee "$log" || bootloaders_status=$?
  note_failures "real bootloaders" "$bootloaders_status" "$log"
  bootloaders_line="$(grep -E '^bootloaders: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)"
  if [[ -n "$bootloaders_line" ]]; then
    total=$((total + $(echo "$bootloaders_line" | cut -d' ' -f2) + $(echo "$bootloaders_line" | cut -d' ' -f4)))
    failed=$((failed + $(echo "$bootloaders_line" | cut -d' ' -f4)))
  else
    total=$((total + 1))
    failed=$((failed + 1))
  fi
  ((bootloaders_status == 0)) || status=1
fi

echo
if ((${#failures[@]} != 0)); then
  echo "what failed:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$((total - failed)) passed, ${failed} failed, ${skipped} skipped"
exit "$status"
