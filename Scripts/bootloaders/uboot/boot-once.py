#!/usr/bin/env python3
"""One power-on of the U-Boot test's board: qemu-system-aarch64 (virt) runs Debian's qemu_arm64
U-Boot from the first flash bank, with its environment in the second (DIR/flash1.img, the same file
the host's fw_setenv/fw_printenv reach through DIR/fw_env.config); distro boot finds boot.scr on the
virtio disk (DIR/disk.img), the script picks a slot, counts, saveenvs and boots that slot's kernel.

  boot-once.py DIR            boot until a slot's kernel reports that it started
  boot-once.py DIR --cut MS   power cut: kill -9 qemu MS milliseconds after U-Boot prints "Saving
                              Environment" (nothing else; the next boot shows what survived). The
                              log says where saveenv was: kernel=cut-erasing, cut-writing or
                              cut-after (the save had ended: no cut inside it)

Before each boot, each slot's kernel (partition 2 for A, 3 for B) is made from what otad's slot file
holds: an MCUboot image gets a kernel that prints "OTAD-SLOT-STARTED <slot>" and powers off, an
image carrying the marker OTAD-TEST-KERNEL-HANGS a kernel that prints "OTAD-SLOT-HANGS <slot>" and
spins, and anything else (an empty or erased slot) no kernel at all.

qemu's virt machine has no watchdog that U-Boot arms, so this harness is the watchdog: a kernel that
stops answering (or a U-Boot that stops anywhere) is killed WATCHDOG seconds after it went quiet and
the board is powered on again, up to MAX_BOOTS boots. Once a kernel reports, the kernel command line
it was given (bootargs, which the boot script saved, read back with the real fw_printenv) goes to
DIR/cmdline, which otad reads as /proc/cmdline ([boot.uboot] cmdline).

While the board is powered on, DIR/powered-on says so (`boot=<n> pid=<this script's pid>
since=<unix time>`), for a watcher such as ota-lab's page ("the bootloader is choosing"); it is
removed when the boot ends (a killed harness leaves it, with a pid that no longer runs).

Each boot appends one line to DIR/boots.log: `boot <n> chose=<slot|-> kernel=<started|hung|none|
cut-...|stuck> seconds=<s> save_ms=<saveenv's duration|->`, and its console goes to
DIR/console/<n>.txt.
"""
import os
import re
import select
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repository
import mkpayload  # noqa: E402

MCUBOOT_MAGIC = bytes.fromhex("3db8f396")
HANG_MARKER = b"OTAD-TEST-KERNEL-HANGS"
WATCHDOG = float(os.environ.get("UBOOT_WATCHDOG", "1.5"))  # seconds without console output
MAX_BOOTS = int(os.environ.get("UBOOT_MAX_BOOTS", "8"))
STUCK = 30.0  # a boot that reports nothing for this long is killed as well


def kernel_mode(slot_file):
    try:
        with open(slot_file, "rb") as f:
            head = f.read(4)
            if head != MCUBOOT_MAGIC:
                return "none"
            f.seek(0)
            return "hang" if HANG_MARKER in f.read(4 << 20) else "run"
    except FileNotFoundError:
        return "none"


def install_kernels(d):
    for slot, part in (("A", 2), ("B", 3)):
        mode = kernel_mode(os.path.join(d, "a.img" if slot == "A" else "b.img"))
        marker = os.path.join(d, "kernel-%s.mode" % slot)
        if os.path.exists(marker) and open(marker).read() == mode:
            continue
        target = "-i", "%s@@%dM" % (os.path.join(d, "disk.img"), part)
        if mode == "none":
            subprocess.run(["mdel", *target, "::/boot/Image"], stderr=subprocess.DEVNULL)
        else:
            image = os.path.join(d, "kernel-%s.bin" % slot)
            with open(image, "wb") as out:
                out.write(mkpayload.payload(slot, mode))
            subprocess.run(["mcopy", "-o", *target, image, "::/boot/Image"], check=True)
        with open(marker, "w") as out:
            out.write(mode)


def qemu_command(d):
    qemu = os.environ.get("UBOOT_QEMU", "qemu-system-aarch64")
    return [
        qemu, "-M", "virt", "-cpu", "cortex-a57", "-m", "256", "-display", "none", "-audio", "none",
        "-serial", "stdio", "-monitor", "none", "-nic", "none",
        "-drive", "if=pflash,format=raw,file=%s/flash0.img" % d,
        "-drive", "if=pflash,format=raw,file=%s/flash1.img" % d,
        "-drive", "if=virtio,format=raw,file=%s/disk.img" % d,
    ]


def save_phase(console):
    """Where U-Boot's saveenv was, from its console: before the erase finished, writing, or after."""
    text = console[console.rfind(b"Saving Environment"):]
    if b"Writing to Flash... done" in text or b"\nOK" in text:
        return "after"
    if b"Writing to Flash" in text:
        return "writing"
    return "erasing"


