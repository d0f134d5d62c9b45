#!/usr/bin/env bash
# Prints the path of a qemu-system-aarch64 whose flash emulation lets U-Boot's saveenv persist.
#
# Debian 12's own qemu-system-arm (1:7.2+dfsg-7+deb12u4 and later, up to deb12u18 at least) carries
# the backport "hw/pflash: implement update buffer for block writes" (QEMU fcc79f2e0955) without its
# fix "hw/pflash: fix block write start" (QEMU issue 2343, in 8.2.5/9.0.1): the write buffer is
# placed at the address of the write-to-buffer command, which U-Boot's CFI driver issues at the
# start of the sector, so only the first 4 KiB of each sector are ever written ("pflash_write:
# Write to buffer emulation is flawed" with -d unimp) and saveenv fails ("Flash buffer write
# timeout at address 4020000 ... Failed (1)"). No machine or flash option avoids it: virt fixes the
# flash's width and geometry, and the buffer is at most 4 KiB whatever the options.
#
# Debian 12's bookworm-backports has qemu-system-arm 10.0 (fixed). Installing it would replace
# qemu-system-common, which every other qemu-system-* package on the machine shares, so this
# script only downloads the package with apt (a private package list, nothing added to
# /etc/apt) and unpacks it into a cache directory: BLUEOTA_CACHE (default /var/cache/blueota).
# The binary needs no module (boot-once.py runs it with -display none -audio none).
#
# UBOOT_QEMU, when set, is used as it is.
set -euo pipefail
if [[ -n "${UBOOT_QEMU:-}" ]]; then
  echo "$UBOOT_QEMU"
  exit 0
fi
system="$(command -v qemu-system-aarch64 || true)"
if [[ -n "$system" ]] && ! "$system" --version | grep -q 'Debian 1:7\.2'; then
  echo "$system"  # not Debian 12's 7.2: assumed to have the fix
  exit 0
fi
cache="${BLUEOTA_CACHE:-/var/cache/blueota}/qemu-bookworm-backports"
binary="$cache/root/usr/bin/qemu-system-aarch64"
if [[ ! -x "$binary" ]]; then
  mkdir -p "$cache/lists/partial"
  echo 'deb http://deb.debian.org/debian bookworm-backports main' >"$cache/sources.list"
  apt_options=(-o "Dir::Etc::sourcelist=$cache/sources.list" -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$cache/lists")
  apt-get "${apt_options[@]}" update >&2
  (cd "$cache" && apt-get "${apt_options[@]}" download -t bookworm-backports qemu-system-arm >&2)
  rm -rf "$cache/root"
  debs=("$cache"/qemu-system-arm_*.deb)
  dpkg-deb -x "${debs[-1]}" "$cache/root"
fi
"$binary" --version >/dev/null
echo "$binary"
