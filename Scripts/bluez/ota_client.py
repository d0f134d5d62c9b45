#!/usr/bin/python3
"""A BLE central that is not otactl, for the real-stack tests (python3-dbus, Debian's own).

  ota_client.py malformed ADDRESS        writes malformed values to the control point and junk to
                                         the data characteristic through bluetoothd, and checks that
                                         every control write is answered with the right status
  ota_client.py raw-throughput ADDRESS N streams N bytes of write-without-response through
                                         AcquireWrite (the device drops them: no transfer is
                                         prepared) and prints the bytes per second the stack carried
  ota_client.py intruder ADDRESS refused|accepted [READY GO]
                                         a second central: connects and reads Info (always answered);
                                         with READY and GO, creates READY and waits for GO to appear
                                         (another central starts pushing meanwhile); then writes
                                         ABORT and STATUS to the control point ("refused": otad must
                                         refuse both at the ATT level, 0xFE, "procedure already in
                                         progress", while the other central holds the service) or
                                         STATUS alone ("accepted": answered once it has gone)
  ota_client.py hostile-channel ADDRESS L2CAP_RAW
                                         connects over GATT and reads Info (otad admits a channel only
                                         from the central connected on GATT), runs `L2CAP_RAW hostile
                                         ADDRESS PSM` on the same link (malformed SDUs through the real
                                         kernel), then checks that otad still answers and counted the
                                         chunks it dropped (Info offset 70)

Runs on the central's adapter (GUEST_CENTRAL, default hci1). Every wait is bounded. Prints JSON on
the last line; exits 0 when every check passed.
"""

import json
import os
import socket
import subprocess
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = "org.bluez"
PROPS = "org.freedesktop.DBus.Properties"
DEVICE = "org.bluez.Device1"
CHRC = "org.bluez.GattCharacteristic1"
OTA = {
    "control": "d3df0002-cb6f-4f89-ab54-b800f5482b5b",
    "data": "d3df0003-cb6f-4f89-ab54-b800f5482b5b",
    "info": "d3df0004-cb6f-4f89-ab54-b800f5482b5b",
}
ADAPTER = os.environ.get("GUEST_CENTRAL", "hci1")
WAIT = 20.0


def loop_until(condition, timeout, what):
    context = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        context.iteration(False) or time.sleep(0.005)


class Central:
    def __init__(self, address):
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        self.bus = dbus.SystemBus()
        self.path = f"/org/bluez/{ADAPTER}/dev_" + address.upper().replace(":", "_")
        self.notifications = []
        self.bus.add_signal_receiver(
            self.on_changed, dbus_interface=PROPS, signal_name="PropertiesChanged", path_keyword="path")

    def on_changed(self, interface, changed, invalidated, path=None):
        if interface == CHRC and path == self.chars.get("control") and "Value" in changed:
            self.notifications.append(bytes(changed["Value"]))

    def device_property(self, name):
        return self.bus.get_object(BLUEZ, self.path).Get(DEVICE, name, dbus_interface=PROPS)

    def connect(self):
        """Connects and resolves. A link still going down (the previous client's disconnect) is
        waited out first: hammering a disconnecting device crashed bluetoothd 5.66 here."""
        deadline = time.monotonic() + WAIT
        try:
            loop_until(lambda: not bool(self.device_property("Connected")), 10, "the previous link to close")
        except (dbus.exceptions.DBusException, TimeoutError):
            pass  # unknown device yet, or a link that stays: connect anyway
        while True:
            try:
                return self.connect_once()
            except dbus.exceptions.DBusException as error:
                if "NotConnected" not in error.get_dbus_name() or time.monotonic() > deadline:
                    raise
                time.sleep(1.0)

    def connect_once(self):
        adapter = self.bus.get_object(BLUEZ, f"/org/bluez/{ADAPTER}")
        adapter.SetDiscoveryFilter({"Transport": "le"}, dbus_interface="org.bluez.Adapter1")
        try:
            adapter.StartDiscovery(dbus_interface="org.bluez.Adapter1")
        except dbus.exceptions.DBusException:
            pass
        objects = lambda: self.bus.get_object(BLUEZ, "/").GetManagedObjects(
            dbus_interface="org.freedesktop.DBus.ObjectManager")
        # Twice WAIT: a harness may have to make the device's advertising begin during this
        # discovery (btvirt reports an advertiser only then: guest-multi.sh step 7).
        loop_until(lambda: self.path in objects(), 2 * WAIT, f"{self.path} to be seen")
        adapter.StopDiscovery(dbus_interface="org.bluez.Adapter1")
        device = self.bus.get_object(BLUEZ, self.path)
        device.Connect(dbus_interface=DEVICE, timeout=WAIT)
        loop_until(lambda: bool(self.device_property("ServicesResolved")), WAIT, "services")
        self.chars = {}
        for path, interfaces in objects().items():
            if path.startswith(self.path) and CHRC in interfaces:
                for name, uuid in OTA.items():
                    if str(interfaces[CHRC]["UUID"]) == uuid:
                        self.chars[name] = path
        assert set(self.chars) == set(OTA), f"OTA characteristics: {self.chars}"
        self.char("control").StartNotify(dbus_interface=CHRC)

    def char(self, name):
        return self.bus.get_object(BLUEZ, self.chars[name])

    def command(self, value):
        """Writes to the control point (with response) and waits for the notification it causes."""
        before = len(self.notifications)
        options = dbus.Dictionary({"type": dbus.String("request")}, signature="sv")
        self.char("control").WriteValue(dbus.Array(value, signature="y"), options, dbus_interface=CHRC)
        loop_until(lambda: len(self.notifications) > before, 5, f"an answer to {bytes(value).hex()}")
        return self.notifications[before]

    def disconnect(self):
        self.bus.get_object(BLUEZ, self.path).Disconnect(dbus_interface=DEVICE)


