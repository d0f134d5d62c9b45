#!/usr/bin/env python3
"""One step of an MCUmgr session against otad over UDP, with mcumgr-toolkit (PyPI, Finomnis's
Rust-based client): the process tests (Tests/ProcessTests/MCUmgrToolkitProcessTests) run it
step by step and read the one JSON line it prints last: {"ok": true, ...} or {"ok": false,
"error": "..."}. Scripts/setup.sh (blueota_install_mcumgr_toolkit) installs the pinned client.

  mcumgr_toolkit_steps.py --ip 127.0.0.41 check
  mcumgr_toolkit_steps.py --ip 127.0.0.41 upload Images/firmware-v2.bin [--upgrade-only]
  mcumgr_toolkit_steps.py --ip 127.0.0.41 update Images/firmware-v2.bin [--force-confirm]
  mcumgr_toolkit_steps.py --ip 127.0.0.41 upload Images/firmware-v2.bin --kill-pid PID --kill-at 20000
"""
import argparse
import json
import os
import signal
import socket
import time

import mcumgr_toolkit


def state_of(image):
    return {
        "slot": image.slot,
        "version": image.version,
        "hash": (image.hash or b"").hex(),
        "bootable": image.bootable,
        "pending": image.pending,
        "confirmed": image.confirmed,
        "active": image.active,
        "permanent": image.permanent,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ip", required=True)
    parser.add_argument("--timeout-ms", type=int, default=2000)
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("step", choices=["check", "state", "upload", "update", "test", "confirm", "reset", "erase"])
    parser.add_argument("argument", nargs="?")
    parser.add_argument("--upgrade-only", action="store_true")
    parser.add_argument("--force-confirm", action="store_true")
    parser.add_argument("--slot", type=int)
    parser.add_argument("--kill-pid", type=int, help="SIGKILL this process once --kill-at bytes are sent")
    parser.add_argument("--kill-at", type=int, default=0)
    args = parser.parse_args()

    client = mcumgr_toolkit.MCUmgrClient.udp(args.ip, 1337, timeout_ms=args.timeout_ms)
    client.set_retries(args.retries)
    result = {"ok": True}
    if args.step == "check":
        client.check_connection()
        result["echo"] = client.os_echo("otad?")
        # Echo as a read (operation 0), which Zephyr's group 0 allows beside the write.
        result["echoRead"] = client.raw_command(False, 0, 0, {"d": "read"})
        params = client.os_mcumgr_parameters()
        result["params"] = [params.buf_size, params.buf_count]
        result["info"] = client.os_application_info("a")
        result["bootloader"] = client.os_bootloader_info()
    elif args.step == "state":
        result["images"] = [state_of(s) for s in client.image_get_state()]
    elif args.step == "upload":
        data = open(args.argument, "rb").read()
        seen = []

        def progress(sent, total):
            seen.append(sent)
            if args.kill_pid and sent >= args.kill_at and "killed" not in result:
                os.kill(args.kill_pid, signal.SIGKILL)
                result["killed"] = sent
                # The test starts otad again; the client's next chunk goes to the new process.
                wait_until_answering(args.ip)

        client.image_upload(data, upgrade_only=args.upgrade_only, progress=progress)
        result["progress"] = seen
        if "killed" in result:
            # Where the client went on after the restart: the first offset it reported below the kill.
            result["resumedAt"] = next((s for s in seen[seen.index(result["killed"]) :] if s < result["killed"]), None)
    elif args.step == "update":
        data = open(args.argument, "rb").read()
        client.firmware_update(data, force_confirm=args.force_confirm, upgrade_only=args.upgrade_only)
    elif args.step == "test":
        result["images"] = [state_of(s) for s in client.image_set_state(bytes.fromhex(args.argument), False)]
    elif args.step == "confirm":
        hash_ = bytes.fromhex(args.argument) if args.argument else None
        result["images"] = [state_of(s) for s in client.image_set_state(hash_, True)]
    elif args.step == "reset":
        client.os_system_reset()
    elif args.step == "erase":
        client.image_erase(args.slot)
    print(json.dumps(result))


def wait_until_answering(ip, seconds=30):
    """Echo over a plain UDP socket until otad answers (its restart), at most `seconds`."""
    echo = bytes.fromhex("0200000600000000") + bytes.fromhex("a16164626869")
    deadline = time.monotonic() + seconds
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.settimeout(0.2)
        while time.monotonic() < deadline:
            try:
                probe.sendto(echo, (ip, 1337))
                probe.recvfrom(4096)
                return
            except OSError:
                time.sleep(0.1)
    raise TimeoutError(f"otad on {ip} did not come back within {seconds} s")


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # the client's own error, for the test to read
        print(json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"}))
