#!/usr/bin/env bash
# The factory case of a delta with the real processes over the simulated link: slot A holds an
# image written by hand (bench-delta.sh's distro pair: a raw ext4 system partition), otad calls it
# unknown until `otad adopt` records it, then `otactl push --base OLD --delta-plan PLAN` sends the
# next release, planned once before by `otactl delta OLD NEW` (timed on its own).
# For each link setting: bytes on air, the push's wall time beside the air's figure (bytes on air ÷
# the link's raw capacity, from otactl's JSON), and otad's peak memory (VmHWM) and CPU during the
# push, a fresh otad per case. Then, for comparison, a plain push of the release's first --plain-mib
# MiB at the ceiling link: otad's memory and CPU per MB when it only stores chunks.
#
#   Scripts/bench-adopt-delta.sh [--pair DIR] [--plain-mib N] [--bin DIR] [--plan FILE]
#
# --pair DIR holds old.ext4 and new.ext4 (Scripts/bench-delta.sh --pairs distro --export DIR makes
# them; /tmp/distro-pair by default). --bin DIR: otad and otactl (default: a release build).
# --plan FILE: the release's plan, made there by `otactl delta` unless it exists (it takes minutes:
# the zstd frames at level 22); by default made anew in a temporary folder.
# Link settings: the simulated link's defaults (MTU 247, 15 ms, 6 packets per event, 2M, DLE) and
# its physical ceiling (packets=1000: as many packets as the connection event's air time holds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pair=/tmp/distro-pair
plain_mib=16
bin=""
plan=""
while (($#)); do
  case "$1" in
    --pair) pair="$2"; shift 2 ;;
    --plain-mib) plain_mib="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --plan) plan="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-adopt-delta: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
old="$pair/old.ext4"
new="$pair/new.ext4"
[[ -s "$old" && -s "$new" ]] || {
  echo "bench-adopt-delta: no $old and $new: make them with Scripts/bench-delta.sh --pairs distro --export $pair --anchors-only" >&2
  exit 2
}
if [[ -z "$bin" ]]; then
  swift build -c release --product otad >&2
  swift build -c release --product otactl >&2
  bin="$(swift build -c release --show-bin-path)"
