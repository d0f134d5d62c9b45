#!/usr/bin/env python3
"""The advertising, scanning, discovery and connection story of a btmon capture, one line each.

    Scripts/vm/btsnoop-summary.py RESULTS/btmon.snoop [--all]

The harness keeps `btmon.snoop` (btmon -w, the monitor format) when a test failed. BlueZ 5.66's
`btmon -r` crashes part way through these captures, so this reads the file itself and prints what
tells a device that does not advertise from a central that does not hear it: per controller, the
LE advertising and scan enables, advertising reports, connections and disconnections, and
bluetoothd's discovery commands with the kernel's Discovering and Device Found events. --all adds
every other HCI command and event by opcode.
"""

import struct
import sys
from datetime import datetime, timedelta, timezone

# btsnoop's monitor opcodes (the low 16 bits of a record's flags; the high 16 are the index).
NEW_INDEX, COMMAND, EVENT, CTRL_COMMAND, CTRL_EVENT = 0, 2, 3, 16, 17

HCI_COMMANDS = {
    0x0406: "Disconnect",
    0x2005: "LE Set Random Address",
    0x2006: "LE Set Advertising Parameters",
    0x200A: "LE Set Advertise Enable",
    0x200B: "LE Set Scan Parameters",
    0x200C: "LE Set Scan Enable",
    0x200D: "LE Create Connection",
    0x2039: "LE Set Extended Advertising Enable",
    0x2042: "LE Set Extended Scan Enable",
}
MGMT_COMMANDS = {0x0014: "Disconnect", 0x0023: "Start Discovery", 0x0024: "Stop Discovery",
                 0x003A: "Start Service Discovery", 0x003E: "Add Advertising", 0x003F: "Remove Advertising"}


def address(raw: bytes) -> str:
    return ":".join(f"{b:02X}" for b in reversed(raw))


def hci_command(data: bytes, show_all: bool) -> str | None:
    opcode, _ = struct.unpack_from("<HB", data)
    name = HCI_COMMANDS.get(opcode)
    params = data[3:]
    if name is None:
        return f"HCI command 0x{opcode:04x}" if show_all else None
    if opcode in (0x200A, 0x200C) and params:
        state = "on" if params[0] else "off"
        extra = f", filter duplicates {'on' if params[1] else 'off'}" if opcode == 0x200C and len(params) > 1 else ""
        return f"{name}: {state}{extra}"
    if opcode == 0x0406 and len(params) >= 3:
        return f"{name}: handle {struct.unpack_from('<H', params)[0]}, reason 0x{params[2]:02x}"
    return name


def hci_event(data: bytes, show_all: bool) -> str | None:
    code, _ = data[0], data[1]
    params = data[2:]
    if code == 0x05 and len(params) >= 4:
        return f"Disconnect Complete: handle {struct.unpack_from('<H', params, 1)[0]}, reason 0x{params[3]:02x}"
    if code == 0x0E and len(params) >= 4:
        opcode = struct.unpack_from("<H", params, 1)[0]
        if opcode in HCI_COMMANDS:
            return f"  complete: {HCI_COMMANDS[opcode]}, status 0x{params[3]:02x}"
        return f"Command Complete 0x{opcode:04x}" if show_all else None
    if code == 0x3E and params:
        sub = params[0]
        if sub == 0x02 and len(params) >= 10:
            kinds = {0: "ADV_IND", 1: "ADV_DIRECT_IND", 2: "ADV_SCAN_IND", 3: "ADV_NONCONN_IND", 4: "SCAN_RSP"}
            return f"LE Advertising Report: {kinds.get(params[2], params[2])} from {address(params[4:10])}"
        if sub in (0x01, 0x0A) and len(params) >= 11:
            role = "central" if params[4] == 0 else "peripheral"
            return (f"LE Connection Complete: status 0x{params[1]:02x}, handle "
                    f"{struct.unpack_from('<H', params, 2)[0]}, as {role}, peer {address(params[6:12])}")
        return f"LE Meta 0x{sub:02x}" if show_all else None
    return f"HCI event 0x{code:02x}" if show_all else None


def mgmt_command(data: bytes) -> str | None:
    if len(data) < 6:
        return None
    opcode = struct.unpack_from("<H", data, 4)[0]
    name = MGMT_COMMANDS.get(opcode)
    return f"MGMT {name}" if name else None


def mgmt_event(data: bytes) -> str | None:
    if len(data) < 6:
        return None
    code = struct.unpack_from("<H", data, 4)[0]
    params = data[6:]
    if code == 0x0013 and len(params) >= 2:
        return f"MGMT Discovering: {'on' if params[1] else 'off'}"
    if code == 0x0012 and len(params) >= 6:
        return f"MGMT Device Found: {address(params[0:6])}"
    if code == 0x0001 and len(params) >= 3:
        opcode = struct.unpack_from("<H", params)[0]
        if opcode in MGMT_COMMANDS:
            return f"  MGMT complete: {MGMT_COMMANDS[opcode]}, status 0x{params[2]:02x}"
    if code == 0x000C and len(params) >= 6:
        return f"MGMT Device Disconnected: {address(params[0:6])}"
    return None


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--all"]
    show_all = "--all" in sys.argv[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    blob = open(args[0], "rb").read()
    if blob[:8] != b"btsnoop\0":
        print(f"{args[0]}: not a btsnoop file", file=sys.stderr)
        return 1
    _, datalink = struct.unpack_from(">II", blob, 8)
    if datalink != 2001:
        print(f"{args[0]}: datalink {datalink}, not btmon's monitor format (2001)", file=sys.stderr)
        return 1
    offset = 16
    while offset + 24 <= len(blob):
        _, included, flags, _, stamp = struct.unpack_from(">IIIIq", blob, offset)
        data = blob[offset + 24 : offset + 24 + included]
        offset += 24 + included
        index, opcode = flags >> 16, flags & 0xFFFF
        line = None
        try:
            if opcode == COMMAND:
                line = hci_command(data, show_all)
            elif opcode == EVENT:
                line = hci_event(data, show_all)
            elif opcode == CTRL_COMMAND:
                line = mgmt_command(data)
            elif opcode == CTRL_EVENT:
                line = mgmt_event(data)
            elif opcode == NEW_INDEX:
                line = "controller added"
        except (struct.error, IndexError):
            line = "(a record too short to read)"
        if line is None:
            continue
        when = datetime.fromtimestamp(0, timezone.utc) + timedelta(microseconds=stamp - 0x00E03AB44A676000)
        print(f"{when:%H:%M:%S.%f} hci{index if index != 0xFFFF else '-'} {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
