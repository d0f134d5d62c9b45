#!/usr/bin/env bash
# Delta transfers on real update pairs: for each pair, the new image's plain size, gzip -9, a bsdiff4
# patch, xdelta3 -9 patches (plain and with -S djw) and zstd --patch-from patches at -19 and --ultra
# -22 (the anchors, each with its size and wall time); the central's planning alone for `--base OLD`
# with each matcher (`ota-bench --plan`: bytes on air at MTU 247, wall time, peak RSS by
# /usr/bin/time -v); and the pushes over the in-memory link with the simulated link's air-time
# model (`ota-bench --delta`: plain chunks and delta by default; --ways adds compressed and block
# copies from the device's block hashes: `blocks` its one-value list of 63, `pages` BLOCK HASHES at
# 4 KiB and up). docs/BENCHMARKS.md has the figures.
#
#   Scripts/bench-delta.sh [--work DIR] [--pairs "NAME ..."] [--otad-old PATH --otad-new PATH]
#                          [--otad-commits "OLD NEW"] [--fat-mib N] [--distro-mib N] [--export DIR]
#                          [--bsdiff-timeout S] [--no-push] [--anchors-only]
#                          [--ways full,compressed,blocks,pages,hand,delta] [--debug] [--mtu N]
#
# The pairs (--pairs picks some; all by default):
#   firmware  Images/firmware-v1.bin → firmware-v2.bin (Scripts/make-sample-images.sh)
#   otad      otad's release binary at two consecutive commits that change it (--otad-commits,
#             7234b14 and 394fa39 by default, built from `git archive` in one folder under the work
#             folder), or two binaries given with --otad-old/--otad-new
#   fat       a FAT16 boot partition of --fat-mib MiB (40 by default) made with mkfs.vfat and mtools:
#             Debian's u-boot-qemu files, the cloud kernel 6.1.0-55 and its config, config.txt and
#             cmdline.txt; then the kernel replaced by 6.1.0-56 in place and both text files edited,
#             as an update of a boot partition would
#   distro    two ext4 system partitions of --distro-mib MiB (96 by default, 64 at least) holding the
#             same Debian packages, as a security update would change them: the old one at their
#             versions in Debian 12's `bookworm` suite, the new one at the newer versions of
#             bookworm-security (or bookworm-updates). The packages come in groups (distro_groups
#             below: openssl, python3.11, perl-base, tzdata, expat, nss, apt, bind9's tools, perl,
#             the cloud kernel), taken in that order while their unpacked files fit in 85% of the
#             image; each .deb is unpacked with dpkg-deb -x into one root folder per version and the
#             image made from it by `mkfs.ext4 -d` (no mount), with a fixed UUID, hash seed and
#             times (E2FSPROGS_FAKE_TIME; files keep their package's mtime, folders get the fixed
#             one, and debugfs sets every inode's ctime and atime to it after mkfs): the same
#             packages give the same images on every run. Prints the packages and versions and
#             how many bytes (and 4 KiB blocks) of the two images differ in place. --export DIR
#             copies both images to DIR/old.ext4 and DIR/new.ext4 with DIR/README.txt (the
#             packages, sizes and this pair's figures).
#   random    16 MiB of seeded random bytes against another 16 MiB: nothing in common
# bsdiff4 (PyPI 1.3.2, in .build-bsdiff4) gets --bsdiff-timeout seconds (600 by default): its scan
# can search again at every byte of a filesystem's long equal runs. zstd gets --long=W with 2^W at
# least the old image (27 at least) and --memory=2^W, which --patch-from needs past 128 MiB.
# xdelta3 keeps its default 64 MiB source window. --no-push leaves out the pushes; --anchors-only
# also the plans and the Swift build (the anchors alone).
# Needs dosfstools, mtools, xdelta3, zstd and e2fsprogs (installed with apt-get when missing) and
# network for PyPI and Debian's packages (apt-get download) on the first run; the work folder keeps
# them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