def malformed(address):
    central = Central(address)
    central.connect()
    # (what is written, the response expected: 0x60, the opcode echoed, the status)
    cases = [
        ([0x06], [0x60, 0x06, 0x00]),  # ABORT whatever is there: the cases below need an idle device
        ([0x42], [0x60, 0x42, 0x01]),  # unknown opcode
        ([0x00, 1, 2], [0x60, 0x00, 0x01]),  # opcode 0 is unknown too
        ([0x01, 1, 2, 3], [0x60, 0x01, 0x02]),  # PREPARE too short
        ([0x02, 0], [0x60, 0x02, 0x02]),  # STATUS with a payload
        ([0x03, 0, 0], [0x60, 0x03, 0x02, 0, 0, 0, 0]),  # WINDOW too short (answer carries an offset)
        ([0x05, 0x80], [0x60, 0x05, 0x04]),  # ACTIVATE with a reserved flag
        ([0x04], [0x60, 0x04, 0x03]),  # VALIDATE with nothing received
        ([0x05, 0x00], [0x60, 0x05, 0x03]),  # ACTIVATE with nothing validated
        ([0x01] + [0xFF] * 4 + [0] * 12, [0x60, 0x01, 0x05]),  # PREPARE of 4 GiB: too large
        ([0x01] + [0] * 16, [0x60, 0x01, 0x04]),  # PREPARE of 0 bytes
    ]
    failures = []
    for written, expected in cases:
        answer = list(central.command(written))
        if answer != expected:
            failures.append({"wrote": bytes(written).hex(), "expected": bytes(expected).hex(), "got": bytes(answer).hex()})
    # Junk on the data characteristic: dropped and counted, never answered, never fatal.
    fd, mtu = central.char("data").AcquireWrite({}, dbus_interface=CHRC)
    data = socket.socket(fileno=fd.take())
    for junk in ([1], [0xFF] * 4, [0xFF] * 200, list(range(256)) * 2):
        data.send(bytes(junk[: mtu - 3]))
    data.close()
    status = list(central.command([0x02]))  # still serving, and still idle
    if status[:4] != [0x60, 0x02, 0x00, 0x00]:
        failures.append({"status after junk": bytes(status).hex()})
    central.disconnect()
    print(json.dumps({"cases": len(cases), "failures": failures}))
    return 0 if not failures else 1


