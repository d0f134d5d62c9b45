#!/usr/bin/env bash
# The U-Boot test's disk: an MBR disk image with three FAT partitions of 1 MiB each, as distro boot
# finds them on virtio 0: partition 1 (bootable) holds boot.scr, partitions 2 and 3 are the boot
# partitions of slots A and B, each with /boot/Image (boot-once.sh writes each slot's kernel).
#   mkdisk.sh BOOT.SCR DISK
set -euo pipefail
scr="$1" disk="$2"
mib=$((1024 * 1024))
rm -f "$disk"
truncate -s $((4 * mib)) "$disk"
# The partition table: three primary partitions of type 0x0c (FAT32 LBA), the first bootable.
python3 - "$disk" <<'PY'
import struct, sys
entries = b""
for number in range(3):
    start, sectors = 2048 * (number + 1), 2048
    boot = 0x80 if number == 0 else 0
    entries += struct.pack("<B3sB3sII", boot, b"\xfe\xff\xff", 0x0C, b"\xfe\xff\xff", start, sectors)
mbr = bytearray(512)
mbr[440:444] = struct.pack("<I", 0x0B10E0A7)  # disk signature
mbr[446:446 + len(entries)] = entries
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as disk:
    disk.write(mbr)
PY
for number in 1 2 3; do
  part="$disk.p$number"
  rm -f "$part"
  mkfs.vfat -C -n "P$number" "$part" 1024 >/dev/null
  if ((number == 1)); then
    mcopy -i "$part" "$scr" ::/boot.scr
  else
    mmd -i "$part" ::/boot
  fi
  dd if="$part" of="$disk" bs=1M seek="$number" conv=notrunc status=none
  rm -f "$part"
done
