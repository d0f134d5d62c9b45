#!/usr/bin/env bash
# Installs the Debian packages BlueOTA builds and tests with, and finds the Swift toolchain.
# Sourced by the other scripts; safe to run again (apt-get skips what is installed).
#
# Debian 12: pkg-config, zlib1g-dev and libdbus-1-dev for the C libraries, libbluetooth-dev for the Bluetooth socket headers; python3 for the image
# script; python3-venv for imgtool's private environment (blueota_install_imgtool). Swift 6 itself does not come from Debian: install it from swift.org into /opt/swift (or
# put `swift` on PATH) first.
set -euo pipefail

# libubootenv-tool, grub-common: the real fw_printenv/fw_setenv and grub-editenv, for
# Tests/OTABootTests/UBootRealToolsTests and GrubRealToolsTests. libcurl4-openssl-dev: the gateway's
# HTTP client (CCurl). cpio: Tests/OTAGatewayTests check our .swu archives against GNU cpio.
# libzstd-dev: zstd frames against the running image (CZstd); zstd: the reference CLI whose
# --patch-from frames the device tests decode.
blueota_packages=(pkg-config zlib1g-dev libdbus-1-dev libbluetooth-dev python3 python3-pip python3-venv ca-certificates
  libubootenv-tool grub-common libcurl4-openssl-dev cpio libzstd-dev zstd)

blueota_missing_packages() {
  local missing=()
  for package in "${blueota_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  echo "${missing[@]:-}"
}

blueota_install_packages() {
  local missing
  missing="$(blueota_missing_packages)"
  if [[ -z "${missing// /}" ]]; then
    return 0
  fi
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: $missing" >&2; return 1; }
    sudo=(sudo)
  fi
  echo "setup: installing Debian packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  # shellcheck disable=SC2086
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends $missing </dev/null
}

blueota_find_swift() {
  if ! command -v swift >/dev/null 2>&1; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
      if [[ -x "$candidate/swift" ]]; then
        export PATH="$candidate:$PATH"
        break
      fi
    done
  fi
  if ! command -v swift >/dev/null 2>&1; then
    echo "setup: no Swift toolchain found. Install Swift 6 from swift.org (e.g. into /opt/swift)" >&2
    echo "       and run this again." >&2
    return 1
  fi
}

# Pinned PyPI packages in a Python venv of their own (a venv because Debian 12's pip refuses to
# install into the system Python, PEP 668). Does nothing when `pip show NAMES` already reports
# exactly VERSIONS (space-separated, in the same order).
#   blueota_install_pinned_venv VENV "NAME..." "VERSION..." REQUIREMENT...
blueota_install_pinned_venv() {
  local venv="$1" names="$2" versions="$3" python="${PYTHON:-python3}" installed
  shift 3
  # sed reads pip's whole output: `grep -q` would stop early, and under pipefail pip's SIGPIPE
  # would read as "not installed" and install again on every run.
  # shellcheck disable=SC2086 # the names are words
  installed="$("$venv/bin/python" -m pip show $names 2>/dev/null | sed -n 's/^Version: //p' | tr '\n' ' ' || true)"
  [[ "$installed" == "$versions " ]] && return 0
  echo "setup: installing $* into $venv" >&2
  if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv" >&2 || {
      echo "setup: '$python -m venv' failed; on Debian install python3-venv" >&2
      return 1
    }
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "$@" </dev/null >&2 || {
    echo "setup: pip could not install $* (network? PyPI?)" >&2
    return 1
  }
}

# A PyPI tool, pinned, in its own venv at <repo>/.build-NAME. Prints the tool's path.
#   blueota_install_pypi_tool NAME VERSION
blueota_install_pypi_tool() {
  local name="$1" version="$2" venv
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build-$name"
  blueota_install_pinned_venv "$venv" "$name" "$version" "$name==$version" || return 1
  echo "$venv/bin/$name"
}

# MCUboot's imgtool: the interop tests (Tests/OTATrustTests) run it to make and check images.
# Exports BLUEOTA_IMGTOOL, where the tests look first.
blueota_imgtool_version=2.5.0
blueota_install_imgtool() {
  local path
  path="$(blueota_install_pypi_tool imgtool "$blueota_imgtool_version")" || return 1
  export BLUEOTA_IMGTOOL="$path"
}

