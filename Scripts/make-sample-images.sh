#!/usr/bin/env bash
# Makes the sample firmware images under Images/ that the tests and manual trials use:
# deterministic raw payloads, and MCUboot images built from them by the real imgtool
# (unsigned, Ed25519-signed, ECDSA P-256-signed, and encrypted for a device key: X25519, P-256 and
# RSA-2048, AES-128 and AES-256), plus Images/README.md describing them.
#
# Idempotent: payloads are deterministic and rewritten each run; keys are made only when
# missing; images are made only when missing unless --force is given. Runnable from anywhere.
#
# Usage: Scripts/make-sample-images.sh [--force]
#   --force   remake every image (keys are kept; delete Images/keys/*.pem to get new ones).
#             Ed25519 and unsigned images come out byte-identical; ECDSA signatures are
#             randomized, so that image changes.
set -euo pipefail

force=0
for argument in "$@"; do
  case "$argument" in
    --force) force=1 ;;
    -h | --help)
      sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "make-sample-images: unknown argument '$argument' (try --help)" >&2
      exit 2
      ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
images="$root/Images"
keys="$images/keys"
mkdir -p "$images" "$keys"

python="${PYTHON:-python3}"

# imgtool: install it for this user if it is missing.
if ! "$python" -c 'import imgtool' 2>/dev/null; then
  echo "make-sample-images: imgtool is missing; installing it with pip" >&2
  "$python" -m pip install --quiet imgtool
fi
imgtool() { "$python" -m imgtool.main "$@"; }

# Deterministic payloads: bytes from Python's Mersenne Twister seeded with the file name,
# so rerunning the script rewrites identical files.
write_payload() { # name size
  "$python" - "$images/$1" "$2" <<'EOF'
import random, sys
path, size = sys.argv[1], int(sys.argv[2])
data = random.Random(path.rsplit("/", 1)[-1]).randbytes(size)
with open(path, "wb") as f:
    f.write(data)
EOF
}

write_payload raw-1B.bin 1
write_payload raw-4099B.bin 4099
write_payload raw-100KiB.bin $((100 * 1024))
write_payload raw-1MiB.bin $((1024 * 1024))

# TEST keys, committed on purpose: they sign sample images and are public.
make_key() { # file type
  if [[ ! -f "$keys/$1.pem" ]]; then
    imgtool keygen --key "$keys/$1.pem" --type "$2"
  fi
  imgtool getpub --key "$keys/$1.pem" --encoding pem --output "$keys/$1.pub.pem"
}
make_key test-ed25519 ed25519
make_key test-ecdsa-p256 ecdsa-p256
# Device keys for encrypted images: the private half is what otad's [trust] decryption-key names.
make_key test-device-x25519 x25519
make_key test-device-ecdsa-p256 ecdsa-p256
make_key test-device-rsa-2048 rsa-2048

cat >"$keys/README.md" <<'EOF'
# Sample signing keys — TEST KEYS ONLY

These keys are public on purpose: they exist only to sign the sample images in `Images/`
for tests. Never use them for real firmware; anyone can sign with them.

- `test-ed25519.pem` / `.pub.pem`: Ed25519 (`imgtool keygen -t ed25519`), signs `mcuboot-ed25519-100KiB.bin`.
- `test-ecdsa-p256.pem` / `.pub.pem`: ECDSA P-256 (`imgtool keygen -t ecdsa-p256`), signs `mcuboot-ecdsa-p256-1B.bin`.
- `test-device-x25519.pem`, `test-device-ecdsa-p256.pem`, `test-device-rsa-2048.pem` (and `.pub.pem`):
  device keys for encrypted images (`imgtool keygen -t x25519|ecdsa-p256|rsa-2048`); the
  `mcuboot-enc-*.bin` images are encrypted for them (`imgtool sign --encrypt KEY.pub.pem`). A device
  holds the private half (`[trust] decryption-key`, mode 0600); whoever encrypts needs the public one.

Made by `Scripts/make-sample-images.sh` when missing.
EOF

# MCUboot images. --pad-header prepends --header-size zero bytes that imgtool fills with the
# header; no --pad, so each file ends right after its TLV areas (what a transfer carries).
make_image() { # output payload version header-size slot-size [extra imgtool create flags...]
  local output="$1" payload="$2" version="$3" header_size="$4" slot_size="$5"
  shift 5
  if [[ $force -eq 1 || ! -f "$images/$output" ]]; then
    imgtool create --version "$version" --header-size "$header_size" --pad-header \
      --slot-size "$slot_size" "$@" "$images/$payload" "$images/$output" >/dev/null
  fi
}

