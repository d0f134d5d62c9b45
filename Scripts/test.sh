#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the Debian packages it needs,
# builds, runs every Swift test, the Raspberry Pi install script staged into a temporary root, then
# a short run of each fuzz target (Scripts/fuzz.sh), then the real-stack test (bluetoothd in a VM
# with two virtual controllers, Scripts/test-bluez.sh; it installs qemu and fetches Debian's kernel itself).
# The lint (`swift format lint --strict`, the project's .swift-format) runs first and fails the run.
# Non-interactive; CI runs exactly this (.ci/run).
#
#   Scripts/test.sh                      # everything
#   Scripts/test.sh --filter PowerCut    # extra arguments go to `swift test` (the VM test is skipped)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh
# The real imgtool, for the interop tests (Tests/OTATrustTests): a venv in .build-imgtool.
blueota_install_imgtool
blueota_install_smpmgr
blueota_install_mcumgr_toolkit

echo "== lint (swift format with .swift-format; Tests/.swift-format allows force unwraps in tests)"
lint_status=0
swift format lint --strict --recursive Sources Tests Package.swift || lint_status=$?
if ((lint_status != 0)); then
  echo "lint: FAIL: run 'swift format --in-place --recursive Sources Tests Package.swift' and fix what it cannot"
fi

echo "== build ($(swift --version 2>/dev/null | head -n 1))"
swift build --build-tests

echo "== test"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
swift test --skip-build "$@" 2>&1 | tee "$log" || status=$?

# The suite is Swift Testing; XCTest's own summary says 0 tests.
total="$(grep -oE 'Test run with [0-9]+ tests?' "$log" | tail -n 1 | grep -oE '[0-9]+' || echo 0)"
failed="$(grep -cE '^✘ Test .* failed' "$log" || true)"
# The lint counts as one test, and a lint failure fails the run.
total=$((total + 1))
if ((lint_status != 0)); then
  failed=$((failed + 1))
  status=1
fi

if [[ $# -eq 0 ]]; then
  echo "== Raspberry Pi install kit (staged into a temporary root)"
  rpi_status=0
  bash Scripts/rpi/test-install.sh 2>&1 | tail -n 20 | tee "$log" || rpi_status=$?
  total=$((total + 1))
  if ((rpi_status != 0)); then
    failed=$((failed + 1))
    status=1
  fi

  echo "== the lab page in a browser (Scripts/lab/test_lab.py: headless chromium, selenium)"
  if blueota_install_lab_browser; then
    lab_status=0
    "$BLUEOTA_SELENIUM_PYTHON" Scripts/lab/test_lab.py --bin "$(swift build --show-bin-path)" 2>&1 | tee "$log" ||
      lab_status=$?
    lab_line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)"
    if [[ -n "$lab_line" ]]; then
      total=$((total + $(echo "$lab_line" | cut -d' ' -f1) + $(echo "$lab_line" | cut -d' ' -f3)))
      failed=$((failed + $(echo "$lab_line" | cut -d' ' -f3)))
    fi
    if ((lab_status != 0)); then
      [[ -n "$lab_line" && "$(echo "$lab_line" | cut -d' ' -f3)" != 0 ]] || { total=$((total + 1)); failed=$((failed + 1)); }
      status=1
    fi
  else
    echo "lab: SKIPPED: chromium, chromium-driver or selenium could not be installed (see above)"
  fi

  echo "== fuzzing (Scripts/fuzz.sh: each libFuzzer target for 20 s; docs/FUZZING.md)"
  fuzz_status=0
  bash Scripts/fuzz.sh --seconds 20 2>&1 | tee "$log" || fuzz_status=$?
  fuzz_targets="$(grep -c '^FUZZ target=' "$log" || true)"
  fuzz_crashed="$(grep -cE '^FUZZ target=.* crashes=[1-9]' "$log" || true)"
  if ((fuzz_status != 0 && fuzz_crashed == 0)); then
    # The fuzzers did not build or run: one failure.
    fuzz_targets=$((fuzz_targets + 1))
    fuzz_crashed=1
  fi
  total=$((total + fuzz_targets))
  failed=$((failed + fuzz_crashed))
  ((fuzz_status == 0)) || status=1

  echo "== real BlueZ stack (VM)"
  bluez_status=0
  bash Scripts/test-bluez.sh 2>&1 | tee "$log" || bluez_status=$?
  total=$((total + 2))
  failed=$((failed + $(grep -cE '^EATT (on|off): FAIL' "$log" || true)))
  ((bluez_status == 0)) || status=1
fi

echo
echo "$((total - failed)) passed, ${failed} failed"
exit "$status"