def raw_throughput(address, total):
    central = Central(address)
    central.connect()
    fd, mtu = central.char("data").AcquireWrite({}, dbus_interface=CHRC)
    data = socket.socket(fileno=fd.take())
    data.setblocking(True)  # wait for room: the stack's own flow control sets the pace
    size = min(int(mtu) - 3, 510)
    packet = bytes([0xEE]) * size
    sent = 0
    started = time.monotonic()
    while sent < total:
        data.send(packet)
        sent += size
    # A read waits behind the writes queued before it on the bearer: the stack has carried them.
    central.char("info").ReadValue({}, dbus_interface=CHRC)
    seconds = time.monotonic() - started
    data.close()
    central.disconnect()
    print(json.dumps({"bytes": sent, "seconds": seconds, "bytesPerSecond": sent / seconds, "mtu": int(mtu)}))
    return 0


def hostile_channel(address, tool):
    central = Central(address)
    central.connect()
    info = bytes(central.char("info").ReadValue({}, dbus_interface=CHRC))
    if len(info) < 80:
        print(json.dumps({"error": f"Info is {len(info)} bytes: no L2CAP PSM (offset 78)"}))
        return 1
    psm = int.from_bytes(info[78:80], "little")
    dropped_before = int.from_bytes(info[70:74], "little")
    if psm == 0:
        print(json.dumps({"error": "the device offers no L2CAP channel"}))
        return 1
    # The raw channel rides the ACL link bluetoothd holds for this connection.
    run = subprocess.run([tool, "hostile", address, hex(psm)], capture_output=True, text=True, timeout=120)
    sent = json.loads(run.stdout.strip().splitlines()[-1]) if run.returncode == 0 and run.stdout.strip() else None
    failures = []
    if sent is None:
        failures.append({"l2cap-raw": run.returncode, "stderr": run.stderr.strip()})
    status = list(central.command([0x02]))  # still serving, and still idle
    if status[:4] != [0x60, 0x02, 0x00, 0x00]:
        failures.append({"status after the SDUs": bytes(status).hex()})
    info = bytes(central.char("info").ReadValue({}, dbus_interface=CHRC))
    dropped_after = int.from_bytes(info[70:74], "little")
    # The lying offset and the flood's chunks reach the receiver and are dropped there, counted.
    if dropped_after <= dropped_before:
        failures.append({"chunksDropped": [dropped_before, dropped_after]})
    central.disconnect()
    print(json.dumps({"psm": psm, "sent": sent, "chunksDropped": dropped_after - dropped_before,
                      "failures": failures}))
    return 0 if not failures else 1


def intruder(address, expected, ready=None, go=None):
    central = Central(address)
    central.connect()
    info = bytes(central.char("info").ReadValue({}, dbus_interface=CHRC))
    result = {"infoBytes": len(info), "expected": expected, "writes": []}
    failures = []
    if len(info) < 70:
        failures.append(f"Info read {len(info)} bytes")
    if ready and go:
        open(ready, "w").close()
        deadline = time.monotonic() + 120
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.02)
        # Another central pushes now: this one's reads are still answered, for its own MTU.
        if len(bytes(central.char("info").ReadValue({}, dbus_interface=CHRC))) < 70:
            failures.append("Info read while the other central pushed")
    for written in ([0x06], [0x02]) if expected == "refused" else ([0x02],):  # ABORT, STATUS
        try:
            answer = central.command(written)
            result["writes"].append({"wrote": bytes(written).hex(), "answer": answer.hex()})
            if expected == "refused":
                failures.append(f"{bytes(written).hex()} was answered {answer.hex()}: not refused")
        except dbus.exceptions.DBusException as error:
            text = f"{error.get_dbus_name()}: {error.get_dbus_message()}"
            result["writes"].append({"wrote": bytes(written).hex(), "error": text})
            if expected != "refused" or "0xfe" not in text.lower():
                failures.append(f"{bytes(written).hex()}: {text}")
    central.disconnect()
    result["failures"] = failures
    print(json.dumps(result))
    return 0 if not failures else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "intruder":
        sys.exit(intruder(sys.argv[2], sys.argv[3] if len(sys.argv) >= 4 else "refused", *sys.argv[4:6]))
    if len(sys.argv) >= 4 and sys.argv[1] == "hostile-channel":
        sys.exit(hostile_channel(sys.argv[2], sys.argv[3]))
    if len(sys.argv) >= 3 and sys.argv[1] == "malformed":
        sys.exit(malformed(sys.argv[2]))
    if len(sys.argv) >= 4 and sys.argv[1] == "raw-throughput":
        sys.exit(raw_throughput(sys.argv[2], int(sys.argv[3])))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
