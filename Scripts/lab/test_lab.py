#!/usr/bin/env python3
"""The lab page in a real browser: headless Chromium (Debian's chromium and chromium-driver) driven
by selenium against ota-lab. The page loads with no network (every host but the loopback address
resolves to nothing, and every resource it loaded is checked to come from ota-lab), each button
works, a push fills slot B window by window, a dropped link and a power cut during a transfer show
the resume, v3 ends rolled back with its reason, a flipped byte fails VALIDATE, an unsigned image is
refused, an encrypted image travels as ciphertext and lands as plaintext; the A/B cycle's diagram lights
the slot's state (empty, receiving, bad after a rollback), the timeline marks the resume, the exercises
open in order, Reset brings the device back to 1.0.0 and a delta sends a fraction of the image; the
event list's numbers fit and bytes on air are never lost; an update lock holds v2 validated, not
activated (the page says why), released the device activates it itself, and with consent required
a declined v3 is dropped. Then class mode: three students in three
browsers, each with a cookie and a device of their own, a wrong code and a full class refused. Last,
`--bootloader uboot`: Debian's real U-Boot under qemu decides the boots (the U-Boot harness's board);
v2 pushed, the boot pointer's panel shows "the bootloader is choosing", the moment otad's variables
and U-Boot's last choice disagree, BOOT_ORDER changing, U-Boot choosing B, v2 confirmed; then a reset.
When the harness's packages cannot be installed that part prints a SKIPPED line and counts nothing.
Screenshots go to a new temporary directory (its path is printed), so a test run changes no tracked
file; `--shots docs/lab` regenerates the ones docs/LAB.md shows.

  python3 Scripts/lab/test_lab.py [--bin .build/debug] [--shots DIR]

Prints 'N passed, M failed' last; exits non-zero on any failure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
results = []


def check(name, ok, detail=""):
    results.append((name, bool(ok)))
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)), flush=True)
    return ok


class Lab:
    """ota-lab as a child process; its state endpoint, read directly for the waits."""

    def __init__(self, binary, *extra):
        self.process = subprocess.Popen(
            [binary, "--images", os.path.join(ROOT, "Images"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        line = self.process.stdout.readline()
        if "http://127.0.0.1:" not in line:
            raise RuntimeError("ota-lab did not print its address: " + line + self.process.stdout.read())
        self.address = line.split()[1]
        self.line = line

    def state(self):
        with urllib.request.urlopen(self.address + "state", timeout=5) as answer:
            return json.load(answer)

    def wait(self, what, test, timeout=60):
        deadline = time.time() + timeout
        state = None
        while time.time() < deadline:
            state = self.state()
            if test(state):
                return state
            time.sleep(0.1)
        raise TimeoutError(what + ": last state " + json.dumps(state)[:2000])

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def browser(size="1500,1500"):
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("BLUEOTA_CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=" + size,
                     # No network: every name but the loopback address resolves to nothing, no proxy.
                     "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--no-proxy-server",
                     "--disable-background-networking", "--disable-component-update"]:
        options.add_argument(argument)
    service = Service(executable_path=os.environ.get("BLUEOTA_CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def lit(driver):
    """The diagram's lit stage (its element's id), read through the page."""
    return driver.execute_script(
        "const e = document.querySelector('.cycle g[data-lit=\"1\"]'); return e ? e.id : ''")


def wait_page(driver, what, script, timeout=30):
    """Until the page's script returns something true; that value."""
    deadline = time.time() + timeout
    value = None
    while time.time() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(what + ": " + repr(value))


def exercise(driver, number):
    return driver.execute_script(
        "const e = document.getElementById('exercise-' + arguments[0]);"
        "return e ? [e.dataset.state, e.innerText, e.classList.contains('current')] : ['', '', false]", number)


def push(state):
    return state.get("push") or {}


