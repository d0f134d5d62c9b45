#!/usr/bin/env python3
"""The figures of one campaign of Scripts/bench-gateway.sh, from what it kept in --out:
parallel-P/{span, gateway.log, devices.json, rollouts.json, info.txt, downloads.log, cuts.log,
requests-by-kind, control.jsonl, control-span}, reference-single.jsonl, reference-shared-P.jsonl."""
import argparse
import collections
import json
import os
import re


def lines(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def main():
    ap = argparse.ArgumentParser()
    for name in ("out", "link", "failing", "cuts"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--parallel", type=int, required=True)
    ap.add_argument("--devices", type=int, required=True)
    ap.add_argument("--size", type=int, required=True)
    a = ap.parse_args()
    keep = f"{a.out}/parallel-{a.parallel}"
    t0, t1 = map(float, open(f"{keep}/span").read().split())
    done = t1 - t0

    # The gateway's log, each line "EPOCH <logger line>".
    log = []
    for line in open(f"{keep}/gateway.log"):
        stamp, _, text = line.partition(" ")
        try:
            log.append((float(stamp), text.rstrip("\n")))
        except ValueError:
            pass
    closing = [m for _, t in log for m in [re.search(
        r"after (\d+) poll\(s\): (\d+) result\(s\) reported, (\d+) success, (\d+) failure; (\d+) bytes on air in (\d+) push\(es\)",
        t)] if m]
    polls, results, successes, failures, on_air, pushes = map(int, closing[-1].groups()) if closing else (0,) * 6
    confirmed_lines = {}
    resumed = {}
    for _, t in log:
        m = re.search(r"(sim-\d+): runs (\S+), confirmed; (\d+) bytes on air(?:, resumed at byte ([\d, ]+))?", t)
        if m:
            confirmed_lines[m[1]] = int(m[3])
            if m[4]:
                resumed[m[1]] = m[4]
    failed_lines = {m[1]: m[2] for _, t in log for m in [re.search(r"(sim-\d+): \S+ failed: (.*)", t)] if m}
    downloaded = [t for _, t in log if "downloaded " in t]

    # The server's view.
    devices = json.load(open(f"{keep}/devices.json"))
    states = collections.Counter(f'{d["last_state"]} {d["sw_version"]}' for d in devices)
    reasons = collections.defaultdict(list)
    for d in devices:
        if d["last_state"] == "Error":
            log_lines = [l for l in (d["log"] or "").splitlines() if l.strip()]
            reason = next((l for l in reversed(log_lines) if "rolled back" in l or "failed" in l),
                          log_lines[-1] if log_lines else "(no log)")
            reasons[reason.strip()].append(d["id"])
    rollouts = json.load(open(f"{keep}/rollouts.json"))
    finished = sum(1 for d in devices if d["last_state"] == "Finished")
    errors = sum(1 for d in devices if d["last_state"] == "Error")

    # The devices' own view: none bricked.
    running = collections.Counter()
    bricked = []
    for line in open(f"{keep}/info.txt"):
        ident, _, text = line.strip().partition(" ")
        try:
            info = json.loads(text)
            key = f'{info["runningVersion"]}{" on trial" if info["onTrial"] else ", confirmed"}'
        except Exception:
            key = "no answer"
        running[key] += 1
        if key not in ("1.0.0+0, confirmed", "2.0.0+0, confirmed"):
            bricked.append(ident)

    served = sum(1 for _ in open(f"{keep}/downloads.log"))

    # References.
    single = lines(f"{a.out}/reference-single.jsonl")[-1]
    shared = lines(f"{a.out}/reference-shared-{a.parallel}.jsonl")[-1]
    capacity = shared["aggregateCapacity"]
    ceiling = shared["physicalCeiling"]
    reference = single["bytesOnAir"] * pushes
    air_model = on_air / capacity
    per_device_overhead = single["seconds"] - single["transferSeconds"]

    # Phases, from the stamped log.
    def first(pattern):
        return next((s for s, t in log if re.search(pattern, t)), None)

    def last(pattern):
        return next((s for s, t in reversed(log) if re.search(pattern, t)), None)

    probed = last(r": found at ")
    download = first(r"downloaded ")
    push_start = first(r": pushing ")
    push_end = last(r"pushed to \d+ device\(s\)")
    starts = {m[1]: s for s, t in log for m in [re.search(r"(sim-\d+): pushing", t)] if m}
    ends = {m[1]: s for s, t in log for m in [re.search(r"(sim-\d+): (?:runs |\S+ failed)", t)] if m}
    slots = [ends[i] - starts[i] for i in ends if i in starts]

    print(f"--parallel {a.parallel}")
    print(f"  done                {done:7.1f} s   (gateway start to exit, --until-idle; {polls} poll cycles)")
    print(f"  server              {finished} Finished, {errors} Error, {len(devices) - finished - errors} other "
          f"({', '.join(f'{n} {k}' for k, n in sorted(states.items()))}); rollout: "
          + ", ".join(f'{r["success_count"]} success / {r["failure_count"]} failure' for r in rollouts))
    for reason, ids in reasons.items():
        print(f"  error reason        {len(ids)} × {reason!r}: {' '.join(sorted(ids))}")
    print(f"  devices             {', '.join(f'{n} {k}' for k, n in sorted(running.items()))}; "
          f"bricked: {len(bricked)}{' ' + ' '.join(bricked) if bricked else ''}")
    print(f"  results             {results} reported ({successes} success, {failures} failure); "
          f"{len(confirmed_lines)} 'confirmed' lines, {len(failed_lines)} 'failed' lines")
    cut_ids = a.cuts.split()
    # cuts.log: '<epoch> power cut sim-028' once about half the image was committed on the device.
    cut_at = {}
    if os.path.exists(os.path.join(keep, "cuts.log")):
        for line in open(os.path.join(keep, "cuts.log")):
            f = line.split()
            if len(f) == 4 and f[1:3] == ["power", "cut"]:
                cut_at[f[3]] = float(f[0])
    after = [f"{cut_at[i] - starts[i]:.2f}" for i in cut_ids if i in cut_at and i in starts]
    print(f"  power cuts          {' '.join(f'{i} (resumed at byte {resumed.get(i, 0)})' for i in cut_ids)}; "
          f"cut once about half the image was committed: {', '.join(after) or 'none'} s after 'pushing'")
    print(f"  on air              {on_air} bytes in {pushes} pushes; reference {single['bytesOnAir']} × {pushes} = "
          f"{reference}; ratio {on_air / reference:.4f} (target ≤ 1.02)")
    print(f"  downloads           {served} served by goosebit, {len(downloaded)} 'downloaded' line(s) in the gateway's log")
    print(f"  capacity            {capacity / 1000:.1f} kB/s for {a.parallel} links on one radio "
          f"(aggregateCapacity of otactl push --parallel {a.parallel}); ceiling {ceiling / 1000:.1f} kB/s")
    print(f"  air model           {air_model:7.1f} s   done / air model = {done / air_model:.2f} (target ≤ 1.2)")
    if push_start and push_end:
        # Pushing ends at the last device's result; the feedback queue's drain (the results' closing
        # feedback and attributes, sent off the push loop) ends at 'pushed to N device(s)'.
        last_result = max(ends.values()) if ends else push_end
        print(f"  phases              registering {push_start - t0:5.1f} s (last probe at {probed - t0 if probed else float('nan'):.1f} s, "
              f"download at {download - t0 if download else float('nan'):.1f} s) | pushing {last_result - push_start:5.1f} s "
              f"({on_air / (last_result - push_start) / 1000:.1f} kB/s on air, {on_air / (last_result - push_start) / capacity:.0%} of capacity) "
              f"| feedback drained {push_end - last_result:4.1f} s | closing {t1 - push_end:4.1f} s")
    if slots:
        slots.sort()
        print(f"  per device          'pushing' to its result: median {slots[len(slots) // 2]:.2f} s, "
              f"max {slots[-1]:.2f} s; slots busy {sum(slots) / a.parallel:.1f} s of the push phase")
    print(f"  single push         {single['seconds']:.2f} s, transfer {single['transferSeconds']:.2f} s "
          f"({single['transferGoodput'] / 1000:.1f} kB/s), {per_device_overhead:.2f} s besides "
          "(connect, activate, restart, trial)")
    try:
        c0, c1 = map(float, open(f"{keep}/control-span").read().split())
        summary = lines(f"{keep}/control.jsonl")[-1]
        ok = sum(1 for d in summary["devices"] if d["ok"])
        control_air = sum(d["bytesOnAir"] for d in summary["devices"])
        print(f"  control (no server) {c1 - c0:7.1f} s   otactl push --parallel {a.parallel} to {len(summary['devices'])} devices: "
              f"{ok} ok; {control_air} bytes on air, air model {control_air / capacity:.1f} s, "
              f"ratio {(c1 - c0) / (control_air / capacity):.2f}")
    except FileNotFoundError:
        pass
    try:
        print("  goosebit requests   " + "; ".join(l.strip() for l in open(f"{keep}/requests-by-kind")))
    except FileNotFoundError:
        pass


if __name__ == "__main__":
    main()