def next_boot_number(d):
    path = os.path.join(d, "boots.log")
    if not os.path.exists(path):
        return 1
    with open(path) as f:
        return sum(1 for _ in f) + 1


def boot(d, cut_ms=None):
    """One power-on. Returns (chose, kernel, seconds)."""
    number = next_boot_number(d)
    os.makedirs(os.path.join(d, "console"), exist_ok=True)
    console_path = os.path.join(d, "console", "%d.txt" % number)
    started = time.monotonic()
    powered_on = os.path.join(d, "powered-on")
    with open(powered_on + ".tmp", "w") as out:
        out.write("boot=%d pid=%d since=%.3f\n" % (number, os.getpid(), time.time()))
    os.replace(powered_on + ".tmp", powered_on)
    try:
        return power_on(d, number, console_path, started, cut_ms)
    finally:
        os.unlink(powered_on)


def power_on(d, number, console_path, started, cut_ms):
    process = subprocess.Popen(qemu_command(d), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    console = b""
    last_output = started
    kernel = None
    cut_at = None
    saving_at = saved_at = None
    while True:
        now = time.monotonic()
        if cut_at is not None and now >= cut_at:
            process.send_signal(signal.SIGKILL)
            kernel = "cut-" + save_phase(console)
            break
        readable, _, _ = select.select([process.stdout], [], [], 0.005 if cut_at else 0.1)
        if readable:
            data = os.read(process.stdout.fileno(), 65536)
            if not data:
                break  # qemu exited (the kernel powered off)
            console += data
            last_output = now
            if saving_at is None and b"Saving Environment" in console:
                saving_at = time.monotonic()
                if cut_ms is not None:
                    cut_at = saving_at + cut_ms / 1000.0
            if saving_at is not None and saved_at is None and save_phase(console) == "after":
                saved_at = time.monotonic()
            if cut_ms is None and b"OTAD-SLOT-STARTED" in console:
                kernel = "started"
        elif cut_at is None:
            quiet = now - last_output
            hung = b"OTAD-SLOT-HANGS" in console
            if (hung and quiet >= WATCHDOG) or now - started >= STUCK:
                process.send_signal(signal.SIGKILL)  # the watchdog resets the board
                kernel = "hung" if hung else "stuck"
                break
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    seconds = time.monotonic() - started
    with open(console_path, "wb") as out:
        out.write(console)
    text = console.decode(errors="replace")
    chosen = re.findall(r"Booting slot ([AB])", text)
    chose = chosen[-1] if chosen else "-"
    if kernel is None:
        if "OTAD-SLOT-STARTED" in text:
            kernel = "started"
        elif "did not boot: resetting" in text or "No slot has boots left" in text:
            kernel = "none"
        else:
            kernel = "stuck"
    if kernel == "started":
        ran = re.findall(r"OTAD-SLOT-STARTED ([AB])", text)[-1]
        if ran != chose:
            kernel = "started-%s" % ran
    save_ms = "%.0f" % ((saved_at - saving_at) * 1000) if saved_at and saving_at else "-"
    with open(os.path.join(d, "boots.log"), "a") as log:
        log.write("boot %d chose=%s kernel=%s seconds=%.2f save_ms=%s\n"
                  % (number, chose, kernel, seconds, save_ms))
    print("boot-once: boot %d: U-Boot chose %s, kernel %s, %.2f s (saveenv %s ms)"
          % (number, chose, kernel, seconds, save_ms), file=sys.stderr, flush=True)
    return chose, kernel, seconds


def write_cmdline(d, slot):
    config = os.path.join(d, "fw_env.config")
    result = subprocess.run(["fw_printenv", "-c", config, "-n", "bootargs"], capture_output=True,
                            text=True)
    if result.returncode != 0:
        sys.exit("boot-once: fw_printenv -n bootargs failed: %s" % result.stderr.strip())
    line = result.stdout.strip()
    named = re.findall(r"rauc\.slot=([AB])", line)
    if not named or named[-1] != slot:
        sys.exit("boot-once: kernel %s started but the saved bootargs say %r" % (slot, line))
    tmp = os.path.join(d, "cmdline.tmp")
    with open(tmp, "w") as out:
        out.write(line + "\n")
    os.replace(tmp, os.path.join(d, "cmdline"))


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: boot-once.py DIR [--cut MS]")
    d = os.path.abspath(args[0])
    cut_ms = None
    if args[1:2] == ["--cut"]:
        cut_ms = float(args[2])
    install_kernels(d)
    if cut_ms is not None:
        boot(d, cut_ms)
        return
    for _ in range(MAX_BOOTS):
        chose, kernel, _ = boot(d)
        if kernel == "started":
            write_cmdline(d, chose)
            return
        if kernel.startswith("started-"):
            sys.exit("boot-once: U-Boot said slot %s but kernel %s started" % (chose, kernel[8:]))
    sys.exit("boot-once: no slot started in %d boots" % MAX_BOOTS)


if __name__ == "__main__":
    main()