make_image mcuboot-unsigned-4099B.bin raw-4099B.bin 1.2.3+4 0x200 0x20000
make_image mcuboot-ed25519-100KiB.bin raw-100KiB.bin 2.0.1+7 0x200 0x40000 \
  --key "$keys/test-ed25519.pem" --security-counter 3
make_image mcuboot-ecdsa-p256-1B.bin raw-1B.bin 0.9.0+1 0x20 0x10000 \
  --key "$keys/test-ecdsa-p256.pem"
# Encrypted images: each has a fresh AES key and ephemeral key, so --force changes every byte of them.
make_image mcuboot-enc-x25519-100KiB.bin raw-100KiB.bin 2.1.0+0 0x200 0x40000 \
  --key "$keys/test-ed25519.pem" --encrypt "$keys/test-device-x25519.pub.pem"
make_image mcuboot-enc-p256-aes256-4099B.bin raw-4099B.bin 1.3.0+0 0x200 0x20000 \
  --key "$keys/test-ecdsa-p256.pem" --encrypt "$keys/test-device-ecdsa-p256.pub.pem" --encrypt-keylen 256
make_image mcuboot-enc-rsa-4099B.bin raw-4099B.bin 1.4.0+0 0x200 0x20000 \
  --key "$keys/test-ed25519.pem" --encrypt "$keys/test-device-rsa-2048.pub.pem"

# The sample firmware for the A/B demo and tests: three versions of a tiny application (a shell
# script, Images/firmware/app-vN.sh), wrapped as MCUboot images signed with the test Ed25519 key.
# v1 is the factory firmware, v2 passes its health check, v3 fails it (see firmware/health-check.sh).
# The releases are siblings, as real ones are: each carries the one before's 40 KiB of assets with a
# small region (512 bytes) changed, v2's at 16 KiB, v3's at 24 KiB, so a delta (otactl push --base)
# has something to copy. The sizes are those of before; v1's bytes are unchanged.
for version in 1 2 3; do
  payload="firmware/.payload-v$version.bin"
  cp "$images/firmware/app-v$version.sh" "$images/$payload"
  "$python" - "$images/$payload" "$version" <<'EOF'
import random, sys
path, version = sys.argv[1], int(sys.argv[2])
assets = bytearray(random.Random("assets-v1").randbytes(40 * 1024))
for later, offset in ((2, 16 * 1024), (3, 24 * 1024)):
    if version >= later:
        assets[offset:offset + 512] = random.Random(f"assets-v{later}").randbytes(512)
with open(path, "ab") as f:
    f.write(assets)
EOF
  make_image "firmware-v$version.bin" "$payload" "$version.0.0" 0x20 0x10000 --key "$keys/test-ed25519.pem"
  rm -f "$images/$payload"
done

# README: what each file is, how it was made, and its size, CRC32 and SHA-256 (computed here).
"$python" - "$images" <<'EOF'
import hashlib, os, struct, sys, zlib

