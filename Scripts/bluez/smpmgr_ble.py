"""smpmgr (PyPI: Intercreate's MCUmgr command line, over smpclient's BLE transport and bleak) run
unchanged from the harness VM's central adapter, as nrf_ota_ble.py runs nrf-ota: bleak would scan
and connect from the first powered adapter, here otad's own (hci0), and the device (smpmgr's --ble)
is forgotten first, for the reasons bleak_harness.py gives. One thing more: smpclient 7.3.0 writes
MTU - 3 bytes (514 at MTU 517), and bluetoothd 5.66's GATT server drops write commands over 510
bytes without a word (docs/SMP.md [S-BLE-8]; smp_ble.py caps them the same way). Runs inside the
harness VM (guest-e2e.sh step 16) with the python of Scripts/setup.sh's smpmgr venv (.build-smpmgr).

    python smpmgr_ble.py CENTRAL_ADAPTER SMPMGR-ARGUMENTS...

Needs one ATT bearer (bluetoothd's [GATT] Channels = 1): smpmgr sends a request in MTU-sized
pieces, which EATT's several bearers deliver out of order (docs/SMP.md).
"""

import sys

from bleak_harness import forget, use_adapter

MAX_WRITE = 510


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    adapter, arguments = sys.argv[1], sys.argv[2:]
    use_adapter(adapter)
    if "--ble" in arguments[:-1]:
        forget(arguments[arguments.index("--ble") + 1], adapter)

    from smpclient.transport.ble import SMPBLETransport

    connect = SMPBLETransport.connect

    async def connect_capped(self: SMPBLETransport, address: str, timeout_s: float) -> None:
        await connect(self, address, timeout_s)
        self._max_write_without_response_size = min(self._max_write_without_response_size, MAX_WRITE)  # noqa: SLF001

    SMPBLETransport.connect = connect_capped  # type: ignore[method-assign]

    from smpmgr.main import app

    app(args=arguments, prog_name="smpmgr")


if __name__ == "__main__":
    main()
