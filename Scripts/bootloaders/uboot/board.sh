#!/usr/bin/env bash
# The emulated board that both the U-Boot test (test.sh) and `ota-lab --bootloader uboot` run on,
# in a folder DIR that boot-once.py powers on:
#   board.sh missing                  the Debian packages the board needs that are not installed
#                                     (one line, space-separated; empty when none is missing)
#   board.sh make DIR                 flash bank 0 with Debian's U-Boot (u-boot-qemu, qemu_arm64),
#                                     bank 1 erased (the environment), DIR/fw_env.config that locates
#                                     it for fw_printenv/fw_setenv, DIR/boot.scr made from boot.cmd,
#                                     DIR/disk.img (mkdisk.sh)
#   board.sh provision DIR [NAME=value...]
#                                     once U-Boot's first boot saved its environment: no autoboot
#                                     delay, distro boot on virtio only (boot.cmd carries the kernel
#                                     arguments), and the NAME=value given, in one fw_setenv
# The environment is offset 0 of bank 1, 0x40000 bytes (CONFIG_ENV_SIZE; U-Boot erases it as two of
# the 128 KiB sectors it sees there: "Un-Protected 2 sectors"). Nothing here needs root.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
uboot_bin=/usr/lib/u-boot/qemu_arm64/u-boot.bin
case "${1:-}" in
  missing)
    missing=()
    [[ -f "$uboot_bin" ]] || missing+=(u-boot-qemu)
    command -v mkimage >/dev/null || missing+=(u-boot-tools)
    command -v fw_printenv >/dev/null && command -v fw_setenv >/dev/null || missing+=(libubootenv-tool)
    command -v mcopy >/dev/null || missing+=(mtools)
    command -v mkfs.vfat >/dev/null || missing+=(dosfstools)
    command -v python3 >/dev/null || missing+=(python3)
    # qemu.sh takes Debian's qemu-system-aarch64 unless it is 12's 7.2, then fetches a fixed one.
    [[ -n "${UBOOT_QEMU:-}" ]] || command -v qemu-system-aarch64 >/dev/null || missing+=(qemu-system-arm)
    echo "${missing[*]}"
    ;;
  make)
    d="${2:?usage: board.sh make DIR}"
    truncate -s 64M "$d/flash0.img" "$d/flash1.img"
    dd if="$uboot_bin" of="$d/flash0.img" conv=notrunc status=none
    python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.write(b"\xff" * 0x40000)' "$d/flash1.img"
    echo "$d/flash1.img 0x0 0x40000 0x40000" >"$d/fw_env.config"
    mkimage -A arm -T script -C none -d "$here/boot.cmd" "$d/boot.scr" >/dev/null
    "$here/mkdisk.sh" "$d/boot.scr" "$d/disk.img"
    ;;
  provision)
    d="${2:?usage: board.sh provision DIR [NAME=value...]}"
    shift 2
    printf '%s\n' bootdelay=0 boot_targets=virtio0 "$@" | fw_setenv -c "$d/fw_env.config" -s -
    ;;
  *)
    echo "usage: board.sh missing | make DIR | provision DIR [NAME=value...]" >&2
    exit 64
    ;;
esac
