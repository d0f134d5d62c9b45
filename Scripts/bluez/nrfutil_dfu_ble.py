"""Nordic's own Secure DFU client, nrfutil 6.1.7's (nordicsemi.dfu: `Dfu` reads the package,
`DfuTransportBle` sends it: SET PRN, SELECT, CREATE, the objects in packets, the CRC checks,
EXECUTE, and its recovery when a device already holds part of the update), run unchanged over
bleak on the harness VM's central adapter instead of over a Nordic connectivity dongle, which is
the only radio nrfutil's `dfu ble` knows. Runs inside the harness VM (guest-e2e.sh step 14) with
the python of Scripts/setup.sh's nrfutil venv (.build-nrfutil).

    python nrfutil_dfu_ble.py CENTRAL_ADAPTER ADDRESS PACKAGE.zip [--prn N] [--att-mtu M]

What stands in for the dongle is the radio only (`BleakRadio`: connect, write the control point
with response and the packet characteristic without, hand the control point's notifications to
nrfutil's queue). nrfutil's transport module imports the dongle driver's names when it loads; the
driver's native library exists only for Python 3.10 and older, so those names are inert classes
here, used by nothing that runs. nrfutil's log goes to standard error (its debug lines name each
SELECT's offset and CRC). Exits 0 when nrfutil's Dfu sent the whole package, 1 with its error.
"""

import argparse
import asyncio
import logging
import queue
import sys
import threading
import time
import types

from bleak import BleakClient, BleakScanner
from bleak_harness import forget, use_adapter

CONTROL_POINT = "8ec90001-f315-4f60-9fb8-838830daea50"
PACKET = "8ec90002-f315-4f60-9fb8-838830daea50"
# bluetoothd 5.66's GATT server drops writes over 510 bytes (docs/BLUEZ.md); nrfutil's default ATT
# MTU, 247, stays well below.
MAX_WRITE = 510


def stand_in_for_the_dongle_driver() -> None:
    """Every name the transport module takes from the driver is an inert class, and so is every
    attribute of one (a decorator such as `wrapt.synchronized(BLEDriver.api_lock)` included): the
    module loads, and nothing of the driver runs."""

    class InertType(type):
        def __getattr__(cls, attribute: str) -> type:
            return InertType(attribute, (Inert,), {})

    class Inert(metaclass=InertType):
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

    for name in ("pc_ble_driver_py.ble_driver", "pc_ble_driver_py.ble_adapter", "pc_ble_driver_py.config"):
        module = types.ModuleType(name)
        module.__getattr__ = lambda attribute: InertType(attribute, (Inert,), {})  # type: ignore[method-assign]
        sys.modules[name] = module


class BleakRadio:
    """What nrfutil's transport asks of its DFUAdapter, over bleak: `notifications_q`,
    `packet_size`, `write_control_point`, `write_data_point`, `close`, `bonded`, `keyset`."""

    def __init__(self, adapter: str, address: str, att_mtu: int, attempts: int = 6) -> None:
        self.notifications_q: queue.Queue = queue.Queue()
        self.bonded = False
        self.keyset = None
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.client = self.run(self.connect(adapter, address, attempts), timeout=attempts * 40.0)
        self.packet_size = min(att_mtu, self.client.mtu_size, MAX_WRITE + 3) - 3
        logging.getLogger("nrfutil_dfu_ble").info(
            "connected to %s, ATT MTU %d, packets of %d bytes", address, self.client.mtu_size, self.packet_size)

    def run(self, coroutine: object, timeout: float = 30.0) -> object:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=timeout)  # type: ignore[arg-type]

    async def connect(self, adapter: str, address: str, attempts: int) -> BleakClient:
        """The device may still be restarting (a drop, a fault): a few attempts, each told."""
        last: Exception | None = None
        for attempt in range(1, attempts + 1):
            forget(address, adapter)
            try:
                device = await BleakScanner.find_device_by_address(address, timeout=15.0)
                if device is None:
                    raise TimeoutError(f"{address} not found in 15 s")
                # A dongle's driver would leave nrfutil waiting 20 s for an answer that cannot
                # come; the radio tells it at once that the link is gone (its error: No Response).
                # Only the link nrfutil was given: a failed attempt's client says it disconnected
                # later, and its [0] would answer nrfutil's next request on the link that holds.
                given = threading.Event()
                client = BleakClient(device, disconnected_callback=lambda _, given=given: given.is_set()
                                     and self.notifications_q.put([0]))
                await client.connect(timeout=20.0)
                # bleak reads BlueZ's ATT MTU only when asked (else it reports 23).
                await client._backend._acquire_mtu()  # noqa: SLF001: bleak's BlueZ backend has no public call
                await client.start_notify(CONTROL_POINT, lambda _, data: self.notifications_q.put(list(data)))
                given.set()
                return client
            except Exception as failure:  # noqa: BLE001: any failure to connect is worth a retry
                last = failure
                print(f"connect attempt {attempt} failed: {failure!r}", file=sys.stderr, flush=True)
                await asyncio.sleep(1.0)
        raise ConnectionError(f"could not connect to {address} in {attempts} attempts: {last!r}")

    def write_control_point(self, data: list[int]) -> None:
        self.run(self.client.write_gatt_char(CONTROL_POINT, bytes(data), response=True))

    def write_data_point(self, data: list[int]) -> None:
        self.run(self.client.write_gatt_char(PACKET, bytes(data), response=False))

    def close(self) -> None:
        try:
            self.run(self.client.disconnect(), timeout=10.0)
        except Exception as failure:  # noqa: BLE001: the device may have restarted already
            print(f"disconnect: {failure!r}", file=sys.stderr, flush=True)
        self.loop.call_soon_threadsafe(self.loop.stop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("adapter")
    parser.add_argument("address")
    parser.add_argument("package")
    parser.add_argument("--prn", type=int, default=8, help="a checksum notification every N packets")
    parser.add_argument("--att-mtu", type=int, default=247, help="nrfutil's own default")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s: %(message)s")
    for noisy in ("bleak", "asyncio", "dbus_fast"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    use_adapter(arguments.adapter)
    stand_in_for_the_dongle_driver()
    from nordicsemi.dfu.dfu import Dfu
    from nordicsemi.dfu.dfu_transport import DfuTransport
    from nordicsemi.dfu.dfu_transport_ble import DfuTransportBle

    class BleakTransport(DfuTransportBle):
        """nrfutil's BLE transport with `open` connecting through bleak; the rest is nrfutil's."""

        def open(self) -> None:
            DfuTransport.open(self)
            self.dfu_adapter = BleakRadio(arguments.adapter, arguments.address, self.att_mtu)
            self._DfuTransportBle__set_prn()  # nrfutil's own open ends with this

    transport = BleakTransport(
        serial_port=None, att_mtu=arguments.att_mtu, target_device_addr=arguments.address, prn=arguments.prn)
    started = time.monotonic()
    try:
        Dfu(zip_file_path=arguments.package, dfu_transport=transport, connect_delay=0).dfu_send_images()
    except Exception as failure:  # noqa: BLE001: nrfutil's errors are plain exceptions
        print(f"nrfutil: DFU failed after {time.monotonic() - started:.1f} s: {failure}", flush=True)
        if transport.dfu_adapter is not None:
            transport.dfu_adapter.close()
        sys.exit(1)
    print(f"nrfutil: DFU complete in {time.monotonic() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
