"""SMP over Bluetooth through the real BlueZ stack, with smpclient's BLE transport (bleak), as an
MCUmgr client would: upload an MCUboot image to slot 1, mark it for a test, reset, reconnect after
the device restarted, confirm, and read the state. Runs inside the harness VM (guest-e2e.sh step 11)
with the python of Scripts/setup.sh's smpclient venv.

    python smp_ble.py ADDRESS IMAGE CENTRAL_ADAPTER [--one-write]

--one-write keeps every request within one ATT write (smpclient otherwise sizes requests to the
server's buf_size, 2048, and sends each in MTU - 3 pieces). With EATT, BlueZ 5.66's central sends
write commands over several bearers and they arrive out of order; SMP over Bluetooth has no framing
but the header's length, so a request in several pieces arrives scrambled (docs/SMP.md).

Prints one JSON line per stage; the last has the upload's goodput and the final state. Exits 1 when
the image does not end up in slot 0, active and confirmed.
"""

import asyncio
import hashlib
import json
import sys
import time

from bleak_harness import forget, power_cycle, use_adapter
from smpclient import SMPClient
from smpclient.generics import error, success
from smpclient.mcuboot import IMAGE_TLV, ImageInfo
from smpclient.requests.image_management import ImageStatesRead, ImageStatesWrite
from smpclient.requests.os_management import MCUMgrParametersRead, ResetWrite
from smpclient.transport.ble import SMPBLETransport


# smpclient 7.3.0 writes MTU - 3 bytes (514 at MTU 517); bluetoothd 5.66's GATT server drops write
# commands over 510 bytes without a word (an attribute value is at most 512 bytes, and 511 and 512
# are dropped too, seen in the harness VM), so the pieces of a request would go missing.
MAX_WRITE = 510
# The longest one connection attempt may take, its search for the device included.
CONNECT_ATTEMPT_S = 45.0




def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def states(response: object) -> list[dict]:
    return [
        {
            "slot": image.slot,
            "version": image.version,
            "hash": bytes(image.hash).hex() if image.hash else None,
            "active": image.active,
            "confirmed": image.confirmed,
            "pending": image.pending,
            "permanent": image.permanent,
            "bootable": image.bootable,
        }
        for image in response.images  # type: ignore[attr-defined]
    ]


async def connected(address: str, adapter: str, one_write: bool, attempts: int = 10) -> SMPClient:
    """A connected client; the device may still be restarting (it re-registers with bluetoothd).
    Every failed attempt is told on standard error, with what it failed on and when."""
    last: Exception | None = None
    started = time.monotonic()
    for attempt in range(1, attempts + 1):
        if attempt > 1 and attempt % 3 == 1:
            power_cycle(adapter)
        forget(address, adapter)
        client = SMPClient(SMPBLETransport(), address, timeout_s=10.0)
        try:
            # Bounded as a whole: smpclient's timeout covers the connection, not bleak's search before
            # it, and once in CI an attempt after the reset waited 13 minutes without a word.
            await asyncio.wait_for(client.connect(connect_timeout_s=20.0), CONNECT_ATTEMPT_S)
            transport = client._transport  # noqa: SLF001: smpclient has no setting for either
            transport._max_write_without_response_size = min(transport.mtu, MAX_WRITE)  # noqa: SLF001
            if one_write:
                client._transport.initialize(client._transport.mtu)  # noqa: SLF001: see --one-write
            return client
        except Exception as failure:  # noqa: BLE001: any failure to connect is worth a retry
            last = failure
            print(
                f"connect attempt {attempt} failed after {time.monotonic() - started:.1f} s: {failure!r}",
                file=sys.stderr, flush=True,
            )
            await asyncio.sleep(1.0)
    raise SystemExit(f"could not connect to {address} in {attempts} attempts: {last!r}")


async def request(client: SMPClient, what: object, timeout_s: float = 20.0) -> object:
    response = await client.request(what, timeout_s=timeout_s)  # type: ignore[arg-type]
    if error(response) or not success(response):
        raise SystemExit(f"{type(what).__name__} answered {response}")
    return response


async def main(address: str, path: str, adapter: str, one_write: bool) -> int:
    use_adapter(adapter)
    image = open(path, "rb").read()
    info = ImageInfo.load_file(path)
    image_hash = info.get_tlv(IMAGE_TLV.SHA256).value
    version = f"{info.header.ver.major}.{info.header.ver.minor}.{info.header.ver.revision}"

    client = await connected(address, adapter, one_write)
    mtu = client._transport.mtu  # noqa: SLF001: the write size the transport settled on
    params = await request(client, MCUMgrParametersRead())
    say(
        stage="connected", mtu=mtu, buf_size=params.buf_size, buf_count=params.buf_count,  # type: ignore[attr-defined]
        one_write=one_write,
    )

    started = time.monotonic()
    offset = 0
    async for offset in client.upload(image, slot=1, subsequent_timeout_s=20.0):
        pass
    seconds = time.monotonic() - started
    say(stage="uploaded", bytes=len(image), offset=offset, seconds=seconds, goodput=len(image) / seconds)

    tested = await request(client, ImageStatesWrite(hash=image_hash, confirm=False))
    say(stage="test", images=states(tested))
    await request(client, ResetWrite())
    say(stage="reset")
    try:
        await asyncio.wait_for(client.disconnect(), 10.0)
    except Exception:  # noqa: BLE001: the device may have dropped the link first, or never say so
        pass
    await asyncio.sleep(2.0)

    client = await connected(address, adapter, one_write)
    after_reset = await request(client, ImageStatesRead())
    say(stage="after reset", images=states(after_reset))
    confirmed = await request(client, ImageStatesWrite(hash=None, confirm=True))
    final = states(await request(client, ImageStatesRead()))
    say(stage="confirmed", images=states(confirmed))
    await client.disconnect()

    slot0 = next((i for i in final if i["slot"] == 0), {})
    ok = (
        slot0.get("version", "").startswith(version)
        and slot0.get("active") is True
        and slot0.get("confirmed") is True
        and slot0.get("hash") == bytes(image_hash).hex()
    )
    say(
        stage="done", ok=ok, bytes=len(image), seconds=seconds, goodput=len(image) / seconds, mtu=mtu,
        one_write=one_write,
        sha256=hashlib.sha256(image).hexdigest(), slot0=slot0,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] != "--one-write"):
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], len(sys.argv) == 5)))
