"""What the real-stack test's bleak clients (smp_ble.py, nrfutil_dfu_ble.py, nrf_ota_ble.py) need
in the harness VM: scan and connect from the central's adapter, find a device in short discovery
rounds, see a connection that bluetoothd 5.66 does not signal, make bluetoothd forget a device,
power-cycle the adapter. Imported from the same folder.
"""

import subprocess
import time
from typing import Any

from bleak import BleakScanner
from bleak.backends.bluezdbus import defs
from bleak.backends.bluezdbus.manager import BlueZManager
from dbus_fast import Message, MessageType


def use_adapter(adapter: str) -> None:
    """bleak scans from the first powered adapter, here otad's own (hci0): use the central's."""
    BlueZManager.get_default_adapter = lambda self: f"/org/bluez/{adapter}"  # type: ignore[method-assign]


# A virtual controller that filters duplicates reports an advertiser once per scan, at once, and
# Linux 6.1 drops a report that comes before its discovery is marked as finding: one long
# discovery can then miss a device that advertises all along (docs/BLUEZ.md). Discoveries of 1 s
# one after the other, as otactl does (BlueZ.discoveryRound), each a new chance.
DISCOVERY_ROUND_S = 1.0
_find_once = BleakScanner.find_device_by_address


async def _find_in_rounds(cls: type, address: str, timeout: float = 10.0, **kwargs: object) -> object:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        device = await _find_once(address, timeout=min(DISCOVERY_ROUND_S, left), **kwargs)
        if device is not None:
            return device
    return None


BleakScanner.find_device_by_address = classmethod(_find_in_rounds)  # type: ignore[method-assign, assignment]


# bluetoothd 5.66 on the central's side: when an LE connection's ATT channel comes up before the
# kernel's Device Connected event, att_connect_cb (src/device.c) marks the device connected without
# a PropertiesChanged, answers Connect(), and the event that follows finds the device "already
# connected" (its log line) and signals nothing either. Connected = true is never signalled for
# that connection. bleak, waiting for ServicesResolved or a disconnect, reads its cached
# Connected = false (from the last disconnect) and gives up at once: "failed to discover services,
# device disconnected" (docs/BLUEZ.md). The order of the two depends on timing: in the VM it
# happened on most reconnections to the same device. So before bleak waits for Connected to be
# false, ask bluetoothd for the property's present value, as otactl does (GetAll after Connect).
_wait_condition = BlueZManager._wait_condition


async def _wait_condition_live(self: BlueZManager, device_path: str, property_name: str, property_value: Any) -> None:
    if property_name == "Connected" and property_value is False and self._bus is not None:
        reply = await self._bus.call(
            Message(destination=defs.BLUEZ_SERVICE, path=device_path, interface="org.freedesktop.DBus.Properties",
                    member="Get", signature="ss", body=[defs.DEVICE_INTERFACE, "Connected"])
        )
        device = self._properties.get(device_path, {}).get(defs.DEVICE_INTERFACE)
        if reply.message_type == MessageType.METHOD_RETURN and device is not None:
            device["Connected"] = bool(reply.body[0].value)
    await _wait_condition(self, device_path, property_name, property_value)


BlueZManager._wait_condition = _wait_condition_live  # type: ignore[method-assign]


def forget(address: str, adapter: str) -> None:
    """Makes bluetoothd forget the device on the central's adapter: these virtual controllers do not
    report a device again to a central that already discovered it (otactl did, in earlier steps), and
    bleak finds a device only by discovering it."""
    device = f"/org/bluez/{adapter}/dev_" + address.upper().replace(":", "_")
    subprocess.run(
        ["busctl", "call", "org.bluez", f"/org/bluez/{adapter}", "org.bluez.Adapter1", "RemoveDevice", "o", device],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )


def power_cycle(adapter: str) -> None:
    """Powers the central's adapter off and on, a last resort between attempts: the controller and
    the kernel's discovery start from nothing."""
    for powered in ("false", "true"):
        subprocess.run(
            ["busctl", "set-property", "org.bluez", f"/org/bluez/{adapter}", "org.bluez.Adapter1", "Powered", "b", powered],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )
        time.sleep(1.0)
