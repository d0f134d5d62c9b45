#!/usr/bin/env bash
# Benchmark: a fleet campaign in a box. goosebit (a hawkBit DDI server) on 127.0.0.1, one
# `otactl gateway --socket-dir DIR --until-idle`, N simulated devices (an otad process each, release
# builds) and one rollout of one new MCUboot image, over the simulated link with loss, with power
# cuts (kill -9 of a few devices' otad while their transfer is under way, started again a second
# later on the same slots and state dir, once about half the image is committed on the device) and an image that fails its self-test on a few devices
# (their otad's --health-check exits 3). Once per --parallel value, each on a fresh server and fresh
# devices. Per run:
#   done        the gateway's start to its exit (--until-idle)
#   confirmed   devices goosebit shows Finished on the new version / Error (rolled back) / other
#   bricked     devices whose `otactl info` shows neither 1.0.0 nor the new version confirmed
#   on air      bytes on air of every push (the gateway's closing line), and as a ratio of a single
#               device's own `otactl push` of the same image over the same link times the pushes
#   downloads   HTTP downloads of the artifact goosebit served (its access log)
#   air model   the bytes on air over what --parallel links carry together on one radio
#               (AirTime.sharedCapacityBytesPerSecond: the `aggregateCapacity` of the summary of an
#               `otactl push --parallel P --json` to P devices over the same link), and done's
#               ratio to it
#   phases      from the gateway's log, each line timestamped as it is written: registering (probes,
#               polls, attributes, deployments, the download), pushing (first 'pushing' to the last
#               result), the feedback queue's drain (to 'pushed to N device(s)'), the closing poll cycle
#   control     `otactl push --parallel P` of the same image to N fresh devices (same health
#               checks, no power cuts, no server): the push phase without DDI
# Keeps each run's server view (rollouts.json, devices.json), logs and figures in --out.
# docs/BENCHMARKS.md ("A fleet campaign through the gateway") keeps the figures.
#
#   Scripts/bench-gateway.sh [--devices 100] [--size 65536] [--link loss=0.01] [--parallel "4 8"]
#                            [--cuts 3] [--failing 5] [--no-control] [--out .build/bench-gateway]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
source Scripts/setup.sh
source Scripts/fleet/goosebit.sh

devices=100
size=65536
link="loss=0.01"
parallels="4 8"
cuts=3
failing=5
control=1
out="$root/.build/bench-gateway"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devices) devices="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --link) link="$2"; shift 2 ;;
    --parallel) parallels="$2"; shift 2 ;;
    --cuts) cuts="$2"; shift 2 ;;
    --failing) failing="$2"; shift 2 ;;
    --no-control) control=0; shift ;;
    --out) out="$2"; shift 2 ;;
    *) echo "bench-gateway: unknown argument $1" >&2; exit 2 ;;
  esac
done