work=.build-delta-pairs
pairs="firmware otad fat distro random"
otad_old=""
otad_new=""
otad_commits="7234b14 394fa39"
fat_mib=40
distro_mib=96
export_dir=""
bsdiff_timeout=600
push=1
plans=1
ways=full,delta
configuration=release
mtu=247
while (($#)); do
  case "$1" in
    --work) work="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    --otad-old) otad_old="$2"; shift 2 ;;
    --otad-new) otad_new="$2"; shift 2 ;;
    --otad-commits) otad_commits="$2"; shift 2 ;;
    --fat-mib) fat_mib="$2"; shift 2 ;;
    --distro-mib) distro_mib="$2"; shift 2 ;;
    --export) export_dir="$2"; shift 2 ;;
    --bsdiff-timeout) bsdiff_timeout="$2"; shift 2 ;;
    --no-push) push=0; shift ;;
    --anchors-only) push=0; plans=0; shift ;;
    --ways) ways="$2"; shift 2 ;;
    --debug) configuration=debug; shift ;;
    --mtu) mtu="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-delta: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if ((distro_mib < 64)); then
  echo "bench-delta: --distro-mib is 64 at least" >&2
  exit 2
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
if [[ -n "$export_dir" ]]; then
  mkdir -p "$export_dir"
  export_dir="$(cd "$export_dir" && pwd)"
fi