def committed(state):
    return (state.get("slot") or {}).get("committed", 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "debug"))
    parser.add_argument("--shots", default=None, help="default: a new temporary directory")
    args = parser.parse_args()
    if args.shots is None:
        args.shots = tempfile.mkdtemp(prefix="blueota-lab-shots-")
    os.makedirs(args.shots, exist_ok=True)
    print(f"screenshots: {args.shots}")
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium's manager fetches nothing

    lab = Lab(os.path.join(args.bin, "ota-lab"))
    driver = browser()
    shot = lambda name: driver.save_screenshot(os.path.join(args.shots, name + ".png"))
    click = lambda action: driver.find_element(By.ID, action).click()
    # Read through the page's script: the page redraws its panels three times a second, so an
    # element found now may be gone a moment later (selenium's stale elements).
    text = lambda element: driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? e.innerText : ''", element)
    data = lambda element, key: driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? (e.dataset[arguments[1]] || '') : ''",
        element, key)
    try:
        driver.get(lab.address)
        deadline = time.time() + 20
        while time.time() < deadline and "Slot A" not in text("slots"):
            time.sleep(0.1)
        check("the page loads and draws both slots", "Slot A" in text("slots") and "Slot B" in text("slots"),
              text("slots"))
        resources = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name).concat([location.href])")
        check("everything the page loaded came from ota-lab (no network)",
              all(url.startswith(lab.address) for url in resources), resources)
        slot_a = text("slot-A")
        check("slot A runs 1.0.0, confirmed", "running" in slot_a and "1.0.0" in slot_a, slot_a)
        shot("01-start")
        check("the A/B cycle's diagram lights slot B, empty, at start",
              lit(driver) == "stage-empty" and text("cycle-slot") == "B", [lit(driver), text("cycle-slot")])
        first, third = exercise(driver, 1), exercise(driver, 3)
        check("exercise 1 is ready and the current one; 3 is locked, saying to do exercise 2 first",
              first[0] == "ready" and first[2] and third[0] == "locked" and "exercise 2" in third[1], [first, third])
        check("the bootloader's own variables: both links at slot A, the pointer they make primary A",
              text("boot-pointer") == "primary A" and "current.primary → slot-a.img" in text("boot"), text("boot"))

        # Exercise 6 first, as the demo does: an unsigned image is refused at VALIDATE. (After v2 the same
        # image, 1.2.3, would be a downgrade, refused at PREPARE already.)
        click("push-unsigned")
        state = lab.wait("unsigned refused", lambda s: push(s).get("label") == "push unsigned"
                         and push(s).get("result") is not None, 60)
        check("an unsigned image is refused: signature invalid (exit 11)",
              push(state)["result"]["exitCode"] == 11 and "signature" in push(state)["result"]["error"], push(state))
        time.sleep(0.6)
        check("the page shows the refusal", "signature" in text("push-error"), text("push-error"))
        check("the refusal completes exercise 1", exercise(driver, 1)[0] == "done", exercise(driver, 1))
        check("nothing changed: slot A still runs 1.0.0 confirmed", state["status"]["confirmed"] == "A", state["boot"])
        shot("02-unsigned-refused")

        # Exercise 2's lossy link: the loss select and its button.
        driver.execute_script("document.getElementById('loss').value = '0.1'")
        click("set-loss")
        lab.wait("loss 10%", lambda s: abs(s["link"]["loss"] - 0.1) < 1e-9, 10)
        time.sleep(0.5)
        check("change the loss: the page shows 10%", text("loss-now") == "10%", text("loss-now"))

        # Exercise 1 and 3: push v2, watch slot B fill window by window, drop the link mid-way.
        click("push-v2")
        # Until ota-lab has started v2's otactl, the state and the page still show the unsigned push.
        lab.wait("v2 started", lambda s: push(s).get("label") == "push v2", 30)
        time.sleep(0.7)  # the page polls every 0.3 s: let it draw v2 before reading it
        seen = set()
        deadline = time.time() + 60
        dropped = False
        while time.time() < deadline:
            cells = data("cells", "cells")
            value = data("committed", "committed") or "0"
            seen.add((int(value), cells.count("c")))
            if not dropped and int(value) >= 16384:
                receiving = lit(driver)
                shot("03-transfer")
                click("drop-link")
                dropped = True
            if (push(lab.state()).get("result") or {}).get("ok") is not None:
                break
            time.sleep(0.05)
        check("drop the link: it was dropped mid-transfer", dropped, seen)
        check("during the transfer the diagram lights receiving", dropped and receiving == "stage-receiving",
              receiving if dropped else "no transfer seen")
        state = lab.wait("v2 confirmed", lambda s: push(s).get("result") and s["status"]["confirmed"] == "B", 90)
        # The image is a few windows (41686 bytes): the lab records each committed offset, and the page,
        # polled every 0.3 s, can skip the last ones (seen once: [12288, 24576] only), so it must
        # show two steps, the lab's record three.
        shown = sorted({value for value, _ in seen if value > 0})
        recorded = sorted({int(sample[1]) for sample in push(state)["samples"] if sample[1] > 0})
        check("a push fills slot B window by window (the committed offset moved in steps)",
              len(recorded) >= 3 and len(shown) >= 2, {"recorded": recorded, "shown": shown})
        check("after the drop the push resumed from the committed offset", len(push(state)["resumes"]) >= 1,
              push(state))
        check("v2 succeeded and runs confirmed in slot B",
              push(state)["result"]["ok"] and state["boot"]["running"] == "B", push(state))
        time.sleep(0.6)
        check("the page says the push succeeded", text("result") == "succeeded", text("result"))
        drawn = driver.execute_script(
            "return [...document.querySelectorAll('#timeline [data-phase]')].map(e => e.dataset.phase)")
        check("the page shows the phases on a timeline",
              all(p in drawn for p in ["preparing", "transferring", "validating", "activating"]), drawn)
        resumes_drawn = driver.execute_script("return document.querySelectorAll('#timeline [data-resume]').length")
        check("the timeline marks the resume, and the transfer's phase says where from",
              resumes_drawn >= 1 and "resumed from" in text("phase-transfer"), [resumes_drawn, text("phase-transfer")])
        air, size = int(data("air", "bytes") or 0), int(data("air", "size") or 0)
        check("bytes on air after the push are what it sent (at least the image, sent whole), not 0",
              size > 0 and air >= size, [air, size, text("air")])
        check("after v2 confirmed the bootloader's links point at slot B: primary B",
              text("boot-pointer") == "primary B" and "current → slot-b.img" in text("boot"), text("boot"))
        check("v2 confirmed completes exercise 2 and opens 3 (the downgrade)",
              exercise(driver, 2)[0] == "done" and exercise(driver, 3)[0] == "ready", [exercise(driver, 2), exercise(driver, 3)])
        # The event list counts down from its length (up to 40): its numbers must fit in its margin.
        fits = driver.execute_script("""
            const ol = document.getElementById('events'), n = ol.children.length;
            const g = document.createElement('canvas').getContext('2d'); g.font = getComputedStyle(ol).font;
            const widest = g.measureText('40. ').width;
            return [n, parseFloat(getComputedStyle(ol).paddingLeft), widest];""")
        check("the event list's numbers are not cut off at the left", fits[0] >= 10 and fits[1] >= fits[2], fits)
        shot("04-v2-confirmed")

        # Exercise 3: the same unsigned image, now older than what runs, refused at PREPARE.
        click("push-unsigned")
        state = lab.wait("downgrade refused", lambda s: push(s).get("label") == "push unsigned"
                         and push(s).get("result") is not None, 60)
        check("exercise 3: the unsigned 1.2.3 under 2.0.0 is a downgrade, refused at PREPARE (exit 12)",
              push(state)["result"]["exitCode"] == 12 and "downgrade" in push(state)["result"]["error"], push(state))
        wait_page(driver, "exercise 3 done", "return document.getElementById('exercise-3').dataset.state === 'done'")
        check("the refusal completes exercise 3 and the next ready one is 4",
              exercise(driver, 3)[0] == "done" and exercise(driver, 4)[2], [exercise(driver, 3), exercise(driver, 4)])

        # Exercise 4: power cut during the transfer of v3; exercise 5: v3 fails its self-test.
        driver.execute_script("document.getElementById('loss').value = '0'")
        click("set-loss")
        lab.wait("loss 0", lambda s: s["link"]["loss"] == 0, 10)
        cuts_before = lab.state()["powerCuts"]
        click("push-v3")
        lab.wait("v3 transfer under way", lambda s: push(s).get("label") == "push v3" and committed(s) >= 8192, 60)
        click("power-cut")
        state = lab.wait("resumed after the power cut",
                         lambda s: len(push(s).get("resumes", [])) >= 1 or push(s).get("result"), 60)
        check("power cut: the device came back and the push resumed from the committed offset",
              state["powerCuts"] > cuts_before and len(push(state)["resumes"]) >= 1, push(state))
        time.sleep(0.6)
        check("the page shows the resume", data("resumes", "count") not in ("", "0"), text("resumes"))
        shot("05-power-cut-resumed")
        state = lab.wait("v3 rolled back", lambda s: push(s).get("result") is not None
                         and s["boot"]["outcome"] == "rolled back", 120)
        check("v3 ends rolled back (exit 7)", push(state)["result"]["exitCode"] == 7, push(state))
        time.sleep(0.6)
        check("the page shows the rollback and its reason",
              text("outcome") == "rolled back" and "health check" in text("reason"), text("boot"))
        check("slot B runs 2.0.0 again", "2.0.0" in text("slot-B") and "running" in text("slot-B"), text("slot-B"))
        check("after the rollback the diagram lights slot A bad (rolled back)",
              lit(driver) == "stage-bad" and text("cycle-slot") == "A", [lit(driver), text("cycle-slot")])
        shot("06-v3-rolled-back")

        # A flipped byte in the inactive slot, mid-transfer: VALIDATE finds it.
        click("push-v3")
        lab.wait("v3 again under way", lambda s: push(s).get("result") is None and committed(s) >= 16384, 60)
        click("flip-byte")
        state = lab.wait("flipped byte found", lambda s: push(s).get("result") is not None, 90)
        check("flip a byte: VALIDATE refuses the image",
              not push(state)["result"]["ok"] and "valid" in (push(state)["result"].get("error") or ""), push(state))
        time.sleep(0.6)
        check("the page names the flip and the refusal",
              "flipped byte" in text("actions") and text("push-error") != "", text("actions"))
        shot("07-flipped-byte")

        # A fault through otad's fault control (docs/APP-TESTING.md): PREPARE refused with "storage
        # error" every time, as a full device would; otactl names the storage; cleared, it is gone.
        field = driver.find_element(By.ID, "fault")
        field.clear()
        field.send_keys("refuse at=prepare status=storage-error times=always")
        click("set-fault")
        lab.wait("the fault set", lambda s: any("added fault 1" in a for a in s.get("actions", [])), 20)
        time.sleep(0.6)
        check("set a fault: otad's fault control took it",
              "added fault 1: refuse status=storage-error at=prepare times=always" in text("actions"), text("actions"))
        click("push-v3")
        state = lab.wait("v3 refused by the fault",
                         lambda s: (push(s).get("result") or {}).get("exitCode") == 13, 90)
        check("the fault refuses PREPARE: otactl blames the storage (exit 13)",
              "storage" in (push(state)["result"].get("error") or ""), push(state))
        click("clear-faults")
        lab.wait("the faults cleared", lambda s: any("cleared 1 fault" in a for a in s.get("actions", [])), 20)
        time.sleep(0.6)
        check("clear the faults: none left", "cleared 1 fault" in text("actions"), text("actions"))
        shot("08-fault")

        # An encrypted image: ciphertext in the file and on the air, plaintext in the slot.
        click("push-encrypted")
        lab.wait("encrypted started", lambda s: push(s).get("label") == "push encrypted", 30)
        state = lab.wait("encrypted confirmed", lambda s: push(s).get("label") == "push encrypted"
                         and push(s).get("result") is not None, 120)
        check("push v2.1 encrypted: it runs confirmed (exit 0)", push(state)["result"]["exitCode"] == 0, push(state))
        state = lab.wait("the encryption shown", lambda s: s.get("encryption"), 10)
        shown = state.get("encryption") or {}
        check("the slot holds the plaintext (the app's script), the air carried ciphertext",
              shown.get("inSlotText", "").startswith("#!/bin/sh") and shown.get("onAir") != shown.get("inSlot"), shown)
        time.sleep(0.6)
        check("the page shows both", text("on-air") == shown.get("onAir") and text("in-slot") == shown.get("inSlot"),
              text("encryption"))
        shot("09-encrypted")

        # Reset: the device made again, without restarting ota-lab; then the delta exercise.
        check("exercise 9 (the delta) is locked while 2.1.0 runs, saying to reset",
              exercise(driver, 9)[0] == "locked" and "Reset" in exercise(driver, 9)[1], exercise(driver, 9))
        click("reset")
        state = lab.wait("the device reset", lambda s: s.get("push") is None and s.get("status")
                         and s["status"]["running"] == "A"
                         and [x["version"] for x in s["status"]["slots"]] == ["1.0.0+0", None], 30)
        check("reset: 1.0.0 runs in slot A, slot B is empty, no push, a fresh boot state",
              state["status"]["lastOutcome"]["result"] == "none" and state["status"].get("trial") is None, state["status"])
        wait_page(driver, "the page drew the reset", "return document.getElementById('exercise-9').dataset.state === 'ready'")
        check("after the reset the diagram lights slot B empty again", lit(driver) == "stage-empty", lit(driver))
        click("push-delta")
        state = lab.wait("the delta pushed", lambda s: push(s).get("label") == "push v2 delta"
                         and push(s).get("result") is not None, 60)
        p = push(state)
        check("push v2 as a delta: it succeeds sending a fraction of the image",
              p["result"]["ok"] and p.get("transferMode") == "delta" and 0 < p["bytesOnAir"] < p["size"] // 4, p)
        wait_page(driver, "the page drew the delta", "return document.getElementById('air') && document.getElementById('air').dataset.mode === 'delta'")
        check("the page shows bytes on air against the image's size, and the delta",
              "delta" in text("air") and "of a 40.7 KiB image" in text("air"), text("air"))
        check("the delta completes exercise 9", exercise(driver, 9)[0] == "done", exercise(driver, 9))
        shot("10-delta")
        device_has_a_say(lab, driver, shot, click, text)

    except Exception as error:  # a wait that timed out, a missing element: one failure, with why
        check("the lab session ran to its end", False, repr(error))
        try:
            shot("failure")
        except Exception:
            pass
    finally:
        driver.quit()
        lab.stop()
    class_mode(args)
    uboot_mode(args)
    failed = sum(1 for _, ok in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def say(state):
    return state.get("say") or {}


def kept(state):
    return say(state).get("kept") or {}


def journal_state(state):
    """The transfer journal's state, or "missing"/"damaged" (otad status writes those as a word)."""
    transfer = state["status"]["transfer"]
    return transfer.get("state") if isinstance(transfer, dict) else transfer


def device_has_a_say(lab, driver, shot, click, text):
    """Exercise 10: a lock holds v2's activation (validated, not activated, the page says why); released,
    the device activates v2 itself and confirms its trial; then consent required, v3 held for it, declined."""
    check("exercise 10 (the device has a say) is locked while v2 runs, saying to reset",
          exercise(driver, 10)[0] == "locked" and "Reset" in exercise(driver, 10)[1], exercise(driver, 10))
    click("reset")
    lab.wait("the device reset for exercise 10", lambda s: s.get("push") is None and s.get("status")
             and s["status"]["running"] == "A" and [x["version"] for x in s["status"]["slots"]] == ["1.0.0+0", None], 30)
    wait_page(driver, "exercise 10 ready", "return document.getElementById('exercise-10').dataset.state === 'ready'")
    state = lab.state()
    check("the device's say at start: no consent needed, no lock, nothing kept",
          say(state).get("consentRequired") is False and say(state).get("locks") == [] and not kept(state), say(state))
    click("hold-lock")
    state = lab.wait("the lock held", lambda s: any(l["state"] == "holding" for l in say(s).get("locks", [])), 10)
    check("hold an update lock: otad sees the lab's lock holding, with its reason",
          say(state)["locks"][0]["holder"] == "lab"
          and say(state)["locks"][0]["reason"] == "the lab's device is busy printing", say(state))
    click("push-v2")
    lab.wait("v2 started", lambda s: push(s).get("label") == "push v2", 30)
    state = lab.wait("v2 validated and kept, held by the lock",
                     lambda s: kept(s).get("hold") == "an update lock" and push(s).get("result") is not None, 90)
    result = push(state)["result"]
    check("otactl's push ends deferred (exit 16), saying what holds it",
          result["exitCode"] == 16 and "deferred: an update lock" in (result.get("error") or ""), result)
    journal = journal_state(state)
    check("with the lock held v2 is received and validated, not activated: 1.0.0 still runs in A, no trial",
          state["status"]["running"] == "A" and state["status"].get("trial") is None
          and journal == "validated" and kept(state).get("version") == "2.0.0+0"
          and kept(state).get("kind") == "trial", [journal, kept(state)])
    wait_page(driver, "the held state drawn", "const e = document.getElementById('say-kept');"
              " return e && e.dataset.hold === 'an update lock'")
    check("the page says why: validated, not activated, held by the lab's lock and its reason",
          "validated, not activated" in text("say-line") and "an update lock" in text("say-line")
          and "busy printing" in text("say-locks") and "busy printing" in text("say-kept"),
          [text("say-line"), text("say-locks"), text("say-kept")])
    wait_page(driver, "the push drawn deferred", "const e = document.getElementById('result');"
              " return e && e.innerText.startsWith('deferred (exit 16)')")
    check("the diagram stops at validated, ACTIVATE drawn kept and held (not failed)",
          lit(driver) == "stage-validated" and text("phase-activate") == "ACTIVATE kept, held"
          and driver.execute_script("return document.getElementById('phase-activate').className") == "held",
          [lit(driver), text("phase-activate")])
    check("the lab's log says what the button did", "holding an update lock" in text("actions"), text("actions"))
    # otad's trace is read at most once a second: the event may come a moment after the status.
    deadline = time.time() + 10
    while time.time() < deadline and "ACTIVATE deferred (an update lock)" not in text("events"):
        time.sleep(0.2)
    check("what otad did: ACTIVATE deferred, with what holds it",
          "ACTIVATE deferred (an update lock)" in text("events"), text("events")[:600])
    driver.execute_script("document.getElementById('say-section').scrollIntoView({block: 'center'})")
    time.sleep(0.4)
    shot("13-device-has-a-say")
    click("release-lock")
    state = lab.wait("v2 activated by the device itself, its trial confirmed",
                     lambda s: s["status"]["running"] == "B" and s["status"]["confirmed"] == "B"
                     and s["status"].get("trial") is None and not kept(s), 90)
    check("release the lock: the device activates v2 on its own (no central), the trial is confirmed",
          state["boot"]["outcome"] == "succeeded" and push(state)["label"] == "push v2"
          and not say(state)["locks"], [state["boot"], say(state)])
    click("require-consent")
    state = lab.wait("consent required", lambda s: say(s).get("consentRequired") and s["otadRunning"]
                     and any("--require-consent" in a for a in s["actions"]), 30)
    wait_page(driver, "the toggle drawn", "return document.getElementById('require-consent').innerText === 'Stop requiring consent'")
    check("require consent: otad started again with --require-consent, the toggle offers to stop",
          "required" in text("say-consent") and "--require-consent" in text("actions"), [text("say-consent"), text("actions")])
    click("push-v3")
    lab.wait("v3 started", lambda s: push(s).get("label") == "push v3", 30)
    state = lab.wait("v3 held for the owner's consent",
                     lambda s: kept(s).get("hold") == "awaiting consent" and push(s).get("result") is not None, 90)
    check("with consent required v3 is validated and kept, awaiting consent; 2.0.0 still runs",
          kept(state)["version"] == "3.0.0+0" and state["status"]["running"] == "B", kept(state))
    click("consent-decline")
    state = lab.wait("declined: the staged image dropped",
                     lambda s: (say(s).get("answer") or {}).get("decision") == "decline" and not kept(s), 30)
    check("consent: decline: the owner's answer recorded, the kept activation gone, 2.0.0 runs confirmed",
          say(state)["answer"]["version"] == "3.0.0+0" and state["status"]["running"] == "B"
          and state["status"]["confirmed"] == "B" and journal_state(state) != "validated",
          [say(state), journal_state(state)])
    wait_page(driver, "exercise 10 done", "return document.getElementById('exercise-10').dataset.state === 'done'")
    check("the page shows the answer, and exercise 10 done",
          "decline about 3.0.0+0" in text("say-answer") and "otad consent decline" in text("actions")
          and exercise(driver, 10)[0] == "done", [text("say-answer"), exercise(driver, 10)])


def post(address, path, body, origin=None, cookie=None):
    """A POST as a script would send it; (status, text)."""
    request = urllib.request.Request(address + path, data=body.encode(), method="POST")
    if origin:
        request.add_header("Origin", origin)
    if cookie:
        request.add_header("Cookie", cookie)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def class_mode(args):
    """Three students, three browsers (three cookies), three devices: each sees only its own."""
    lab = Lab(os.path.join(args.bin, "ota-lab"), "--listen", "127.0.0.1:0", "--class-code", "tulip42",
              "--seats", "3")
    drivers = []
    try:
        check("class mode prints the class code and the seats", "class code tulip42, 3 seats" in lab.line, lab.line)
        origin = lab.address.rstrip("/")
        status, _ = post(lab.address, "action/push-v2", "", origin)
        check("without a session a button is refused (401)", status == 401, status)
        names = ["Ann", "Bob", "Cyd"]
        for index, name in enumerate(names):
            driver = browser("1000,1400")
            drivers.append(driver)
            driver.get(lab.address)
            driver.find_element(By.ID, "code").send_keys("tulip4" if index == 0 else "tulip42")
            driver.find_element(By.ID, "name").send_keys(name)
            driver.find_element(By.ID, "join-button").click()
            if index == 0:
                said = wait_page(driver, "the refusal", "const e = document.getElementById('join-error'); return e && e.innerText")
                check("a wrong class code is refused with the reason", "wrong class code" in said, said)
                driver.find_element(By.ID, "code").send_keys("tulip42")
                driver.find_element(By.ID, "name").send_keys(name)
                driver.find_element(By.ID, "join-button").click()
            wait_page(driver, name + "'s page", "return window.labState && window.labState.status && window.labState.seat", 40)
        seats = [d.execute_script("return window.labState.seat") for d in drivers]
        check("three students joined, each page names its student", seats == names, seats)
        cookies = [d.get_cookie("blueota_lab") for d in drivers]
        check("each has a session cookie of their own, HttpOnly and SameSite=Strict",
              len({c["value"] for c in cookies if c}) == 3
              and all(c["httpOnly"] and c.get("sameSite") == "Strict" for c in cookies), cookies)
        status, said = post(lab.address, "join", "code=tulip42&name=Dan", origin)
        check("a fourth student is told the class is full", status == 503 and "class is full" in said, [status, said[-300:]])
        status, said = post(lab.address, "action/push-v2", "", "http://evil.example", "blueota_lab=" + cookies[0]["value"])
        check("a button from another origin is refused even with a student's cookie", status == 403, [status, said])
        drivers[0].find_element(By.ID, "push-v2").click()
        drivers[1].find_element(By.ID, "push-unsigned").click()
        wait_page(drivers[0], "Ann's v2 confirmed", "const s = window.labState; return s.push && s.push.result && s.status.running === 'B'", 90)
        wait_page(drivers[1], "Bob's unsigned refused", "const s = window.labState; return s.push && s.push.result", 60)
        time.sleep(0.8)
        seen = [d.execute_script("const s = window.labState; return [s.push ? s.push.label : null, "
                                 "s.status.slots.find(x => x.running).version]") for d in drivers]
        check("each student sees only their own device: Ann's v2 runs, Bob's refused unsigned, Cyd untouched",
              seen == [["push v2", "2.0.0+0"], ["push unsigned", "1.0.0+0"], [None, "1.0.0+0"]], seen)
        drivers[2].find_element(By.ID, "reset").click()
        time.sleep(2)
        seen = [d.execute_script("return window.labState.status.slots.find(x => x.running).version") for d in drivers]
        check("a student's reset resets their device only", seen == ["2.0.0+0", "1.0.0+0", "1.0.0+0"], seen)
        # One picture of the three pages side by side, made in the browser (no imaging library).
        for driver in drivers:
            driver.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.5)
        pictures = [d.get_screenshot_as_base64() for d in drivers]
        drivers[2].get("data:text/html," + urllib.parse.quote(
            "<body style='margin:0;display:flex;align-items:flex-start;gap:6px;background:#1d2330'>"
            + "".join(f"<img style='width:33%' src='data:image/png;base64,{p}'>" for p in pictures) + "</body>"))
        drivers[2].set_window_size(1500, 720)
        time.sleep(0.5)
        drivers[2].save_screenshot(os.path.join(args.shots, "11-class-three-students.png"))
    except Exception as error:
        check("the class session ran to its end", False, repr(error))
    finally:
        for driver in drivers:
            driver.quit()
        lab.stop()


UBOOT_PACKAGES = "u-boot-qemu u-boot-tools libubootenv-tool mtools dosfstools qemu-system-arm"


def uboot_mode(args):
    """--bootloader uboot: the real U-Boot decides; the panel reads what it left."""
    install = subprocess.run(
        ["bash", "-c", "source Scripts/setup.sh && blueota_install_debian " + UBOOT_PACKAGES],
        cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if install.returncode != 0:
        print("SKIPPED ota-lab --bootloader uboot: the U-Boot harness's packages (" + UBOOT_PACKAGES
              + ") could not be installed: " + (install.stderr.strip().splitlines() or ["?"])[-1], flush=True)
        return
    started = time.time()
    try:
        lab = Lab(os.path.join(args.bin, "ota-lab"), "--bootloader", "uboot")
    except RuntimeError as error:
        if "needs the Debian packages" in str(error) or "found no qemu-system-aarch64" in str(error):
            print("SKIPPED ota-lab --bootloader uboot: " + str(error).strip().replace("\n", " "), flush=True)
        else:
            check("ota-lab --bootloader uboot starts", False, error)
        return
    check("ota-lab --bootloader uboot starts (its board made, U-Boot's first boot)", True)
    print(f"  ota-lab --bootloader uboot answered after {time.time() - started:.1f} s", flush=True)
    driver = browser()
    text = lambda element: driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? e.innerText : ''", element)
    try:
        driver.get(lab.address)
        wait_page(driver, "the bootloader's variables", "const e = document.getElementById('boot-variables');"
                  " return e && e.innerText.includes('BOOT_ORDER=')", 30)
        variables, choices = text("boot-variables"), text("boot-choices")
        check("under U-Boot the panel shows fw_printenv's variables (BOOT_ORDER=A, BOOT_A_LEFT, BOOT_B_LEFT=0,"
              " bootargs rauc.slot=A) and U-Boot's choice of A",
              "BOOT_ORDER=A\n" in variables + "\n" and "BOOT_B_LEFT=0" in variables and "rauc.slot=A" in variables
              and "U-Boot chose A, its kernel started" in choices, [variables, choices])
        driver.find_element(By.ID, "push-v2").click()
        lab.wait("v2 started", lambda s: push(s).get("label") == "push v2", 30)
        pushed = time.time()
        seen = {"choosing": False, "disagree": False, "order": set()}
        deadline = time.time() + 180
        while time.time() < deadline:
            seen["choosing"] |= "the bootloader is choosing" in text("boot-choosing") + text("summary")
            seen["disagree"] |= "They disagree for a moment, and that is the lesson" in text("boot-caption")
            order = [line for line in text("boot-variables").split("\n") if line.startswith("BOOT_ORDER=")]
            seen["order"].update(order)
            state = window_state(driver)
            if state and (push(state).get("result") or {}).get("ok") is not None and state["status"]["confirmed"] == "B":
                break
            time.sleep(0.1)
        seconds = time.time() - pushed
        state = lab.wait("v2 confirmed under U-Boot", lambda s: push(s).get("result") and s["status"]["confirmed"] == "B", 10)
        check("push v2 under U-Boot: it succeeds and runs confirmed in slot B",
              push(state)["result"]["ok"] and state["boot"]["running"] == "B", push(state))
        # A boot here takes a fraction of a second, and otad confirms right after it: the page,
        # polling three times a second, may show the live moments or not (printed below); the
        # panel's "what the lab saw change" keeps them (ota-lab looks at the board every 50 ms).
        history = wait_page(driver, "the history drawn", "const e = document.getElementById('boot-history');"
                            " return e && e.innerText.includes('BOOT_ORDER=B BOOT_A_LEFT') && e.innerText", 10)
        lines = history.split("\n")
        steps = [next((i for i, line in enumerate(lines) if all(part in line for part in parts)), -1) for parts in [
            ["BOOT_ORDER=B A ", "puts B first while the board runs A: they disagree until the next boot"],
            ["the board powered on", "the bootloader is choosing"],
            ["U-Boot chose B, its kernel started"],
            ["BOOT_ORDER=B BOOT_A_LEFT"]]]
        check("the panel kept what changed, in order: otad wrote BOOT_ORDER=B A while the board ran A (they"
              " disagree), the board powered on (the bootloader is choosing), U-Boot chose B, BOOT_ORDER=B",
              -1 not in steps and steps == sorted(steps), [steps, lines])
        print(f"  seen live while polling the page: choosing={seen['choosing']} disagree={seen['disagree']}"
              f" orders={sorted(seen['order'])}", flush=True)
        wait_page(driver, "the agreement drawn", "const e = document.getElementById('boot-caption');"
                  " return e && e.innerText.startsWith('They agree')", 10)
        variables, choices = text("boot-variables"), text("boot-choices")
        check("after v2 confirmed: BOOT_ORDER=B, U-Boot's last choice B (kernel started), the caption says they agree",
              "BOOT_ORDER=B\n" in variables + "\n" and "rauc.slot=B" in variables
              and choices.split("\n")[-1].endswith(")") and "U-Boot chose B, its kernel started" in choices.split("\n")[-1]
              and text("boot-pointer").startswith("primary B"), [variables, choices, text("boot-pointer")])
        print(f"  v2 under U-Boot: {seconds:.1f} s from the push to confirmed; U-Boot's boots: "
              + "; ".join(choices.split("\n")), flush=True)
        driver.execute_script("document.getElementById('boot').scrollIntoView()")
        time.sleep(0.4)
        driver.save_screenshot(os.path.join(args.shots, "12-uboot-xray.png"))
        driver.find_element(By.ID, "reset").click()
        said = wait_page(driver, "the reset said", "const e = document.getElementById('summary');"
                         " return e && e.innerText.includes('resetting: a new board') && e.innerText", 10)
        check("while the reset makes a new board the page says so", "U-Boot's first boot" in said, said)
        state = lab.wait("the device reset under U-Boot", lambda s: s.get("push") is None and s.get("status")
                         and s["status"]["running"] == "A"
                         and [x["version"] for x in s["status"]["slots"]] == ["1.0.0+0", None], 120)
        wait_page(driver, "the new board drawn", "const e = document.getElementById('boot-choices');"
                  " return e && !e.innerText.includes('chose B')", 10)
        check("reset under U-Boot: a new board, U-Boot's one boot chose A, BOOT_ORDER=A, 1.0.0 runs",
              "BOOT_ORDER=A\n" in text("boot-variables") + "\n" and text("boot-choices").count("boot ") == 1
              and "chose A" in text("boot-choices"), [text("boot-variables"), text("boot-choices")])
    except Exception as error:
        check("the U-Boot session ran to its end", False, repr(error))
        try:
            driver.save_screenshot(os.path.join(args.shots, "failure-uboot.png"))
        except Exception:
            pass
    finally:
        driver.quit()
        lab.stop()
    print(f"  the U-Boot part took {time.time() - started:.0f} s", flush=True)


def window_state(driver):
    return driver.execute_script("return window.labState || null")


if __name__ == "__main__":
    sys.exit(main())