swift build -c release --product otad >/dev/null
swift build -c release --product otactl >/dev/null
bin="$(swift build -c release --show-bin-path)"
goosebit_install
# goosebit's logging as its default, and uvicorn's access log on (goosebit's own config turns it
# off): each request a line in goosebit.log, the artifact's downloads counted from them.
export GOOSEBIT_LOGGING='{"version":1,"disable_existing_loggers":false,"formatters":{"simple":{"format":"%(asctime)s - %(name)s - %(levelname)s - %(message)s"}},"handlers":{"console":{"class":"logging.StreamHandler","formatter":"simple","level":"DEBUG"}},"loggers":{"tortoise":{"handlers":["console"],"level":"WARNING","propagate":false},"aiosqlite":{"handlers":["console"],"level":"WARNING","propagate":false},"multipart":{"handlers":["console"],"level":"INFO","propagate":false},"uvicorn.access":{"handlers":["console"],"level":"INFO","propagate":false}},"root":{"level":"INFO","handlers":["console"]}}'
admin() { "$goosebit_venv/bin/python" Scripts/fleet/goosebit_admin.py "$@"; }
# shellcheck source=Scripts/lib/harness.sh
source Scripts/lib/harness.sh # free_port
now() { date +%s.%N; }
# Each line of stdin with the time it was read before it (seconds since the epoch).
stamp() { python3 -u -c 'import sys, time
for line in sys.stdin: sys.stdout.write(f"{time.time():.3f} {line}"); sys.stdout.flush()'; }

work="$(mktemp -d "${TMPDIR:-/tmp}/bench-gateway.XXXXXX")"
rm -rf "$out" && mkdir -p "$out"
gb_dirs=()
cleanup() {
  local f
  for f in "$work"/*/dev/*/pid "$work"/*/pid.*; do
    if [[ -f "$f" ]]; then kill "$(cat "$f")" 2>/dev/null || true; fi
  done
  for dir in "${gb_dirs[@]}"; do goosebit_stop "$dir" 2>/dev/null || true; done
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck disable=SC2016 # $OTAD_VERSION is otad's to expand, in the health check's shell
ok='echo "self-test of $OTAD_VERSION passed"'
bad='echo "self-test of $OTAD_VERSION: no sensor on this board"; exit 3'
serial() { printf 'sim-%03d' "$1"; }
# The devices that fail the self-test and the ones whose power is cut: spread over the order the
# gateway takes them in (sorted by socket name), never the same device.
failing_set=" "
for ((k = 0; k < failing; k++)); do failing_set+="$(serial $(((2 * k + 1) * devices / (2 * failing) - 1))) "; done
cut_set=" "
for ((k = 1; k <= cuts; k++)); do
  i=$((k * devices / (cuts + 1) + 3))
  while [[ "$failing_set" == *" $(serial $i) "* ]]; do i=$((i + 1)); done
  cut_set+="$(serial $i) "
done

start_otad() { # dir socket serial health-check: otad on its slots (slot A 1.0.0 the first time)
  local dir="$1" level=info
  mkdir -p "$dir"
  [[ -f "$dir/a.img" ]] || cp Images/firmware-v1.bin "$dir/a.img"
  # A device whose power is cut says each committed window in its log (debug): the cut waits for one.
  [[ "$cut_set" == *" $3 "* ]] && level=debug
  "$bin/otad" run --slot-a "$dir/a.img" --slot-b "$dir/b.img" --capacity 1MiB --state-dir "$dir/state" \
    --socket "$2" --serial "$3" --model blueota-sim --hardware-revision 1.0 --attempts 1 \
    --health-check "$4" --log-level "$level" >>"$dir/otad.log" 2>&1 &
  echo $! >"$dir/pid"
  disown $! # a power cut's kill -9 is meant: no "Killed" from bash
}
wait_socket() { # socket dir
  for _ in $(seq 500); do [[ -S "$1" ]] && return 0; sleep 0.02; done
  echo "otad at $1 did not start:" >&2
  tail -n 5 "$2/otad.log" >&2
  exit 1
}
start_fleet() { # run-dir count: devices sim-000... with sockets in run-dir/sockets
  local run="$1" i id check
  mkdir -p "$run/sockets"
  for ((i = 0; i < $2; i++)); do
    id="$(serial $i)"
    check="$ok"
    [[ "$failing_set" == *" $id "* ]] && check="$bad"
    start_otad "$run/dev/$id" "$run/sockets/$id.sock" "$id" "$check"
  done
  for ((i = 0; i < $2; i++)); do id="$(serial $i)"; wait_socket "$run/sockets/$id.sock" "$run/dev/$id"; done
}
stop_fleet() { # run-dir
  local f
  for f in "$1"/dev/*/pid; do kill "$(cat "$f")" 2>/dev/null || true; done
  for f in "$1"/dev/*/pid; do
    for _ in $(seq 100); do kill -0 "$(cat "$f")" 2>/dev/null || break; sleep 0.02; done
  done
  rm -f "$1"/dev/*/pid
}

# ---- The image: an MCUboot image 2.0.0+0 of --size payload bytes, packed for blueota-sim 1.0 ----
mkdir -p "$work/images"
head -c "$size" Images/raw-1MiB.bin >"$work/images/payload.bin"
"$bin/otactl" image create "$work/images/payload.bin" "$work/images/fw-2.0.0.img" --version 2.0.0+0 >/dev/null
"$bin/otactl" image pack "$work/images/fw-2.0.0.img" "$work/images/fw-2.0.0.swu" --board blueota-sim --revision 1.0 >/dev/null
image="$work/images/fw-2.0.0.img"

# ---- References: one device's own push; P devices' push for the shared radio's capacity ----
push_ref() { # name count: otactl push --parallel count to count fresh devices; the JSON lines in run/push.jsonl
  local run="$work/$1" targets=() i
  start_fleet "$run" "$2"
  for ((i = 0; i < $2; i++)); do targets+=(--device "$run/sockets/$(serial $i).sock"); done
  local t0 t1
  t0="$(now)"
  "$bin/otactl" push "$image" --json --link "$link" --parallel "$2" --restart-timeout 30 --trial-timeout 60 \
    "${targets[@]}" >"$run/push.jsonl" 2>"$run/push.err" || true
  t1="$(now)"
  echo "$t0 $t1" >"$run/span"
  stop_fleet "$run"
}
push_ref single 1
cp "$work/single/push.jsonl" "$out/reference-single.jsonl"
for p in $parallels; do
  push_ref "shared-$p" "$p"
  cp "$work/shared-$p/push.jsonl" "$out/reference-shared-$p.jsonl"
done

# ---- One campaign ----
campaign() { # parallel
  local p="$1"
  local run="$work/campaign-$p" keep="$out/parallel-$p" port gb software
  mkdir -p "$run" "$keep"
  gb="$run/gb"
  gb_dirs+=("$gb")
  port="$(free_port)"
  goosebit_start "$gb" "$port" >/dev/null
  start_fleet "$run" "$devices"
  software="$(admin upload "$work/images/fw-2.0.0.swu")"
  admin rollout --software "$software" --name "campaign parallel $p" >/dev/null

  local t0 t1 gateway_pid
  t0="$(now)"
  "$bin/otactl" gateway --server "$GOOSEBIT_URL" --socket-dir "$run/sockets" --state-dir "$run/gw" \
    --parallel "$p" --link "$link" --restart-timeout 30 --trial-timeout 60 --until-idle \
    </dev/null 2> >(stamp >"$run/gateway.log") >/dev/null &
  gateway_pid=$!
  echo "$gateway_pid" >"$run/pid.gateway"
  # The power cuts: a device's otad killed (kill -9) once about half the image is committed on it
  # (its log's first 'WINDOW committed' at or past 40 % of the size: windows are 32 KiB, so 32 KiB
  # of 64 KiB, 128 KiB of 256 KiB), in the window that follows, and started again a second later.
  local cutter_pid
  (
    for id in $cut_set; do
      dir="$run/dev/$id"
      until awk -v half="$((image_size * 2 / 5))" '/WINDOW committed/ {
              for (i = 1; i <= NF; i++) if ($i ~ /^offset=/) { split($i, kv, "="); if (kv[2] + 0 >= half) found = 1 }
            } END { exit !found }' "$dir/otad.log" 2>/dev/null; do
        kill -0 "$gateway_pid" 2>/dev/null || exit 0
        sleep 0.02
      done
      kill -9 "$(cat "$dir/pid")" 2>/dev/null || true
      echo "$(now) power cut $id" >>"$run/cuts.log"
      sleep 1
      rm -f "$run/sockets/$id.sock"
      start_otad "$dir" "$run/sockets/$id.sock" "$id" "$ok"
      echo "$(now) power back $id" >>"$run/cuts.log"
    done
  ) &
  cutter_pid=$!
  wait "$gateway_pid" || echo "bench-gateway: the gateway (parallel $p) exited $?" >&2
  t1="$(now)"
  wait "$cutter_pid" 2>/dev/null || true
  sleep 0.5 # the stamper's last lines
  echo "$t0 $t1" >"$run/span"

  admin devices >"$keep/devices.json"
  admin rollouts >"$keep/rollouts.json"
  local id
  for ((i = 0; i < devices; i++)); do
    id="$(serial $i)"
    printf '%s ' "$id"
    "$bin/otactl" info --device "$run/sockets/$id.sock" --json 2>/dev/null | tr -d '\n' || echo -n '{}'
    echo
  done >"$keep/info.txt"
  cp "$run/gateway.log" "$run/cuts.log" "$keep/" 2>/dev/null || true
  grep -E '"GET [^"]*download[^"]*" 200' "$gb/goosebit.log" >"$keep/downloads.log" || true
  # goosebit's access log (uvicorn): '"GET /DEFAULT/controller/v1/sim-000 HTTP/1.1" 200 OK'.
  for what in 'controller/v1/[^/ ]+ HTTP' '/configData HTTP' '/deploymentBase/[^/ ]+ HTTP' '/feedback HTTP' '/download HTTP'; do
    printf '%s %s\n' "$(grep -cE "$what" "$gb/goosebit.log" || true)" "$what"
  done >"$keep/requests-by-kind"
  stop_fleet "$run"
  goosebit_stop "$gb"
  echo "$t0 $t1" >"$keep/span"
}

