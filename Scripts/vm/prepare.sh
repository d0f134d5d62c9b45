#!/usr/bin/env bash
# Prepares everything the BlueZ VM harness (Scripts/vm/run.sh) needs, and caches it:
#
#   * the host's Debian packages (qemu, busybox-static, bluez, btvirt, dbus, python3-dbus, ...);
#   * Debian's own kernel image (the package behind linux-image-amd64), fetched with
#     `apt-get download` and unpacked with `dpkg-deb -x`; it is never installed on the host;
#   * a trimmed module tree for the guest (crypto, lib, bluetooth, rfkill, virtio_net), depmod-ed,
#     in a folder named by a hash of its module list: a changed list builds a new tree instead of
#     reusing one that lacks a module;
#   * a tiny busybox initramfs whose /init mounts the host's root read-only over virtio-9p under a
#     tmpfs overlay and switch_roots into the guest script named on the kernel command line.
#
# Idempotent and non-interactive: a complete cache is reused as it is. The cache lives in
# ${BLUEOTA_VM_CACHE:-$HOME/.cache/blueota-vm}, never inside the repository. It ends with
# $CACHE/vm.env, which run.sh sources (VM_KVER, VM_KERNEL, VM_INITRD, VM_MODULES).
# Packages: socat too (run.sh --forward-host-port relays each guest connection with it).
#
#   Scripts/vm/prepare.sh            # install / build what is missing
#   Scripts/vm/prepare.sh --force    # rebuild the kernel part and the initramfs from scratch
set -euo pipefail

started=$SECONDS
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "prepare: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

cache="${BLUEOTA_VM_CACHE:-$HOME/.cache/blueota-vm}"
say() { echo "prepare: $*"; }
die() { echo "prepare: error: $*" >&2; exit 1; }

sudo=()
if [[ "$(id -u)" != 0 ]]; then
  sudo=(sudo)
fi

# --- 1. host packages --------------------------------------------------------------------------
# busybox-static: the initramfs shell and the guest's `poweroff -f` (Debian's own poweroff is
# systemctl, which needs systemd as PID 1). python3-gi: the GLib main loop python3-dbus needs for
# the smoke test's D-Bus objects. util-linux: flock, mount. coreutils: timeout. gcc, libc6-dev,
# dpkg-dev, patch: build-btvirt.sh's btvirt from Debian's bluez source (runs of 3+ controllers).
# socat: run.sh --forward-host-port's relay from the guest's user-mode network to a host port.
packages=(qemu-system-x86 busybox-static bluez bluez-test-tools dbus cpio kmod python3 python3-dbus
          python3-gi util-linux coreutils gcc libc6-dev dpkg-dev patch socat)
installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
             awk '$NF == "installed" && $(NF-1) == "ok" { printf "%s ", $1 }' || true)"
missing=()
for package in "${packages[@]}"; do
  [[ " $installed " == *" $package "* ]] || missing+=("$package")
