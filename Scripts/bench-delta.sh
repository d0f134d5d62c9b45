#!/usr/bin/env bash
# Delta transfers on real update pairs: for each pair, the new image's plain size, gzip -9, a bsdiff4
# patch and an xdelta3 -9 patch (the anchors); the central's planning alone for `--base OLD` with
# each matcher (`ota-bench --plan`: bytes on air at MTU 247, wall time, peak RSS by /usr/bin/time -v);
# and the pushes over the in-memory link with the simulated link's air-time model (`ota-bench
# --delta`: plain chunks and delta by default; --ways adds compressed and block copies from the
# device's block hashes: `blocks` its one-value list of 63, `pages` BLOCK HASHES at 4 KiB and up).
# docs/BENCHMARKS.md has the figures.
#
#   Scripts/bench-delta.sh [--work DIR] [--pairs "NAME ..."] [--otad-old PATH --otad-new PATH]
#                          [--otad-commits "OLD NEW"] [--fat-mib N] [--bsdiff-timeout S] [--no-push]
#                          [--ways full,compressed,blocks,pages,delta] [--debug] [--mtu N]
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
#   random    16 MiB of seeded random bytes against another 16 MiB: nothing in common
# bsdiff4 (PyPI 1.3.2, in .build-bsdiff4) gets --bsdiff-timeout seconds (600 by default): its scan
# can search again at every byte of a filesystem's long equal runs.
# Needs dosfstools, mtools and xdelta3 (installed with apt-get when missing) and network for PyPI and
# Debian's packages (apt-get download) on the first run; the work folder keeps them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

work=.build-delta-pairs
pairs="firmware otad fat random"
otad_old=""
otad_new=""
otad_commits="7234b14 394fa39"
fat_mib=40
bsdiff_timeout=600
push=1
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
    --bsdiff-timeout) bsdiff_timeout="$2"; shift 2 ;;
    --no-push) push=0; shift ;;
    --ways) ways="$2"; shift 2 ;;
    --debug) configuration=debug; shift ;;
    --mtu) mtu="$2"; shift 2 ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-delta: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
work="$(cd "$work" && pwd)"

missing=()
for tool in mkfs.vfat:dosfstools mcopy:mtools xdelta3:xdelta3; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool##*:}")
done
if ((${#missing[@]})); then
  echo "bench-delta: installing ${missing[*]}" >&2
  apt-get install -y -qq "${missing[@]}" </dev/null >&2
fi
bsdiff4="$(blueota_install_pypi_tool bsdiff4 1.3.2)"
swift build -c "$configuration" --product ota-bench >&2
bench="$(swift build -c "$configuration" --show-bin-path)/ota-bench"

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

# One matcher's plan under /usr/bin/time -v: its line, then wall seconds and peak RSS.
plan() { # MATCHER OLD NEW
  local log="$work/time.log" line
  line="$(/usr/bin/time -v -o "$log" "$bench" --plan "$2" "$3" --matcher "$1" --mtu "$mtu")"
  echo "  $line"
  echo "    /usr/bin/time: $(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): /wall /p' "$log"), peak RSS" \
    "$(($(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$log") / 1024)) MiB," \
    "$(sed -n 's/^\tUser time (seconds): /user /p' "$log") s"
}

measure() { # NAME OLD NEW
  local name="$1" old="$2" new="$3" start seconds bsdiff_size matcher
  echo "== $name: $(basename "$old") ($(stat -c %s "$old") B) -> $(basename "$new") ($(stat -c %s "$new") B)"
  echo "  gzip -9: $(gzip -9 -c "$new" | wc -c) B"
  start=$(date +%s.%N)
  if timeout "$bsdiff_timeout" "$bsdiff4" "$old" "$new" "$work/$name.bsdiff4"; then
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    bsdiff_size="$(stat -c %s "$work/$name.bsdiff4") B in ${seconds} s"
  else
    bsdiff_size="did not finish in ${bsdiff_timeout} s"
  fi
  echo "  bsdiff4: $bsdiff_size"
  start=$(date +%s.%N)
  xdelta3 -e -9 -f -s "$old" "$new" "$work/$name.xdelta3"
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  echo "  xdelta3 -9: $(stat -c %s "$work/$name.xdelta3") B in ${seconds} s"
  for matcher in $("$bench" --matchers); do
    plan "$matcher" "$old" "$new"
  done
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
    random) make_random && measure random "$work/random-old.bin" "$work/random-new.bin" ;;
    *) echo "bench-delta: unknown pair '$pair'" >&2; exit 2 ;;
  esac
done
