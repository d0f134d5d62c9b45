#!/usr/bin/env python3
"""End-to-end smoke test of the real BlueZ stack in the harness VM, with nothing but Debian's
python3-dbus: a GATT peripheral on hci0, a central on hci1.

  * peripheral (a child process, so that neither side can deadlock the other's D-Bus calls):
    registers one service with one read/write characteristic through
    org.bluez.GattManager1.RegisterApplication, and an advertisement carrying the service UUID
    through org.bluez.LEAdvertisingManager1.RegisterAdvertisement, then prints READY;
  * central: SetDiscoveryFilter(Transport=le, UUIDs=[service]) + StartDiscovery on hci1, waits for
    the peripheral, Device1.Connect, waits for ServicesResolved, writes 216 bytes (with response)
    and reads them back: the peripheral app's WriteValue stored them and its ReadValue serves them.

Prints PASS with the times (discovery, connect, services resolved, write, read), the ATT MTU and
the EATT bearers the kernel shows (checked against [GATT] Channels: none with Channels = 1), and
exits 0; FAIL and exits 1 otherwise. Every wait is bounded. Run by Scripts/vm/smoke-test.sh inside
the VM (Scripts/vm/run.sh).
"""

import configparser
import os
import select
import subprocess
import sys
import time

if __name__ == "__main__" and sys.argv[1:] != ["peripheral"]:
    # Start the peripheral before importing dbus and gi: under emulation each python3 needs
    # seconds for that, and the two processes then spend them at the same time on the VM's 2 CPUs.
    peripheral_process = subprocess.Popen([sys.executable, "-B", os.path.abspath(__file__), "peripheral"],
                                          stdout=subprocess.PIPE, text=True, bufsize=1)

import dbus  # noqa: E402 - after starting the peripheral, on purpose
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
OM = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"
ADAPTER = "org.bluez.Adapter1"
DEVICE = "org.bluez.Device1"
GATT_MANAGER = "org.bluez.GattManager1"
ADV_MANAGER = "org.bluez.LEAdvertisingManager1"
SERVICE = "org.bluez.GattService1"
CHRC = "org.bluez.GattCharacteristic1"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"

SERVICE_UUID = "5a0e0001-6c1e-4b0e-9f0a-b10e07a00001"
CHRC_UUID = "5a0e0002-6c1e-4b0e-9f0a-b10e07a00001"
APP_PATH = "/org/blueota/smoke"
PERIPHERAL = os.environ.get("GUEST_PERIPHERAL", "hci0")
CENTRAL = os.environ.get("GUEST_CENTRAL", "hci1")
WAIT = 20.0  # seconds, for every single wait


def log(role, message):
    # Progress goes to stderr; stdout carries only READY (peripheral) and PASS/FAIL (central).
    print(f"[{role}] {message}", file=sys.stderr, flush=True)


def run_loop_until(condition, timeout, what):
    """Iterate the GLib main loop until condition() is true; raise after timeout seconds."""
    context = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        context.iteration(False) or time.sleep(0.002)


# --- peripheral ---------------------------------------------------------------------------------

