#!/usr/bin/env python3
"""A test .swu for the gateway tests, until `otactl image pack` exists: a cpio "newc" archive
(magic 070701) whose first member is sw-description (BlueOTA's libconfig layout) and whose second
is the image, then the TRAILER!!! entry.

    make_test_swu.py OUT.swu [--version 2.0.0+0] [--board blueota-sim] [--revision 1.0]
                     [--image FILE | --size N] [--filename firmware.mcuboot.bin]

Without --image the image is N (default 4096) pseudo-random bytes, fixed by the version.
Prints the image's sha256.
"""
import argparse
import hashlib
import random
import sys


def cpio_member(name, data, ino):
    name_bytes = name.encode() + b"\0"
    fields = [ino, 0o100644, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_bytes), 0]
    header = b"070701" + b"".join(b"%08X" % f for f in fields)
    out = header + name_bytes
    out += b"\0" * ((4 - len(out) % 4) % 4)
    out += data
    out += b"\0" * ((4 - len(out) % 4) % 4)
    return out


def sw_description(version, board, revisions, filename, sha256):
    compat = ", ".join(f'"{r}"' for r in revisions)
    return f"""software =
{{
  version = "{version}";
  description = "BlueOTA: an MCUboot image for otad";
  {board} =
  {{
    hardware-compatibility = [ {compat} ];
    images: (
      {{
        filename = "{filename}";
        type = "blueota-mcuboot";
        sha256 = "{sha256}";
      }}
    );
  }};
}};
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--version", default="2.0.0+0")
    parser.add_argument("--board", default="blueota-sim")
    parser.add_argument("--revision", action="append", default=None)
    parser.add_argument("--image")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--filename", default="firmware.mcuboot.bin")
    args = parser.parse_args()
    if args.image:
        with open(args.image, "rb") as f:
            image = f.read()
    else:
        image = random.Random(args.version).randbytes(args.size)
    sha256 = hashlib.sha256(image).hexdigest()
    desc = sw_description(args.version, args.board, args.revision or ["1.0"], args.filename, sha256).encode()
    archive = cpio_member("sw-description", desc, 1) + cpio_member(args.filename, image, 2)
    archive += cpio_member("TRAILER!!!", b"", 0)
    archive += b"\0" * ((512 - len(archive) % 512) % 512)
    with open(args.out, "wb") as f:
        f.write(archive)
    print(sha256)


if __name__ == "__main__":
    sys.exit(main())