control_run() { # parallel: otactl push to every device at once, no server
  local p="$1"
  local run="$work/control-$p" targets=() i t0 t1
  start_fleet "$run" "$devices"
  for ((i = 0; i < devices; i++)); do targets+=(--device "$run/sockets/$(serial $i).sock"); done
  t0="$(now)"
  "$bin/otactl" push "$image" --json --link "$link" --parallel "$p" --restart-timeout 30 --trial-timeout 60 \
    "${targets[@]}" >"$run/push.jsonl" 2>"$run/push.err" || true
  t1="$(now)"
  echo "$t0 $t1" >"$out/parallel-$p/control-span"
  cp "$run/push.jsonl" "$out/parallel-$p/control.jsonl"
  stop_fleet "$run"
}

echo "simulated link: $link (defaults otherwise: mtu 247, 15 ms, 6 packets per event, 2M, DLE);" \
  "image $(stat -c %s "$image") bytes (MCUboot, $size payload bytes) to $devices devices;" \
  "self-test fails on$failing_set; power cut on$cut_set"
image_size="$(stat -c %s "$image")"
for p in $parallels; do
  campaign "$p"
  if ((control)); then control_run "$p"; fi
  python3 Scripts/bench-gateway-figures.py --out "$out" --parallel "$p" --devices "$devices" --size "$size" \
    --link "$link" --failing "$failing_set" --cuts "$cut_set"
done
echo "kept in $out"
