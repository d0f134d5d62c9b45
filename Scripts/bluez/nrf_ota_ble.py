"""nrf-ota (PyPI: a Nordic Legacy DFU client over bleak) run unchanged from the harness VM's
central adapter: bleak would scan and connect from the first powered adapter, here otad's own
(hci0). Runs inside the harness VM (guest-e2e.sh step 13) with the python of Scripts/setup.sh's
Nordic venv (.build-nordic).

    python nrf_ota_ble.py CENTRAL_ADAPTER NRF-OTA-ARGUMENTS...
"""

import sys

from bleak.backends.bluezdbus.manager import BlueZManager


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    adapter = sys.argv[1]
    BlueZManager.get_default_adapter = lambda self: f"/org/bluez/{adapter}"  # type: ignore[method-assign]
    sys.argv = ["nrf-ota"] + sys.argv[2:]
    from nrf_ota.__main__ import main as nrf_ota_main

    nrf_ota_main()


if __name__ == "__main__":
    main()
