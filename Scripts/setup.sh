#!/usr/bin/env bash
# Installs the Debian packages BlueOTA builds and tests with, and finds the Swift toolchain.
# Sourced by the other scripts; safe to run again (apt-get skips what is installed).
#
# Debian 12: pkg-config, zlib1g-dev and libdbus-1-dev for the C libraries; python3 for the image
# script. Swift 6 itself does not come from Debian: install it from swift.org into /opt/swift (or
# put `swift` on PATH) first.
set -euo pipefail

blueota_packages=(pkg-config zlib1g-dev libdbus-1-dev python3 python3-pip ca-certificates)

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

blueota_install_packages
blueota_find_swift
