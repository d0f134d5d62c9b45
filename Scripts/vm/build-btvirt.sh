#!/usr/bin/env bash
# Builds the btvirt that runs with more than two controllers (Scripts/vm/run.sh --controllers N):
# Debian's own bluez source (the version of the installed bluez-test-tools, with Debian's patches)
# plus one patch of ours, btvirt-handles.patch. Prints the path of the binary. Cached.
#
# Why: btvirt 5.66's emulated controllers give each end of a new link the first connection handle
# free on THAT controller, then tell the peripheral the central's handle (LE Connection Complete)
# and forward ACL packets with the sender's handle. With one link per controller (hci0 to hci1) the
# two agree (42 and 42). A central linked to three peripherals at once gets 42, 43, 44 while each
# peripheral's own first handle is 42: the peripheral's kernel is told of handle 43, its commands
# for 43 fail, it disconnects; the central's side stays "connected" to a link that carries
# nothing, its Connect times out, and later Disconnect Complete events for the wrong handle
# corrupted the kernel's connection list (kernel BUG in hci_chan_del, seen twice). Upstream
# bluez still does this. The patch takes one handle free on both ends; nothing else changes.
#
# The source comes through apt-get's ordinary source download, with a private sources list,
# lists and cache under the cache folder (the host's apt configuration is not touched), and is
# compiled with gcc alone: btvirt needs only emulator/, src/shared/ and lib/ (about 10 s).
#
#   Scripts/vm/build-btvirt.sh CACHE_DIR    # prints CACHE_DIR/btvirt-VERSION-PATCHHASH/btvirt
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:?usage: build-btvirt.sh CACHE_DIR}"
die() { echo "build-btvirt: error: $*" >&2; exit 1; }
patch_file="$here/btvirt-handles.patch"
version="$(dpkg-query -W -f='${Version}' bluez-test-tools 2>/dev/null)" || die "bluez-test-tools is not installed (prepare.sh installs it)"
# The contents only: sha256sum's output names the files, so a checkout in another folder (CI's fresh
# clone) would otherwise build btvirt again for the same patch.
hash="$(cat "$patch_file" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-12)"
out="$cache/btvirt-${version//[^A-Za-z0-9.]/_}-$hash"
if [[ -x "$out/btvirt" ]]; then
  echo "$out/btvirt"
  exit 0
fi
command -v gcc >/dev/null || die "no gcc to build btvirt with"
command -v dpkg-source >/dev/null || die "no dpkg-source (dpkg-dev) to unpack Debian's bluez source"

work="$(mktemp -d "$cache/.btvirt-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Where the host's apt finds binary packages, the same archive for sources (deb-src), in a list
# of our own: the host may have no deb-src lines, and its configuration stays as it is.
uris="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
codename="$(. /etc/os-release && echo "$VERSION_CODENAME")"
echo "deb-src ${uris:-http://deb.debian.org/debian} $codename main" >"$work/sources.list"
echo "deb-src http://deb.debian.org/debian-security $codename-security main" >>"$work/sources.list"
mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/src"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::Archives=$work/archives"
  -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq >&2 || die "apt-get update of the deb-src list failed (network?)"
(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "bluez=$version" >&2) \
  || die "apt-get source bluez=$version failed"
dpkg-source -x "$work/src/bluez_$version.dsc" "$work/bluez" >&2 || die "dpkg-source could not unpack bluez $version"
patch -d "$work/bluez" -p1 <"$patch_file" >&2 || die "btvirt-handles.patch does not apply to bluez $version"

cd "$work/bluez"
printf '#define VERSION "%s"\n' "${version%%-*}" >config.h
# lib/ is included as <bluetooth/...> by some files and as "lib/..." by others.
mkdir -p include/bluetooth
for h in lib/*.h; do ln -s "../../$h" "include/bluetooth/$(basename "$h")"; done
sources=(emulator/main.c emulator/serial.c emulator/server.c emulator/vhci.c emulator/btdev.c
  emulator/bthost.c emulator/smp.c emulator/phy.c emulator/amp.c emulator/le.c
  src/shared/queue.c src/shared/util.c src/shared/crypto.c src/shared/ecc.c src/shared/log.c
  src/shared/io-mainloop.c src/shared/timeout-mainloop.c src/shared/mainloop.c
  src/shared/mainloop-notify.c lib/bluetooth.c lib/hci.c)
gcc -O2 -DHAVE_CONFIG_H -include config.h -I. -Iinclude -Ilib -o btvirt "${sources[@]}" >&2 \
  || die "btvirt did not compile"
mkdir -p "$out.tmp"
mv btvirt "$out.tmp/btvirt"
cp "$patch_file" "$out.tmp/"
mv "$out.tmp" "$out"
echo "$out/btvirt"
