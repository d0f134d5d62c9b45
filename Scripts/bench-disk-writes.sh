#!/usr/bin/env bash
# Bytes the device's storage really receives per MB of image: the kernel's count of sectors
# written to a block device that nothing else uses (a new ext4 on a loop device over a file in
# /dev/shm), around one ota-bench run and around one run of the floor program. Unlike a process's
# write_bytes (/proc/PID/io), it counts what the file system adds: its journal (jbd2) commits, the
# metadata of renames and of files that grow. This is the wear an SD card sees. Needs root.
#   Scripts/bench-disk-writes.sh [--size MiB] [--mtu N] [--bench PATH]
# Defaults: 16 MiB, MTU 517, this tree's ota-bench (--bench: another build's, to compare).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

size=16
mtu=517
bench=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --mtu) mtu="$2"; shift 2 ;;
    --bench) bench="$2"; shift 2 ;;
    *) echo "bench-disk-writes: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $EUID -eq 0 ]] || { echo "bench-disk-writes: needs root (a loop device and a mount)" >&2; exit 2; }

swift build -c release --product ota-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
cc -O2 -Wall -Wextra -o "$bin/ota-floor" Scripts/floor/ota-floor.c
bench="${bench:-$bin/ota-bench}"

image="$(mktemp /dev/shm/blueota-ext4.XXXXXX)"
mountpoint="$(mktemp -d)"
cleanup() { umount "$mountpoint" 2>/dev/null || true; rm -rf "$image" "$mountpoint"; }
trap cleanup EXIT
truncate -s $((4 * size + 256))M "$image"
# Inode tables and the journal zeroed now, not by ext4lazyinit in the background during the runs.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$image"
mount -o loop "$image" "$mountpoint"
device="$(basename "$(findmnt -n -o SOURCE "$mountpoint")")"

sectors() { sync; awk '{print $7}' "/sys/block/$device/stat"; }
# ota-bench runs the transfer twice (once to record the device's events, once replayed), so its
# bytes are over two images.
chunk="$("$bench" --size 1 --mtu "$mtu" --dir "$mountpoint" | sed -n 's/.* chunks of \([0-9]*\) B.*/\1/p')"
before="$(sectors)"
"$bench" --size "$size" --mtu "$mtu" --dir "$mountpoint" >/dev/null
device_bytes=$(( ($(sectors) - before) * 512 / (2 * size) ))
before="$(sectors)"
"$bin/ota-floor" --size "$size" --chunk "$chunk" --dir "$mountpoint" >/dev/null
floor_bytes=$(( ($(sectors) - before) * 512 / size ))
echo "ext4 on $device, $size MiB image, MTU $mtu (chunks of $chunk B), 32 KiB windows"
echo "  otad's receiver   $device_bytes bytes written to the device per MiB of image ($(python3 -c "print(f'{$device_bytes/1048576:.2f}')")x)"
echo "  floor             $floor_bytes bytes per MiB ($(python3 -c "print(f'{$floor_bytes/1048576:.2f}')")x)"