# smpmgr (Intercreate's MCUmgr client): the SMP process tests (Tests/ProcessTests/SMPProcessTests)
# drive otad's SMP server over UDP with it. Exports BLUEOTA_SMPMGR, where the tests look first.
blueota_smpmgr_version=0.19.1
blueota_install_smpmgr() {
  local path
  path="$(blueota_install_pypi_tool smpmgr "$blueota_smpmgr_version")" || return 1
  export BLUEOTA_SMPMGR="$path"
}

# mcumgr-toolkit (Finomnis's MCUmgr client, a Python API over Rust, written from Zephyr's SMP
# specification): the process tests (Tests/ProcessTests/MCUmgrToolkitProcessTests) drive otad's SMP
# server over UDP with it through Scripts/smp/mcumgr_toolkit_steps.py. A library: its own venv at
# <repo>/.build-mcumgr-toolkit. Exports BLUEOTA_MCUMGR_TOOLKIT_PYTHON, the venv's python.
blueota_mcumgr_toolkit_version=0.20.0
blueota_install_mcumgr_toolkit() {
  local venv
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build-mcumgr-toolkit"
  blueota_install_pinned_venv "$venv" mcumgr-toolkit "$blueota_mcumgr_toolkit_version" \
    "mcumgr-toolkit==$blueota_mcumgr_toolkit_version" || return 1
  export BLUEOTA_MCUMGR_TOOLKIT_PYTHON="$venv/bin/python"
}

# smpclient (Intercreate's MCUmgr library) with its BLE transport (bleak): the real-stack test
# (Scripts/bluez/smp_ble.py, guest-e2e step 11) drives otad's SMP service through bluetoothd with
# it. A library, not a tool: its own venv at <repo>/.build-smpclient, pinned with bleak. Exports
# BLUEOTA_SMPCLIENT_PYTHON, the venv's python.
blueota_smpclient_version=7.3.0
blueota_bleak_version=3.1.0
blueota_install_smpclient() {
  local venv
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build-smpclient"
  blueota_install_pinned_venv "$venv" "smpclient bleak" "$blueota_smpclient_version $blueota_bleak_version" \
    "smpclient[ble]==$blueota_smpclient_version" "bleak==$blueota_bleak_version" || return 1
  export BLUEOTA_SMPCLIENT_PYTHON="$venv/bin/python"
}

# Nordic's Legacy DFU from clients we did not write (guest-e2e.sh step 13): nrf-ota (a Legacy DFU
# client over bleak) and adafruit-nrfutil (makes the DFU package), pinned, in <repo>/.build-nordic.
# Exports BLUEOTA_NORDIC_PYTHON, the venv's python.
blueota_nrf_ota_version=0.4.0
blueota_adafruit_nrfutil_version=0.5.3.post16
blueota_install_nordic_clients() {
  local venv
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build-nordic"
  blueota_install_pinned_venv "$venv" "nrf-ota adafruit-nrfutil bleak" \
    "$blueota_nrf_ota_version $blueota_adafruit_nrfutil_version $blueota_bleak_version" \
    "nrf-ota==$blueota_nrf_ota_version" "adafruit-nrfutil==$blueota_adafruit_nrfutil_version" \
    "bleak==$blueota_bleak_version" || return 1
  export BLUEOTA_NORDIC_PYTHON="$venv/bin/python"
}

