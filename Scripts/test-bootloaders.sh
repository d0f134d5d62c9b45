#!/usr/bin/env bash
# The real bootloaders decide: Debian 12's U-Boot (qemu_arm64, under qemu-system-aarch64) and GRUB
# (grub-mkstandalone on OVMF, under qemu-system-x86_64) run the project's own boot script and
# grub.cfg over the environment otad's backends write with the real fw_setenv and grub-editenv,
# through trials that confirm, fail, hang and fall back, a damaged environment, and kills at each
# step of an environment write (Scripts/bootloaders/*/test.sh say what each does).
# Installs the Debian packages it needs; takes the otad and otactl of `swift build -c release` (or
# BLUEOTA_BIN).
# Prints each half's PASS/FAIL lines and its `BOOTLOADER <name> boots=... cycles=... cuts=...
# seconds_per_boot=...` line, then "bootloaders: N passed, M failed". Part of Scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh
blueota_install_debian "${blueota_bootloader_packages[@]}"
# Release builds (Scripts/test-bluez.sh has made them already in the test command): under software
# emulation a debug otad takes 13 s to start listening in the GRUB guest, a release one a fraction.
if [[ -z "${BLUEOTA_BIN:-}" ]]; then
  # The flags of test-bluez.sh's build, so that after it this one has nothing to do.
  swift build -c release -debug-info-format none --product otad >/dev/null
  swift build -c release -debug-info-format none --product otactl >/dev/null
  BLUEOTA_BIN="$(swift build -c release --show-bin-path)"
  export BLUEOTA_BIN
fi

passed=0
failed=0
status=0
for loader in uboot grub; do
  echo "== $loader (Scripts/bootloaders/$loader/test.sh)"
  log="$(mktemp)"
  run=0
  bash "Scripts/bootloaders/$loader/test.sh" </dev/null 2>&1 | tee "$log" || run=$?
  passes="$(grep -c '^PASS ' "$log" || true)"
  fails="$(grep -c '^FAIL ' "$log" || true)"
  if ((run != 0 && fails == 0)); then
    echo "FAIL $loader: the test stopped with exit $run before it said what failed"
    fails=1
  fi
  grep -q "^BOOTLOADER $loader " "$log" || echo "(no BOOTLOADER line from $loader)"
  passed=$((passed + passes))
  failed=$((failed + fails))
  ((run == 0 && fails == 0)) || status=1
  rm -f "$log"
done
echo "bootloaders: $passed passed, $failed failed"
exit "$status"