fi
work="$(mktemp -d)"
otad_pid=""
cleanup() {
  [[ -z "$otad_pid" ]] || kill "$otad_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

size="$(stat -c %s "$old")"
capacity="$(($(stat -c %s "$new") > size ? $(stat -c %s "$new") : size))"
device() { echo --slot-a "$work/slot-a.img" --slot-b "$work/slot-b.img" --capacity "$capacity" --state-dir "$work/state"; }

# A fresh device: slot A the old image, written by hand; no state.
fresh() {
  rm -rf "$work/state" "$work/slot-b.img" "$work/otad.sock"
  cp "$old" "$work/slot-a.img"
}
start() {
  # shellcheck disable=SC2046
  "$bin/otad" run $(device) --socket "$work/otad.sock" >"$work/otad.log" 2>&1 &
  otad_pid=$!
  for _ in $(seq 100); do [[ -S "$work/otad.sock" ]] && break; sleep 0.05; done
  [[ -S "$work/otad.sock" ]] || { cat "$work/otad.log" >&2; exit 1; }
}
stop() { kill "$otad_pid"; wait "$otad_pid" 2>/dev/null || true; otad_pid=""; }
cpu_seconds() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$otad_pid/stat"; }
vmhwm_mib() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$otad_pid/status"; }
# VmHWM counts the running slot's pages a zstd frame's decoder touched through its mapping (page
# cache, given back under pressure); otad's own memory is its anonymous pages, sampled here.
sample_anon() { while kill -0 "$otad_pid" 2>/dev/null; do awk '/^RssAnon/ { print $2 }' "/proc/$otad_pid/status" 2>/dev/null; sleep 0.1; done >"$work/anon.log"; }
anon_peak_mib() { sort -n "$work/anon.log" | tail -n 1 | awk '{ printf "%.1f", $1 / 1024 }'; }
json() { python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]; r=[x for x in r if x.get('event')=='result'][-1]; print(eval(sys.argv[2], {}, {'r': r}))" "$@"; }

echo "== the pair: $(basename "$old") → $(basename "$new"), $size bytes each (slot capacity $capacity)"
fresh
start
info="$("$bin/otactl" info --device "$work/otad.sock" --json)"
echo "before adopt: Info says running image size $(echo "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runningImageSize"])')"
"$bin/otactl" push "$new" --version 2.0.0 --device "$work/otad.sock" --base "$old" --dry-run --json >"$work/dry.json"
echo "  a push now: $(json "$work/dry.json" "r['transferMode']") plan, $(json "$work/dry.json" "r['plannedBytesOnAir']") of $(json "$work/dry.json" "r['plainBytesOnAir']") plain bytes on air (the base does not match an unknown image)"
started=$(date +%s.%N)
# shellcheck disable=SC2046
"$bin/otad" adopt $(device) --image-version 1.0.0 | sed 's/^/  /'
echo "  otad adopt took $(echo "$(date +%s.%N) - $started" | bc) s"
stop

# The release planned once (what a push would otherwise do before its first byte), then pushed.
if [[ -n "$plan" && -s "$plan" ]]; then
  cp "$plan" "$work/release.delta"
  echo "  the plan: $plan (made before by otactl delta)"
else
  started=$(date +%s.%N)
  "$bin/otactl" delta "$old" "$new" -o "$work/release.delta" | sed 's/^/  /'
  echo "  otactl delta took $(echo "$(date +%s.%N) - $started" | bc) s, once per release"
  [[ -z "$plan" ]] || cp "$work/release.delta" "$plan"
fi

for link in "mtu=247" "mtu=247,packets=1000"; do
  fresh
  start
  # shellcheck disable=SC2046
  "$bin/otad" adopt $(device) --image-version 1.0.0 >/dev/null
  cpu_before="$(cpu_seconds)"
  sample_anon &
  sampler=$!
  started=$(date +%s.%N)
  # otactl's own CPU (user + system), by bash's time: what planning and computing writes cost.
  TIMEFORMAT='%U %S'
  { time "$bin/otactl" push "$new" --version 2.0.0 --device "$work/otad.sock" --base "$old" \
    --delta-plan "$work/release.delta" --no-activate --json --link "$link" >"$work/push.json" \
    2>"$work/otactl.err"; } 2>"$work/otactl.time"
  wall="$(echo "$(date +%s.%N) - $started" | bc)"
  cpu="$(echo "$(cpu_seconds) - $cpu_before" | bc)"
  cmp -n "$(stat -c %s "$new")" "$new" "$work/slot-b.img" >/dev/null || { echo "slot B does not hold the new image" >&2; exit 1; }
  on_air="$(json "$work/push.json" "r['bytesOnAir']")"
  capacity_bps="$(json "$work/push.json" "r['rawCapacity']")"
  air="$(echo "scale=1; $on_air / $capacity_bps" | bc)"
  echo "== --link $link: $(json "$work/push.json" "r['transferMode']"), $on_air B on air ($(echo "scale=2; 100 * $on_air / $size" | bc) % of the image)"
  echo "  push wall $wall s (transfer $(json "$work/push.json" "round(r['transferSeconds'], 1)") s); the air: $air s at the link's $capacity_bps B/s; ceiling $(echo "scale=1; 1.2 * $air + 5" | bc) s (1.2 × air + 5 s)"
  echo "  zstd frames: $(json "$work/push.json" "r.get('framesSent', 0)") sent, $(json "$work/push.json" "r.get('plannedFrameBytesOnAir', 0)") B planned for them; $(json "$work/push.json" "r['windows']") windows"
  hwm="$(vmhwm_mib)"
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
  echo "  otad: VmHWM $hwm MiB (anonymous memory at most $(anon_peak_mib) MiB), CPU $cpu s ($(echo "scale=1; 1000 * $cpu / ($size / 1000000)" | bc) ms per MB of image)"
  echo "  otactl: CPU $(awk '{ printf "%.1f", $1 + $2 }' "$work/otactl.time") s (the estimate's writes, hashing the base and the plan's images, the link's side)"
  stop
done

fresh
head -c $((plain_mib << 20)) "$new" >"$work/plain.img"
start
cpu_before="$(cpu_seconds)"
"$bin/otactl" push "$work/plain.img" --version 2.0.0 --device "$work/otad.sock" --full --no-activate --json \
  --link "mtu=247,packets=1000" >"$work/push.json"
cpu="$(echo "$(cpu_seconds) - $cpu_before" | bc)"
echo "== plain push of the first $plain_mib MiB (--full, packets=1000): $(json "$work/push.json" "r['bytesOnAir']") B on air in $(json "$work/push.json" "round(r['seconds'], 1)") s"
echo "  otad: VmHWM $(vmhwm_mib) MiB, CPU $cpu s ($(echo "scale=1; 1000 * $cpu / ($plain_mib * 1.048576)" | bc) ms per MB)"
stop