images = sys.argv[1]
made = {
    "raw-1B.bin": "raw payload, 1 byte",
    "raw-4099B.bin": "raw payload, 4099 bytes (not a multiple of any block size)",
    "raw-100KiB.bin": "raw payload, 100 KiB",
    "raw-1MiB.bin": "raw payload, 1 MiB",
    "mcuboot-unsigned-4099B.bin":
        "MCUboot image of `raw-4099B.bin`, unsigned (SHA256 TLV only): "
        "`imgtool create --version 1.2.3+4 --header-size 0x200 --pad-header --slot-size 0x20000`",
    "mcuboot-ed25519-100KiB.bin":
        "MCUboot image of `raw-100KiB.bin`, signed with `keys/test-ed25519.pem`, security counter 3 "
        "(protected TLV area with SEC_CNT): `imgtool create --version 2.0.1+7 --header-size 0x200 "
        "--pad-header --slot-size 0x40000 --key keys/test-ed25519.pem --security-counter 3`",
    "mcuboot-ecdsa-p256-1B.bin":
        "MCUboot image of `raw-1B.bin`, signed with `keys/test-ecdsa-p256.pem`, smallest header "
        "(32 bytes): `imgtool create --version 0.9.0+1 --header-size 0x20 --pad-header "
        "--slot-size 0x10000 --key keys/test-ecdsa-p256.pem`",
    "mcuboot-enc-x25519-100KiB.bin":
        "MCUboot image of `raw-100KiB.bin`, signed with `keys/test-ed25519.pem`, encrypted for "
        "`keys/test-device-x25519.pem` (ENC_X25519, AES-128): `imgtool create --version 2.1.0 --header-size 0x200 "
        "--pad-header --slot-size 0x40000 --key keys/test-ed25519.pem --encrypt keys/test-device-x25519.pub.pem`",
    "mcuboot-enc-p256-aes256-4099B.bin":
        "MCUboot image of `raw-4099B.bin` (padded to 4112 bytes, a whole AES block), signed with "
        "`keys/test-ecdsa-p256.pem`, encrypted for `keys/test-device-ecdsa-p256.pem` (ENC_EC256, AES-256): "
        "`imgtool create --version 1.3.0 --header-size 0x200 --pad-header --slot-size 0x20000 --key "
        "keys/test-ecdsa-p256.pem --encrypt keys/test-device-ecdsa-p256.pub.pem --encrypt-keylen 256`",
    "mcuboot-enc-rsa-4099B.bin":
        "MCUboot image of `raw-4099B.bin` (padded to 4112 bytes), signed with `keys/test-ed25519.pem`, "
        "encrypted for `keys/test-device-rsa-2048.pem` (ENC_RSA2048, AES-128): `imgtool create --version "
        "1.4.0 --header-size 0x200 --pad-header --slot-size 0x20000 --key keys/test-ed25519.pem --encrypt "
        "keys/test-device-rsa-2048.pub.pem`",
}
for version, verdict in ((1, "the factory firmware"), (2, "passes its health check"),
                         (3, "fails its health check: a trial of it rolls back")):
    made[f"firmware-v{version}.bin"] = (
        f"sample firmware {version}.0.0, {verdict}: MCUboot image of `firmware/app-v{version}.sh` and 40 KiB of "
        f"made-up assets (each release's are the one before's with 512 bytes changed), signed with "
        f"`keys/test-ed25519.pem`: `imgtool create --version {version}.0.0 --header-size 0x20 --pad-header "
        f"--slot-size 0x10000 --key keys/test-ed25519.pem`")

def version_of(data):
    if len(data) < 32 or struct.unpack_from("<I", data, 0)[0] != 0x96F3B83D:
        return "—"
    major, minor, revision, build = struct.unpack_from("<BBHI", data, 20)
    return f"{major}.{minor}.{revision}+{build}"

rows = []
for name, what in made.items():
    with open(os.path.join(images, name), "rb") as f:
        data = f.read()
    rows.append(f"| `{name}` | {len(data)} | {version_of(data)} | `0x{zlib.crc32(data):08x}` | "
                f"`{hashlib.sha256(data).hexdigest()}` | {what} |")

with open(os.path.join(images, "README.md"), "w") as f:
    f.write("""# Sample images

Made by `Scripts/make-sample-images.sh` (rerun it to rebuild what is missing; `--force` remakes
the MCUboot images). Raw payloads are deterministic bytes from Python's `random.Random(file name)`;
MCUboot images are made from them by the real `imgtool` (MCUboot's own tool), so they are the
format as MCUboot defines it, not as this project understands it. Keys are in `keys/`: TEST keys,
public on purpose.

Size in bytes; CRC32 as `python3 -c "import zlib,sys;print(hex(zlib.crc32(open(sys.argv[1],'rb').read())))" FILE`
prints it; SHA-256 of the whole file (`sha256sum`), not MCUboot's hashed range. Versions are the
MCUboot header's; raw payloads have none (the sender states one when it prepares the transfer).

The `firmware-v*.bin` images carry a tiny application (`firmware/app-v*.sh`) for the A/B demo:
`firmware/health-check.sh` takes it out of a slot and runs its self-test, as otad's health check.

| File | Size | Version | CRC32 | SHA-256 (whole file) | What and how |
|---|---|---|---|---|---|
""")
    f.write("\n".join(rows) + "\n")
EOF

echo "make-sample-images: images are in $images"