done
apt_updated=0
if ((${#missing[@]})); then
  if ((${#sudo[@]})) && ! command -v sudo >/dev/null; then
    die "need root (or sudo) to install: ${missing[*]}"
  fi
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq </dev/null
  apt_updated=1
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
else
  say "host packages present"
fi

mkdir -p "$cache"
# Two harness runs at once (CI) must not build the cache twice into the same place.
exec 9>"$cache/.lock"
flock 9

# --- 2. the kernel -----------------------------------------------------------------------------
# The real image package behind the metapackage, e.g. linux-image-6.1.0-56-amd64. Without apt
# lists (a fresh container) update them once; offline, fall back to whatever the cache holds.
resolve_kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
kpkg="$(resolve_kernel_package || true)"
if [[ -z "$kpkg" && "$apt_updated" == 0 ]]; then
  say "apt lists do not know linux-image-amd64 yet: apt-get update"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -qq </dev/null || true
  kpkg="$(resolve_kernel_package || true)"
fi
if [[ -z "$kpkg" ]]; then
  if [[ -f "$cache/vm.env" ]]; then
    say "cannot resolve linux-image-amd64 (offline?); reusing the cached kernel"
    kpkg="$(sed -n 's/^VM_KPKG=//p' "$cache/vm.env")"
  else
    die "cannot resolve the package behind linux-image-amd64 (apt-cache depends linux-image-amd64)"
  fi
fi

kdir="$cache/$kpkg"           # everything for this kernel lives here
kernel_stamp="$kdir/.kernel-complete"
if [[ "$force" == 1 ]]; then
  rm -rf "$kdir"
fi

# The guest's module tree: only what the Bluetooth stack and the kernel crypto it loads on demand
# need (ecdh, aes, cmac, ccm ...), and virtio_net with its dependencies for run.sh
# --forward-host-port (CONFIG_VIRTIO_NET=m in Debian's kernel). About 14 MB instead of 400. Its
# folder is named by a hash of these lists: a cache made before a module was added here is not
# reused without it (the kernel itself and the initramfs modules stay).
module_dirs=(kernel/crypto kernel/arch/x86/crypto kernel/lib kernel/net/bluetooth kernel/drivers/bluetooth
             kernel/net/rfkill)
module_files=(kernel/drivers/net/virtio_net.ko kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko)
modules_hash="$(printf '%s\n' "${module_dirs[@]}" -- "${module_files[@]}" | sha256sum | cut -c1-12)"
modules_dir="$kdir/modules-$modules_hash"
modules_stamp="$modules_dir/.complete"

if [[ -f "$kernel_stamp" && -f "$modules_stamp" ]]; then
  say "kernel $kpkg cached in $kdir"
else
  t0=$SECONDS
  [[ -f "$kernel_stamp" ]] || rm -rf "$kdir"
  work="$(mktemp -d "$cache/.build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  # As root, apt downloads as the user _apt, who cannot enter $HOME (/root): it would download
  # unsandboxed anyway and warn. Say so up front instead.
  sandbox=()
  if [[ "$(id -u)" == 0 ]]; then
    sandbox=(-o APT::Sandbox::User=root)
  fi
  say "downloading $kpkg (apt-get download)"
  (cd "$work" && apt-get download -q "${sandbox[@]}" "$kpkg" </dev/null >/dev/null)
  deb="$(find "$work" -maxdepth 1 -name "${kpkg}_*.deb" -print -quit)"
  [[ -n "$deb" ]] || die "apt-get download $kpkg produced no .deb"
  say "unpacking $(basename "$deb") (dpkg-deb -x, not installed)"
  dpkg-deb -x "$deb" "$work/root"
  kver="$(basename "$(find "$work/root/lib/modules" -mindepth 1 -maxdepth 1 -type d -print -quit)")"
  [[ -n "$kver" && -f "$work/root/boot/vmlinuz-$kver" ]] || die "no vmlinuz / module tree in $deb"
  full="$work/root/lib/modules/$kver"

  if [[ ! -f "$modules_stamp" ]]; then
    rm -rf "$modules_dir"
    tree="$modules_dir/lib/modules/$kver"
    mkdir -p "$tree/kernel"
    for sub in "${module_dirs[@]}" "${module_files[@]}"; do
      [[ -e "$full/$sub" ]] || die "$kpkg has no $sub"
      mkdir -p "$tree/$(dirname "$sub")"
      cp -a "$full/$sub" "$tree/$sub"
    done
    cp -a "$full"/modules.builtin* "$full/modules.order" "$tree/"
    depmod -b "$modules_dir" "$kver"
    touch "$modules_stamp"
    say "guest module tree built ($(basename "$modules_dir"))"
  fi
  if [[ -f "$kernel_stamp" ]]; then
    rm -rf "$work"
    trap - EXIT
  fi
fi
if [[ ! -f "$kernel_stamp" ]]; then
  # The modules the initramfs itself needs, in load order (dependencies first), resolved on the
  # full tree: virtio PCI transport, 9p over virtio, and overlayfs.
  depmod -b "$work/root" "$kver"
  mkdir -p "$kdir/initramfs-modules"
  : >"$kdir/initramfs-modules/load-order"
  for module in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$work/root" -S "$kver" --show-depends "$module" | awk '$1 == "insmod" { print $2 }'
  done | awk '!seen[$0]++' | while read -r ko; do
    cp "$ko" "$kdir/initramfs-modules/"
    basename "$ko" >>"$kdir/initramfs-modules/load-order"
  done

  cp "$work/root/boot/vmlinuz-$kver" "$kdir/vmlinuz"
  cp "$work/root/boot/config-$kver" "$kdir/config"
  echo "$kver" >"$kdir/kver"
  rm -rf "$work"
  trap - EXIT
  touch "$kernel_stamp"
  say "kernel $kver ready in $((SECONDS - t0)) s"
fi
kver="$(cat "$kdir/kver")"

# --- 3. the initramfs --------------------------------------------------------------------------
# /init (busybox sh, PID 1):
#   * loads only the modules needed to reach the host's root: virtio_pci 9pnet_virtio 9p overlay.
#     Bluetooth is NOT loaded here: it must be loaded after switch_root, where the kernel can
#     call /sbin/modprobe to load the crypto helpers it asks for (ecdh_generic's self-test, aes,
#     cmac ...). Loaded from the initramfs, the ecdh self-test fails and btvirt then says
#     "Failed to open Virtual HCI device".
#   * mounts the host's / (9p tag hostroot, read-only) as the lower layer of an overlay whose
#     upper layer is tmpfs: the guest can write anywhere, and all of it vanishes at power-off.
#   * mounts a fresh tmpfs on /run (the host's /run holds stale pid files and sockets), and the
#     writable results share (9p tag results) at the same path it has on the host ($GUEST_RESULTS).
#   * moves /proc /sys /dev into the new root and switch_roots into $ginit. The kernel hands every
#     KEY=VAL word of its command line to /init as environment; exec keeps it for the guest script.
IFS= read -r -d '' init_script <<'INIT' || true
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

fail() {
  echo "blueota-init: $*"
  echo "blueota-init: powering off"
  poweroff -f
  sleep 5
  exit 1
}

for ko in $(cat /modules/load-order); do
  insmod "/modules/$ko" || fail "insmod $ko failed"
done

mkdir -p /host /rw /newroot
# msize: bigger 9p messages mean fewer round trips through the emulated virtio queue.
# cache=loose: the guest keeps what it read of the host's root (binaries, libraries, modules) in
# its page cache instead of asking the host again: bluetoothd is ready seconds sooner. Safe here:
# the share is read-only, and the results share (cache=none) is the only thing the host and the
# guest both write.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host || fail "cannot mount the host root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay /newroot || fail "cannot mount the overlay root"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fail "cannot mount /run"

if [ -n "${GUEST_RESULTS:-}" ]; then
  mkdir -p "/newroot$GUEST_RESULTS"
  if mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results "/newroot$GUEST_RESULTS"; then
    read -r up _ </proc/uptime
    printf 'initramfs\t%s\n' "$up" >>"/newroot$GUEST_RESULTS/timings.tsv"
    echo initramfs >"/newroot$GUEST_RESULTS/stage"
  else
    echo "blueota-init: cannot mount the results share (9p tag results)"
  fi
fi

[ -n "${ginit:-}" ] || fail "no ginit=SCRIPT on the kernel command line"
[ -x "/newroot$ginit" ] || fail "ginit $ginit is not an executable file on the host root"

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec switch_root /newroot "$ginit"
INIT

init_hash="$( { printf '%s' "$init_script"; cat "$kdir/initramfs-modules/load-order"; sha256sum /bin/busybox; } | sha256sum | cut -c1-16)"
initrd="$kdir/initrd-$init_hash.cpio"
if [[ -f "$initrd" && "$force" == 0 ]]; then
  say "initramfs cached ($(basename "$initrd"))"
else
  t0=$SECONDS
  tree="$(mktemp -d "$cache/.initramfs.XXXXXX")"
  trap 'rm -rf "$tree"' EXIT
  mkdir -p "$tree"/{bin,dev,proc,sys,modules}
  cp /bin/busybox "$tree/bin/busybox"
  cp "$kdir"/initramfs-modules/* "$tree/modules/"
  printf '%s\n' "$init_script" >"$tree/init"
  chmod 0755 "$tree/init"
  # The kernel opens /dev/console before it runs /init; only root can make the node (the /init
  # reopens it from devtmpfs anyway).
  if [[ "$(id -u)" == 0 ]]; then
    mknod -m 0600 "$tree/dev/console" c 5 1
  fi
  # Uncompressed: under software emulation unpacking a few MB is cheaper than decompressing.
  (cd "$tree" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$initrd.tmp"
  mv "$initrd.tmp" "$initrd"
  rm -rf "$tree"
  trap - EXIT
  find "$kdir" -maxdepth 1 -name 'initrd-*.cpio' ! -path "$initrd" -delete
  say "initramfs built in $((SECONDS - t0)) s ($(du -k "$initrd" | cut -f1) KiB)"
fi

# Drop caches of other kernels (a newer linux-image-amd64 replaces the old one).
find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'linux-image-*' ! -path "$kdir" -exec rm -rf {} +

cat >"$cache/vm.env.tmp" <<ENV
VM_KPKG=$kpkg
VM_KVER=$kver
VM_KERNEL=$kdir/vmlinuz
VM_INITRD=$initrd
VM_MODULES=$modules_dir/lib/modules/$kver
ENV
mv "$cache/vm.env.tmp" "$cache/vm.env"
say "ready in $((SECONDS - started)) s: kernel $kver, cache $cache"