missing=()
for tool in mkfs.vfat:dosfstools mcopy:mtools xdelta3:xdelta3 zstd:zstd mkfs.ext4:e2fsprogs debugfs:e2fsprogs; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool##*:}")
done
if ((${#missing[@]})); then
  echo "bench-delta: installing ${missing[*]}" >&2
  apt-get install -y -qq "${missing[@]}" </dev/null >&2
fi
bsdiff4="$(blueota_install_pypi_tool bsdiff4 1.3.2)"
bench=""
if ((plans)); then
  swift build -c "$configuration" --product ota-bench >&2
  bench="$(swift build -c "$configuration" --show-bin-path)/ota-bench"
fi

# otad's release binary at a commit, built from `git archive` in one folder for both commits (the
# second build is incremental, and both binaries carry the same build paths, as two commits of one
# checkout would).
build_otad() { # COMMIT → the binary's path
  local folder="$work/otad-build" binary="$work/otad-$1"
  if [[ ! -x "$binary" ]]; then
    mkdir -p "$folder"
    find "$folder" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf {} +
    git archive "$1" | tar -x -C "$folder"
    (cd "$folder" && swift build -c release --product otad >&2)
    cp "$folder/.build/release/otad" "$binary"
  fi
  echo "$binary"
}

# The FAT boot partition before and after a kernel update: $work/fat/{before,after}.img.
make_fat() {
  local debs="$work/debs" fat="$work/fat" package
  mkdir -p "$debs" "$fat"
  for package in linux-image-6.1.0-55-cloud-amd64 linux-image-6.1.0-56-cloud-amd64 u-boot-qemu; do
    if ! ls "$debs/$package"_*.deb >/dev/null 2>&1; then (cd "$debs" && apt-get download "$package" >&2); fi
    [[ -d "$debs/$package" ]] || dpkg-deb -x "$debs/$package"_*.deb "$debs/$package"
  done
  export MTOOLS_SKIP_CHECK=1
  printf 'arm_64bit=1\nkernel=vmlinuz\ndisable_overscan=1\n' >"$fat/config-before.txt"
  printf 'arm_64bit=1\nkernel=vmlinuz\ndisable_overscan=1\ndtoverlay=vc4-kms-v3d\ngpu_mem=128\n' >"$fat/config-after.txt"
  printf 'console=ttyS0 root=/dev/vda2 rootwait\n' >"$fat/cmdline-before.txt"
  printf 'console=ttyS0 root=/dev/vda2 rootwait quiet\n' >"$fat/cmdline-after.txt"
  rm -f "$fat/before.img" "$fat/after.img"
  # A fixed volume id: the same partition on every run.
  mkfs.vfat -C -F 16 -i 0B007A00 -n BOOT "$fat/before.img" $((fat_mib * 1024)) >/dev/null
  mcopy -s -i "$fat/before.img" "$debs/u-boot-qemu/usr/lib/u-boot" ::u-boot
  mcopy -i "$fat/before.img" "$debs"/linux-image-6.1.0-55-cloud-amd64/boot/vmlinuz-* ::vmlinuz
  mcopy -i "$fat/before.img" "$debs"/linux-image-6.1.0-55-cloud-amd64/boot/config-* ::kernel.config
  mcopy -i "$fat/before.img" "$fat/config-before.txt" ::config.txt
  mcopy -i "$fat/before.img" "$fat/cmdline-before.txt" ::cmdline.txt
  cp "$fat/before.img" "$fat/after.img"
  mdel -i "$fat/after.img" ::vmlinuz ::kernel.config
  mcopy -i "$fat/after.img" "$debs"/linux-image-6.1.0-56-cloud-amd64/boot/vmlinuz-* ::vmlinuz
  mcopy -i "$fat/after.img" "$debs"/linux-image-6.1.0-56-cloud-amd64/boot/config-* ::kernel.config
  mcopy -o -i "$fat/after.img" "$fat/config-after.txt" ::config.txt
  mcopy -o -i "$fat/after.img" "$fat/cmdline-after.txt" ::cmdline.txt
}

make_random() {
  python3 - "$work/random-old.bin" "$work/random-new.bin" <<'PY'
import random, sys
for seed, path in enumerate(sys.argv[1:]):
    with open(path, "wb") as f:
        f.write(random.Random(seed).randbytes(16 << 20))
PY
}

# The distro pair's packages, in the order they are taken while they fit: each group whole (a program
# and the libraries it is shipped with), or not at all. linux-image-cloud-amd64 stands for the cloud
# kernel its bookworm and bookworm-security versions depend on (two ABI versions, two names).
distro_groups=(
  "openssl libssl3"
  "python3.11 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11"
  "perl-base"
  "tzdata"
  "libexpat1"
  "libnss3"
  "apt libapt-pkg6.0"
  "bind9-host bind9-dnsutils bind9-libs"
  "perl perl-modules-5.36 libperl5.36"
  "linux-image-cloud-amd64"
)
distro_epoch=1767225600 # 2026-01-01 00:00:00 UTC: the images' times, and their folders'
distro_uuid=0b07a000-d157-4000-8000-000000000001
distro_hash_seed=0b07a000-d157-4000-8000-000000000002

# PACKAGE's version in bookworm and the newest later one in bookworm-security or bookworm-updates:
# "OLD_NAME OLD_VERSION NEW_NAME NEW_VERSION", or nothing when there is none.
distro_versions() { # PACKAGE
  local package="$1" old="" new="" version old_name new_name
  old="$(apt-cache madison "$package" | awk '$6 == "bookworm/main" { print $3; exit }')"
  [[ -n "$old" ]] || return 0
  for version in $(apt-cache madison "$package" | awk '$6 == "bookworm-security/main" || $6 == "bookworm-updates/main" { print $3 }'); do
    if dpkg --compare-versions "$version" gt "${new:-$old}"; then new="$version"; fi
  done
  [[ -n "$new" ]] || return 0
  if [[ "$package" == linux-image-cloud-amd64 ]]; then # the metapackage: the images it depends on
    old_name="$(apt-cache show "$package=$old" | sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)"
    new_name="$(apt-cache show "$package=$new" | sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)"
    echo "$old_name $(apt-cache madison "$old_name" | awk '{ print $3; exit }')" \
      "$new_name $(apt-cache madison "$new_name" | awk '{ print $3; exit }')"
  else
    echo "$package $old $package $new"
  fi
}

# NAME=VERSION's .deb, downloaded once into the work folder: its path.
distro_deb() { # NAME VERSION
  local folder="$work/distro/debs/$1/$2" sandbox=()
  if ! ls "$folder"/*.deb >/dev/null 2>&1; then
    mkdir -p "$folder"
    [[ "$(id -u)" != 0 ]] || sandbox=(-o APT::Sandbox::User=root)
    (cd "$folder" && apt-get download -q "${sandbox[@]}" "$1=$2" >&2)
  fi
  ls "$folder"/*.deb
}

# NAME=VERSION's files, unpacked once: their size on disk in KiB.
distro_unpacked_kib() { # NAME VERSION
  local folder="$work/distro/unpacked/$1/$2"
  if [[ ! -d "$folder" ]]; then
    rm -rf "$folder.tmp"
    mkdir -p "$(dirname "$folder")"
    dpkg-deb -x "$(distro_deb "$1" "$2")" "$folder.tmp"
    mv "$folder.tmp" "$folder"
  fi
  du -s -k "$folder" | cut -f1
}

# Every inode's ctime and atime set to the fixed time (mkfs -d copies them from the root folder,
# where they are this run's): debugfs commands for IMAGE.
distro_debugfs_times() { # IMAGE
  python3 - "$1" "$distro_epoch" <<'PY'
import re, subprocess, sys, time
image, epoch = sys.argv[1], int(sys.argv[2])
out = subprocess.run(["dumpe2fs", image], capture_output=True, text=True, check=True).stdout
count = int(re.search(r"^Inode count:\s+(\d+)", out, re.M).group(1))
free = set()
for ranges in re.findall(r"^\s+Free inodes: (.*)$", out, re.M):
    for part in filter(None, (p.strip() for p in ranges.split(","))):
        first, _, last = part.partition("-")
        free.update(range(int(first), int(last or first) + 1))
stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(epoch))
for inode in [2] + list(range(11, count + 1)):  # the root, then lost+found and the files
    if inode not in free:
        print(f"sif <{inode}> ctime {stamp}\nsif <{inode}> atime {stamp}")
PY
}

# The distro pair: $work/distro/{old,new}.ext4 and $work/distro/packages.txt ("NAME OLD -> NEW").
make_distro() {
  local distro="$work/distro" budget used=0 group line package need ok side image
  local old_name old_version new_name new_version old_kib new_kib
  local -a lines chosen=()
  mkdir -p "$distro"
  budget=$((distro_mib * 1024 * 85 / 100))
  for group in "${distro_groups[@]}"; do
    lines=()
    ok=1
    for package in $group; do
      line="$(distro_versions "$package")"
      if [[ -z "$line" ]]; then
        echo "bench-delta: distro: $package has no version newer than bookworm's: group '$group' left out" >&2
        ok=0
        break
      fi
      lines+=("$line")
    done
    ((ok)) || continue
    # A first look at the packages' own Installed-Size, so that a group far too large (the kernel in
    # 96 MiB) is not downloaded; then the larger version's unpacked size on disk.
    need=0
    for line in "${lines[@]}"; do
      read -r old_name old_version new_name new_version <<<"$line"
      need=$((need + $(apt-cache show "$new_name=$new_version" | sed -n 's/^Installed-Size: //p' | head -1)))
    done
    if ((used + need > budget)); then
      echo "bench-delta: distro: group '$group' (${need} KiB installed) left out: over 85% of ${distro_mib} MiB" >&2
      continue
    fi
    need=0
    for line in "${lines[@]}"; do
      read -r old_name old_version new_name new_version <<<"$line"
      old_kib=$(distro_unpacked_kib "$old_name" "$old_version")
      new_kib=$(distro_unpacked_kib "$new_name" "$new_version")
      need=$((need + (old_kib > new_kib ? old_kib : new_kib)))
    done
    if ((used + need > budget)); then
      echo "bench-delta: distro: group '$group' (${need} KiB unpacked) left out: over 85% of ${distro_mib} MiB" >&2
      continue
    fi
    used=$((used + need))
    chosen+=("${lines[@]}")
  done
  ((${#chosen[@]})) || { echo "bench-delta: distro: no package fits" >&2; exit 1; }
  for side in old new; do
    rm -rf "$distro/root-$side"
    mkdir -p "$distro/root-$side"
    for line in "${chosen[@]}"; do
      read -r old_name old_version new_name new_version <<<"$line"
      if [[ "$side" == old ]]; then
        dpkg-deb -x "$(distro_deb "$old_name" "$old_version")" "$distro/root-$side"
      else
        dpkg-deb -x "$(distro_deb "$new_name" "$new_version")" "$distro/root-$side"
      fi
    done
    # Files keep their package's mtime; folders (touched by every package that adds to them) get
    # the fixed time.
    find "$distro/root-$side" -type d -exec touch -h -d "@$distro_epoch" {} +
    image="$distro/$side.ext4"
    rm -f "$image"
    E2FSPROGS_FAKE_TIME=$distro_epoch mkfs.ext4 -q -F -t ext4 -b 4096 -i 8192 -m 0 -L system \
      -U "$distro_uuid" -E "hash_seed=$distro_hash_seed,root_owner=0:0" \
      -d "$distro/root-$side" "$image" "${distro_mib}M"
    distro_debugfs_times "$image" >"$distro/debugfs.cmds"
    E2FSPROGS_FAKE_TIME=$distro_epoch debugfs -w -f "$distro/debugfs.cmds" "$image" >/dev/null 2>&1
    e2fsck -f -n "$image" >/dev/null 2>&1 || { echo "bench-delta: distro: e2fsck finds $image inconsistent" >&2; exit 1; }
  done
  for line in "${chosen[@]}"; do
    read -r old_name old_version new_name new_version <<<"$line"
    if [[ "$old_name" == "$new_name" ]]; then
      echo "$old_name $old_version -> $new_version"
    else
      echo "$old_name $old_version -> $new_name $new_version"
    fi
  done >"$distro/packages.txt"
}

# How many bytes, and 4 KiB blocks, of two images of one size differ in place: "BYTES BLOCKS".
differing() { # OLD NEW
  python3 - "$1" "$2" <<'PY'
import sys
size = 4096
count = blocks = 0
with open(sys.argv[1], "rb") as old, open(sys.argv[2], "rb") as new:
    while True:
        a, b = old.read(size), new.read(size)
        if not a and not b:
            break
        if a != b:
            blocks += 1
            n = max(len(a), len(b))
            x = int.from_bytes(a.ljust(n, b"\0"), "little") ^ int.from_bytes(b.ljust(n, b"\0"), "little")
            count += n - x.to_bytes(n, "little").count(0)
print(count, blocks)
PY
}

# Blocks in use of an ext4 image: "USED of COUNT".
ext4_use() { # IMAGE
  dumpe2fs -h "$1" 2>/dev/null | awk -F: '/^Block count/ { n = $2 } /^Free blocks/ { f = $2 } END { printf "%d of %d", n - f, n }'
}

# The distro pair's own lines: its packages, the images' use and what differs in place.
describe_distro() { # OLD NEW
  local distro="$work/distro" differ size
  size=$(stat -c %s "$2")
  echo "== distro-${distro_mib}MiB: $(wc -l <"$distro/packages.txt") Debian packages, bookworm -> bookworm-security:"
  sed 's/^/  /' "$distro/packages.txt"
  echo "  unpacked: $(du -s -k "$distro/root-old" | cut -f1) KiB old, $(du -s -k "$distro/root-new" | cut -f1) KiB new" \
    "($(find "$distro/root-old" | wc -l) and $(find "$distro/root-new" | wc -l) files and folders)"
  echo "  ext4 blocks in use (4 KiB): $(ext4_use "$1") old, $(ext4_use "$2") new"
  read -r -a differ <<<"$(differing "$1" "$2")"
  echo "  differing in place: ${differ[0]} B of $size B, in ${differ[1]} of $((size / 4096)) 4 KiB blocks"
}

# One matcher's plan under /usr/bin/time -v: its line, then wall seconds and peak RSS.
plan() { # MATCHER OLD NEW
  local log="$work/time.log" line
  line="$(/usr/bin/time -v -o "$log" "$bench" --plan "$2" "$3" --matcher "$1" --mtu "$mtu")"
  echo "  $line"
  echo "    /usr/bin/time: $(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): /wall /p' "$log"), peak RSS" \
    "$(($(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$log") / 1024)) MiB," \
    "$(sed -n 's/^\tUser time (seconds): /user /p' "$log") s"
}

# Wall seconds since START (date +%s.%N), two decimals.
since() { printf '%.2f' "$(echo "$(date +%s.%N) - $1" | bc)"; }

# zstd's --long window for OLD: the smallest power of two at least OLD's size, 27 at least.
zstd_window() { # OLD
  local size window=27
  size=$(stat -c %s "$1")
  while (((1 << window) < size)); do window=$((window + 1)); done
  echo "$window"
}

# One anchor: runs ENCODE... (which writes PATCH), then checks that DECODE... (which writes
# $work/check.bin from PATCH) gives NEW back; prints "LABEL: SIZE B in S s".
anchor() { # LABEL NEW PATCH -- ENCODE... -- DECODE...
  local label="$1" new="$2" patch="$3" start seconds encode=() decode=()
  shift 4
  while [[ "$1" != -- ]]; do encode+=("$1"); shift; done
  shift
  decode=("$@")
  start=$(date +%s.%N)
  "${encode[@]}"
  seconds=$(since "$start")
  "${decode[@]}"
  cmp -s "$work/check.bin" "$new" || { echo "bench-delta: $label did not give the new image back" >&2; exit 1; }
  rm -f "$work/check.bin"
  echo "  $label: $(stat -c %s "$patch") B in $seconds s"
}

measure() { # NAME OLD NEW
  local name="$1" old="$2" new="$3" start seconds bsdiff_size matcher window level
  echo "== $name: $(basename "$old") ($(stat -c %s "$old") B) -> $(basename "$new") ($(stat -c %s "$new") B)"
  start=$(date +%s.%N)
  echo "  gzip -9: $(gzip -9 -c "$new" | wc -c) B in $(since "$start") s"
  start=$(date +%s.%N)
  if timeout "$bsdiff_timeout" "$bsdiff4" "$old" "$new" "$work/$name.bsdiff4"; then
    bsdiff_size="$(stat -c %s "$work/$name.bsdiff4") B in $(since "$start") s"
  else
    bsdiff_size="did not finish in ${bsdiff_timeout} s"
  fi
  echo "  bsdiff4: $bsdiff_size"
  anchor "xdelta3 -9" "$new" "$work/$name.xdelta3" -- xdelta3 -e -9 -f -s "$old" "$new" "$work/$name.xdelta3" \
    -- xdelta3 -d -f -s "$old" "$work/$name.xdelta3" "$work/check.bin"
  anchor "xdelta3 -9 -S djw" "$new" "$work/$name.xdelta3-djw" \
    -- xdelta3 -e -9 -S djw -f -s "$old" "$new" "$work/$name.xdelta3-djw" \
    -- xdelta3 -d -f -s "$old" "$work/$name.xdelta3-djw" "$work/check.bin"
  window=$(zstd_window "$old")
  for level in "-19" "--ultra -22"; do
    # shellcheck disable=SC2086 # $level is one or two options
    anchor "zstd $level --long=$window --patch-from" "$new" "$work/$name.zst${level##* }" \
      -- zstd -q -f $level --long="$window" --memory=$((1 << (window - 20)))MB --patch-from="$old" "$new" \
      -o "$work/$name.zst${level##* }" \
      -- zstd -q -d -f --long="$window" --memory=$((1 << (window - 20)))MB --patch-from="$old" \
      "$work/$name.zst${level##* }" -o "$work/check.bin"
  done
  if ((plans)); then
    for matcher in $("$bench" --matchers); do
      plan "$matcher" "$old" "$new"
    done
  fi
  if ((push)); then
    "$bench" --delta "$old" "$new" --mtu "$mtu" --ways "$ways" | sed 's/^/  /'
  fi
}

for pair in $pairs; do
  case "$pair" in
    firmware) measure firmware Images/firmware-v1.bin Images/firmware-v2.bin ;;
    otad)
      read -r old_commit new_commit <<<"$otad_commits"
      [[ -n "$otad_old" ]] || otad_old="$(build_otad "$old_commit")"
      [[ -n "$otad_new" ]] || otad_new="$(build_otad "$new_commit")"
      measure otad "$otad_old" "$otad_new"
      ;;
    fat) make_fat && measure "fat-${fat_mib}MiB" "$work/fat/before.img" "$work/fat/after.img" ;;
    distro)
      make_distro
      distro_old="$work/distro/old.ext4"
      distro_new="$work/distro/new.ext4"
      if [[ -n "$export_dir" ]]; then
        cp "$distro_old" "$distro_new" "$export_dir/"
        {
          echo "BlueOTA Scripts/bench-delta.sh's distro pair, made $(date -u '+%Y-%m-%d %H:%M UTC')."
          echo "old.ext4: the packages at their versions in Debian 12's bookworm suite; new.ext4: the same"
          echo "packages at the newer versions of bookworm-security. Both made with mkfs.ext4 -d, fixed"
          echo "UUID, hash seed and times: the same packages give the same images."
          echo "sha256 $(sha256sum "$distro_old" | cut -c1-64) old.ext4"
          echo "sha256 $(sha256sum "$distro_new" | cut -c1-64) new.ext4"
          echo
          describe_distro "$distro_old" "$distro_new"
          measure "distro-${distro_mib}MiB" "$distro_old" "$distro_new"
        } | tee "$export_dir/README.txt"
      else
        describe_distro "$distro_old" "$distro_new"
        measure "distro-${distro_mib}MiB" "$distro_old" "$distro_new"
      fi
      ;;
    random) make_random && measure random "$work/random-old.bin" "$work/random-new.bin" ;;
    *) echo "bench-delta: unknown pair '$pair'" >&2; exit 2 ;;
  esac
done
