#!/usr/bin/env python3
"""A slot's "kernel" for the U-Boot test: a valid arm64 Image that booti accepts and that says
which slot started, with no cross compiler (the A64 instruction words are emitted here).

  mkpayload.py SLOT MODE OUT     SLOT: A or B; MODE: run (print, then power off) or hang

run: writes "OTAD-SLOT-STARTED <SLOT>\\n" to the PL011 UART of qemu's virt machine (0x09000000),
then PSCI SYSTEM_OFF (x0 = 0x84000008, hvc #0: qemu's virt machine without EL2/EL3 emulates PSCI
with the HVC conduit), so qemu exits on its own. hang: prints "OTAD-SLOT-HANGS <SLOT>\\n" and then
spins forever, as a kernel that stops answering: only the harness's watchdog ends that boot.
"""
import struct
import sys


def b(offset):  # B <offset> (bytes, relative)
    return 0x14000000 | ((offset // 4) & 0x3FFFFFF)


def adr(rd, offset):  # ADR Xd, <offset>
    return 0x10000000 | ((offset & 3) << 29) | (((offset >> 2) & 0x7FFFF) << 5) | rd


def movz(rd, imm16, shift):  # MOVZ Xd, #imm16, LSL #shift
    return 0xD2800000 | ((shift // 16) << 21) | (imm16 << 5) | rd


def movk(rd, imm16, shift):  # MOVK Xd, #imm16, LSL #shift
    return 0xF2800000 | ((shift // 16) << 21) | (imm16 << 5) | rd


def ldrb_post(rt, rn, imm):  # LDRB Wt, [Xn], #imm
    return 0x38400400 | ((imm & 0x1FF) << 12) | (rn << 5) | rt


def strb(rt, rn):  # STRB Wt, [Xn]
    return 0x39000000 | (rn << 5) | rt


def cbz(rt, offset):  # CBZ Wt, <offset>
    return 0x34000000 | (((offset // 4) & 0x7FFFF) << 5) | rt


HVC0 = 0xD4000002


def payload(slot, mode):
    message = ("OTAD-SLOT-STARTED %s\n" if mode == "run" else "OTAD-SLOT-HANGS %s\n") % slot
    code = []  # instruction words from offset 64 (after the Image header)
    # 0: adr x1, message (patched below)   4: x2 = 0x09000000 (PL011 data register)
    code += [None, movz(2, 0x0900, 16)]
    # 8: loop: ldrb w3, [x1], #1   12: cbz w3, done   16: strb w3, [x2]   20: b loop
    code += [ldrb_post(3, 1, 1), cbz(3, 24 - 12), strb(3, 2), b(8 - 20)]
    if mode == "run":
        # 24: done: x0 = PSCI SYSTEM_OFF   32: hvc #0   36: b . (should SYSTEM_OFF return)
        code += [movz(0, 0x0008, 0), movk(0, 0x8400, 16), HVC0, b(0)]
    else:
        code += [b(0)]  # 24: done: spin forever
    message_offset = len(code) * 4
    code[0] = adr(1, message_offset)
    body = b"".join(struct.pack("<I", word) for word in code) + message.encode() + b"\0"
    body += b"\0" * (-len(body) % 8)
    image_size = 64 + len(body)
    header = struct.pack(
        "<IIQQQQQQII",
        b(64),  # code0: branch past the header
        0,  # code1
        0,  # text_offset
        image_size,  # image_size (non-zero: a post-3.17 header, so booti honours the flags)
        0b1010,  # flags: little endian, 4 KiB pages, may run anywhere 2 MiB-aligned (bit 3)
        0, 0, 0,  # res2..res4
        0x644D5241,  # magic "ARM\x64", which booti checks
        0,  # res5
    )
    assert len(header) == 64
    return header + body


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("A", "B") or sys.argv[2] not in ("run", "hang"):
        sys.exit("usage: mkpayload.py A|B run|hang OUT")
    with open(sys.argv[3], "wb") as out:
        out.write(payload(sys.argv[1], sys.argv[2]))