class Application(dbus.service.Object):
    """The ObjectManager root bluetoothd reads the GATT database from."""

    def __init__(self, bus):
        super().__init__(bus, APP_PATH)
        self.service = Service(bus)

    @dbus.service.method(OM, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        chrc = self.service.characteristic
        return {
            self.service.path: {SERVICE: self.service.properties()},
            chrc.path: {CHRC: chrc.properties()},
        }


class Service(dbus.service.Object):
    def __init__(self, bus):
        self.path = APP_PATH + "/service0"
        super().__init__(bus, self.path)
        self.characteristic = Characteristic(bus, self)

    def properties(self):
        return {
            "UUID": SERVICE_UUID,
            "Primary": True,
            "Characteristics": dbus.Array([self.characteristic.path], signature="o"),
        }

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()


class Characteristic(dbus.service.Object):
    def __init__(self, bus, service):
        self.path = service.path + "/char0"
        super().__init__(bus, self.path)
        self.service = service
        self.value = bytearray(b"smoke")

    def properties(self):
        return {
            "Service": dbus.ObjectPath(self.service.path),
            "UUID": CHRC_UUID,
            "Flags": dbus.Array(["read", "write"], signature="s"),
        }

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()

    @dbus.service.method(CHRC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        offset = int(options.get("offset", 0))
        return dbus.ByteArray(bytes(self.value[offset:]))

    @dbus.service.method(CHRC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        offset = int(options.get("offset", 0))
        self.value[offset:] = bytes(value)
        keys = ",".join(sorted(str(k) for k in options.keys()))
        log("peripheral", f"WriteValue {len(value)} bytes, options {keys}, mtu {options.get('mtu', '?')}")


class Advertisement(dbus.service.Object):
    def __init__(self, bus):
        self.path = APP_PATH + "/advertisement0"
        super().__init__(bus, self.path)

    def properties(self):
        return {
            "Type": "peripheral",
            "ServiceUUIDs": dbus.Array([SERVICE_UUID], signature="s"),
            "LocalName": "BlueOTA-smoke",
        }

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()

    @dbus.service.method(ADVERTISEMENT)
    def Release(self):
        log("peripheral", "advertisement released")


def peripheral():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter_path = f"/org/bluez/{PERIPHERAL}"
    adapter = bus.get_object(BLUEZ, adapter_path)
    adapter.Set(ADAPTER, "Powered", dbus.Boolean(True), dbus_interface=PROPS)

    app = Application(bus)
    advertisement = Advertisement(bus)
    results = {}

    def done(name):
        return lambda *args: results.setdefault(name, ("ok", args))

    def failed(name):
        return lambda error: results.setdefault(name, ("error", error))

    # Asynchronous: bluetoothd calls back into this process (GetManagedObjects, GetAll) before it
    # answers, so a blocking call here would deadlock.
    adapter.RegisterApplication(dbus.ObjectPath(app._object_path), {}, dbus_interface=GATT_MANAGER,
                                reply_handler=done("app"), error_handler=failed("app"))
    adapter.RegisterAdvertisement(dbus.ObjectPath(advertisement.path), {}, dbus_interface=ADV_MANAGER,
                                  reply_handler=done("adv"), error_handler=failed("adv"))
    run_loop_until(lambda: "app" in results and "adv" in results, WAIT, "RegisterApplication/RegisterAdvertisement")
    for name in ("app", "adv"):
        if results[name][0] != "ok":
            log("peripheral", f"FAIL registering {name}: {results[name][1]}")
            sys.exit(1)
    print("READY", flush=True)
    GLib.MainLoop().run()  # until the parent terminates this process


# --- central ------------------------------------------------------------------------------------

def eatt_bearers():
    """EATT bearers in use: connected L2CAP channels on the EATT PSM (0x27) in the kernel's list
    (debugfs), halved, since both ends of each bearer live in this one kernel."""
    try:
        with open("/sys/kernel/debug/bluetooth/l2cap") as table:
            rows = [line.split() for line in table]
    except OSError:
        return None
    # src (type) dst (type) state psm scid dcid imtu omtu sec mode; state 1 is BT_CONNECTED
    return sum(1 for row in rows if len(row) >= 7 and row[4] == "1" and row[5] == "39") // 2


def configured_channels():
    """[GATT] Channels of the main.conf bluetoothd runs with (BT_CONF; 3 when unset)."""
    parser = configparser.ConfigParser(strict=False)
    conf = os.environ.get("BT_CONF")
    if conf:
        parser.read(conf)
    return parser.getint("GATT", "Channels", fallback=3)


def central():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    manager = dbus.Interface(bus.get_object(BLUEZ, "/"), OM)
    adapter_path = f"/org/bluez/{CENTRAL}"
    adapter_object = bus.get_object(BLUEZ, adapter_path)
    adapter = dbus.Interface(adapter_object, ADAPTER)
    adapter_object.Set(ADAPTER, "Powered", dbus.Boolean(True), dbus_interface=PROPS)

    state = {"device": None, "connected": False, "resolved": False}

    def consider(path, interfaces):
        device = interfaces.get(DEVICE)
        if device is None or not str(path).startswith(adapter_path + "/"):
            return
        uuids = [str(u).lower() for u in device.get("UUIDs", [])]
        if SERVICE_UUID in uuids and state["device"] is None:
            state["device"] = str(path)
            state["found_at"] = time.monotonic()

    def properties_changed(interface, changed, invalidated, path=None):
        if interface == DEVICE and path == state["device"]:
            if "Connected" in changed:
                state["connected"] = bool(changed["Connected"])
            if "ServicesResolved" in changed:
                state["resolved"] = bool(changed["ServicesResolved"])
                if state["resolved"]:
                    state.setdefault("resolved_at", time.monotonic())
        elif interface == DEVICE and path and state["device"] is None and "UUIDs" in changed:
            consider(path, {DEVICE: {"UUIDs": changed["UUIDs"]}})

    bus.add_signal_receiver(lambda path, interfaces: consider(path, interfaces),
                            dbus_interface=OM, signal_name="InterfacesAdded")
    bus.add_signal_receiver(properties_changed, dbus_interface=PROPS, signal_name="PropertiesChanged",
                            path_keyword="path")

    adapter.SetDiscoveryFilter({"Transport": "le", "UUIDs": dbus.Array([SERVICE_UUID], signature="s")})
    t_discovery = time.monotonic()
    adapter.StartDiscovery()
    for path, interfaces in manager.GetManagedObjects().items():
        consider(path, interfaces)
    run_loop_until(lambda: state["device"] is not None, WAIT, f"a device advertising {SERVICE_UUID}")
    discovery = state["found_at"] - t_discovery
    adapter.StopDiscovery()
    device_path = state["device"]
    log("central", f"found {device_path} after {discovery:.3f} s")

    device_object = bus.get_object(BLUEZ, device_path)
    device = dbus.Interface(device_object, DEVICE)
    t_connect = time.monotonic()
    device.Connect(timeout=WAIT)
    connect = time.monotonic() - t_connect
    if device_object.Get(DEVICE, "ServicesResolved", dbus_interface=PROPS):
        state["resolved"] = True
        state.setdefault("resolved_at", time.monotonic())
    run_loop_until(lambda: state["resolved"], WAIT, "ServicesResolved")
    resolved = state["resolved_at"] - t_connect
    log("central", f"connected in {connect:.3f} s, services resolved {resolved:.3f} s after Connect")

    chrc_path = None
    for path, interfaces in manager.GetManagedObjects().items():
        c = interfaces.get(CHRC)
        if c and str(path).startswith(device_path + "/") and str(c["UUID"]).lower() == CHRC_UUID:
            chrc_path = path
    if chrc_path is None:
        raise RuntimeError(f"characteristic {CHRC_UUID} not found under {device_path}")
    chrc_object = bus.get_object(BLUEZ, chrc_path)
    chrc = dbus.Interface(chrc_object, CHRC)

    payload = bytes(range(200)) + os.urandom(16)
    t_write = time.monotonic()
    chrc.WriteValue(dbus.ByteArray(payload), {"type": "request"}, timeout=WAIT)
    write = time.monotonic() - t_write
    t_read = time.monotonic()
    value = bytes(chrc.ReadValue({}, timeout=WAIT))
    read = time.monotonic() - t_read
    if value != payload:
        raise RuntimeError(f"read back {len(value)} bytes that differ from the {len(payload)} written")

    try:
        mtu = int(chrc_object.Get(CHRC, "MTU", dbus_interface=PROPS))
    except dbus.exceptions.DBusException:
        mtu = None
    eatt = eatt_bearers()
    channels = configured_channels()
    device.Disconnect(timeout=WAIT)
    # Channels = 1 must mean no EATT bearer; the default 3 means up to 2 besides the fixed one.
    if eatt is not None and (eatt > 0) != (channels > 1):
        raise RuntimeError(f"{eatt} EATT bearers with [GATT] Channels = {channels}")
    print(f"PASS discovery {discovery:.3f} s, connect {connect:.3f} s, services resolved {resolved:.3f} s, "
          f"write {write * 1000:.1f} ms, read {read * 1000:.1f} ms ({len(payload)} bytes), "
          f"mtu {mtu}, EATT bearers {eatt} ([GATT] Channels = {channels})", flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "peripheral":
        peripheral()
        return 0
    child = peripheral_process
    try:
        # The peripheral's only stdout line is READY; its progress goes to the shared stderr.
        readable, _, _ = select.select([child.stdout], [], [], 2 * WAIT)
        line = child.stdout.readline().strip() if readable else ""
        if line != "READY":
            print(f"FAIL peripheral did not get ready on {PERIPHERAL}", flush=True)
            return 1
        log("central", f"peripheral ready on {PERIPHERAL}")
        central()
        return 0
    except Exception as error:  # noqa: BLE001 - any failure is a FAIL line and exit 1
        print(f"FAIL {type(error).__name__}: {error}", flush=True)
        return 1
    finally:
        child.terminate()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()


if __name__ == "__main__":
    sys.exit(main())
