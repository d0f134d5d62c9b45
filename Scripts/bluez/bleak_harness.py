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


# Two things bluetoothd 5.66 signals wrongly on the central's side (docs/BLUEZ.md), both seen in
# the VM on 2026-11-28:
# - When an LE connection's ATT channel comes up before the kernel's Device Connected event,
#   att_connect_cb (src/device.c) marks the device connected without a PropertiesChanged and answers
#   Connect(); the event that follows finds the device "already connected" (its log line) and
#   signals nothing either. bleak, waiting for ServicesResolved or a disconnect, reads its cached
#   Connected = false (from the last disconnect) and gives up at once: "failed to discover
#   services, device disconnected". So before bleak waits for Connected to be false, it is told the
#   property's present value, as otactl reads the properties after Connect (GetAll).
# - ServicesResolved = true can come before the InterfacesAdded of the services it resolved:
#   gdbus sends queued signals object by object, and the device's object may have been queued
#   first. bleak builds the services it reports from the objects it has heard of when
#   ServicesResolved comes, and then has none, or some (nrf-ota: "Legacy DFU service not found";
#   bleak's MTU lookup: StopIteration). gdbus sends every queued signal before any answer
#   (g_dbus_flush), so one question after ServicesResolved brings the rest first.


async def _ask_bluetoothd(manager: BlueZManager, device_path: str, name: str) -> Any:
    """The device's property NAME as bluetoothd has it now (None if it did not answer). Every
    signal bluetoothd had queued reached bleak's handlers before this answer."""
    assert manager._bus is not None
    reply = await manager._bus.call(
        Message(destination=defs.BLUEZ_SERVICE, path=device_path, interface="org.freedesktop.DBus.Properties",
                member="Get", signature="ss", body=[defs.DEVICE_INTERFACE, name])
    )
    return reply.body[0].value if reply.message_type == MessageType.METHOD_RETURN else None


_wait_condition = BlueZManager._wait_condition
_wait_for_services_discovery = BlueZManager._wait_for_services_discovery


async def _wait_condition_told(self: BlueZManager, device_path: str, property_name: str, property_value: Any) -> None:
    if property_name == "Connected" and property_value is False and self._bus is not None:
        connected = await _ask_bluetoothd(self, device_path, "Connected")
        device = self._properties.get(device_path, {}).get(defs.DEVICE_INTERFACE)
        if connected is not None and device is not None:
            device["Connected"] = bool(connected)
    await _wait_condition(self, device_path, property_name, property_value)


async def _wait_for_services_exported(self: BlueZManager, device_path: str) -> None:
    await _wait_for_services_discovery(self, device_path)
    if self._bus is not None:
        await _ask_bluetoothd(self, device_path, "ServicesResolved")


BlueZManager._wait_condition = _wait_condition_told  # type: ignore[method-assign]
BlueZManager._wait_for_services_discovery = _wait_for_services_exported  # type: ignore[method-assign]


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
