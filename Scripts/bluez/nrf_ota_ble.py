"""nrf-ota (PyPI: a Nordic Legacy DFU client over bleak) run unchanged from the harness VM's
central adapter: bleak would scan and connect from the first powered adapter, here otad's own
(hci0). Runs inside the harness VM (guest-e2e.sh step 13) with the python of Scripts/setup.sh's
Nordic venv (.build-nordic), with what bleak_harness.py gives every bleak client here, and the
device (--device) forgotten first: the central keeps the GATT database of the otads that answered
at that address in earlier steps, and bluetoothd 5.66, finding it changed, signalled
ServicesResolved before it had exported the new services (the VM, 2026-11-28), so nrf-ota found
no DFU service. A phone meeting a device for the first time starts from nothing too.

    python nrf_ota_ble.py CENTRAL_ADAPTER NRF-OTA-ARGUMENTS...
"""

import sys

from bleak_harness import forget, use_adapter


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    adapter, arguments = sys.argv[1], sys.argv[2:]
    use_adapter(adapter)
    if "--device" in arguments[:-1]:
        forget(arguments[arguments.index("--device") + 1], adapter)
    sys.argv = ["nrf-ota"] + arguments
    from nrf_ota.__main__ import main as nrf_ota_main

    nrf_ota_main()


if __name__ == "__main__":
    main()