# Nordic's own nrfutil (guest-e2e.sh step 14): `nrfutil keys` and `nrfutil pkg generate` make the
# signed Secure DFU package, and its Secure DFU client (nordicsemi.dfu) sends it through
# Scripts/bluez/nrfutil_dfu_ble.py over bleak. 6.1.7 is the last nrfutil on PyPI; it declares
# Python < 3.11 only because of its dongle driver (pc_ble_driver_py, a native library built for
# 3.10 and older): its own code runs on Debian 12's 3.11. So its dependencies are installed pinned,
# nrfutil itself without them, and of the driver only the two pure-Python modules nrfutil imports
# (its package marker and its exceptions), from the driver's own wheel. In <repo>/.build-nrfutil;
# exports BLUEOTA_NRFUTIL_PYTHON, the venv's python.
blueota_nrfutil_version=6.1.7
blueota_pc_ble_driver_version=0.17.0
blueota_install_nrfutil() {
  local venv site wheels
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build-nrfutil"
  blueota_install_pinned_venv "$venv" "bleak protobuf wrapt" "$blueota_bleak_version 3.20.3 2.5.2" \
    "bleak==$blueota_bleak_version" protobuf==3.20.3 click==8.5.1 crcmod==1.7 ecdsa==0.19.2 intelhex==2.3.0 \
    libusb1==1.9.3 piccata==2.0.3 pyserial==3.5 pyspinel==1.0.3 PyYAML==6.0.4 tqdm==4.70.1 wrapt==2.5.2 || return 1
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || return 1
  if [[ "$("$venv/bin/python" -m pip show nrfutil 2>/dev/null | sed -n 's/^Version: //p')" != "$blueota_nrfutil_version" ]]; then
    echo "setup: installing nrfutil==$blueota_nrfutil_version into $venv (without its dongle driver)" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps \
      --ignore-requires-python "nrfutil==$blueota_nrfutil_version" </dev/null >&2 ||
      { echo "setup: pip could not install nrfutil (network? PyPI?)" >&2; return 1; }
  fi
  if [[ ! -s "$site/pc_ble_driver_py/exceptions.py" ]]; then
    wheels="$(mktemp -d)"
    "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
      --only-binary :all: --python-version 3.10 --platform manylinux2014_x86_64 \
      "pc_ble_driver_py==$blueota_pc_ble_driver_version" -d "$wheels" </dev/null >&2 &&
      "$venv/bin/python" - "$wheels" "$site" <<'PY' || { rm -rf "$wheels"; echo "setup: no pc_ble_driver_py wheel" >&2; return 1; }
import glob, sys, zipfile
wheel = zipfile.ZipFile(glob.glob(sys.argv[1] + "/pc_ble_driver_py-*.whl")[0])
for name in ("pc_ble_driver_py/__init__.py", "pc_ble_driver_py/exceptions.py"):
    wheel.extract(name, sys.argv[2])
PY
    rm -rf "$wheels"
  fi
  "$venv/bin/nrfutil" version >/dev/null 2>&1 || { echo "setup: nrfutil $blueota_nrfutil_version does not run" >&2; return 1; }
  export BLUEOTA_NRFUTIL_PYTHON="$venv/bin/python"
}

# Installs the Debian packages named that are missing (apt-get update first), quietly, without
# stopping the caller: returns non-zero when they cannot be installed.
blueota_install_debian() {
  local missing=() sudo=() package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  ((${#missing[@]} > 0)) || return 0
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; return 1; }
    sudo=(sudo)
  fi
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  { "${sudo[@]}" apt-get update -qq &&
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null; } >&2
}

# The lab's browser test (Scripts/lab/test_lab.py): Debian's chromium and chromium-driver, and
# selenium, pinned, in its own venv at <repo>/.build-selenium. Exports BLUEOTA_SELENIUM_PYTHON, the
# venv's python. Fails (without stopping the caller) when either cannot be installed.
blueota_selenium_version=4.43.0
blueota_install_lab_browser() {
  local venv
  blueota_install_debian chromium chromium-driver || return 1
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build-selenium"
  blueota_install_pinned_venv "$venv" selenium "$blueota_selenium_version" "selenium==$blueota_selenium_version" ||
    return 1
  export BLUEOTA_SELENIUM_PYTHON="$venv/bin/python"
}

# The Debian packages of the real-bootloader stage (Scripts/test-bootloaders.sh).
blueota_bootloader_packages=(u-boot-qemu u-boot-tools libubootenv-tool qemu-system-arm qemu-system-x86 ovmf
  grub-efi-amd64-bin grub-common mtools dosfstools fdisk socat strace busybox-static jq python3 cpio)

# Everything the whole test command needs, installed before any stage runs (Scripts/test.sh's
# install stage), so that the stages only run and the install's time is counted apart: the venvs of
# the interop tests and the VM's clients, goosebit, the bootloaders' packages, the VM's packages,
# kernel and initramfs (Scripts/vm/prepare.sh), the lab's browser. Each stage's script still asks
# for what it needs, so that it runs alone too, and finds it here. A part that cannot be installed
# is named, and left to its stage, which fails or skips as it would have; returns non-zero then.
blueota_install_test_tools() {
  local root part missing=()
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  for part in imgtool smpmgr mcumgr_toolkit smpclient nordic_clients nrfutil lab_browser; do
    "blueota_install_$part" || missing+=("$part")
  done
  blueota_install_debian "${blueota_bootloader_packages[@]}" || missing+=("the bootloaders' packages")
  # shellcheck source=Scripts/fleet/goosebit.sh
  (source "$root/Scripts/fleet/goosebit.sh" && goosebit_install) || missing+=(goosebit)
  "$root/Scripts/vm/prepare.sh" || missing+=("the VM (Scripts/vm/prepare.sh)")
  ((${#missing[@]} == 0)) || { echo "setup: could not install: ${missing[*]}" >&2; return 1; }
}

blueota_install_packages
blueota_find_swift
