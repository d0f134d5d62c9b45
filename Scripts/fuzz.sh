#!/usr/bin/env bash
# Runs the libFuzzer targets (docs/FUZZING.md): builds them with -sanitize=fuzzer,address into
# .build-fuzz, runs each for a set time on its corpus (.build-fuzz/corpus/NAME, seeded from
# Tests/OTAFuzzingTests/Seeds/NAME), saves crashing inputs under .build-fuzz/crashes/NAME and prints
# one line per target:
#   FUZZ target=wire seconds=30 execs=123456 execs_per_s=4115 crashes=0 corpus=87 cov=345
# Non-interactive; exits non-zero when any target crashed (or reported an invariant violation).
#
#   Scripts/fuzz.sh                          # every target, 30 s each
#   Scripts/fuzz.sh --seconds 3600 --jobs 2  # the long run: an hour each, two processes each
#   Scripts/fuzz.sh --target receiver --seconds 120
#   Scripts/fuzz.sh --target trust --seconds 600   # keys and signatures: not in the default set
#   Scripts/fuzz.sh --no-build               # reuse the last build
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh

all_targets=(wire mcuboot receiver cbor interleaving swu libconfig ddi)
# interleaving (the device's host) and swu, libconfig and ddi (the gateway's readers) bring
# swift-crypto's sanitized build into the default set (docs/FUZZING.md has the build times). trust
# (keys, signatures) is still named on purpose, though once those are built it adds only ~7 s.
known_targets=(wire mcuboot receiver trust cbor interleaving swu libconfig ddi)
targets=()
seconds=30
jobs=1
build=1
while (($# > 0)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
((${#targets[@]} > 0)) || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  [[ " ${known_targets[*]} " == *" $target "* ]] || { echo "fuzz.sh: no target $target (${known_targets[*]})" >&2; exit 2; }
done

scratch=.build-fuzz
# --sanitize links libFuzzer's main; -Xswiftc repeats the flags for every module, since SwiftPM alone
# once left objects uninstrumented after a `--target` build in the same scratch path.
swift_build=(swift build --scratch-path "$scratch" -c release --sanitize fuzzer --sanitize address
  -Xswiftc -sanitize=fuzzer,address)
export BLUEOTA_FUZZ=1
if ((build)); then
  started=$SECONDS
  for target in "${targets[@]}"; do
    echo "== fuzz: building fuzz-$target"
    "${swift_build[@]}" --product "fuzz-$target" 2>&1 | grep -vE "^warning: 'main': Source files for target|Cannot export local symbol" || true
    binary="$("${swift_build[@]}" --show-bin-path)/fuzz-$target"
    [[ -x "$binary" ]] || { echo "fuzz.sh: build of fuzz-$target failed" >&2; exit 1; }
    # Objects left by a build without the fuzzer flags (e.g. `--target` builds) carry no coverage.
    # (Read readelf's whole output: `readelf | grep -q` under pipefail fails whenever grep exits
    # before readelf has written everything, which made this check fail now and then.)
    sections="$(readelf -S "$binary")"
    [[ "$sections" == *__sancov_pcs* ]] || { echo "fuzz.sh: fuzz-$target has no coverage instrumentation; remove $scratch and rebuild" >&2; exit 1; }
  done
  echo "== fuzz: built in $((SECONDS - started)) s"
fi
bin="$("${swift_build[@]}" --show-bin-path)"

# A crash is libFuzzer's business: no Swift backtracer (it would symbolicate for minutes).
export SWIFT_BACKTRACE=enable=no
status=0
failed_targets=0
for target in "${targets[@]}"; do
  corpus="$scratch/corpus/$target"
  crashes="$scratch/crashes/$target"
  log="$scratch/logs/$target.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  crashes_before="$(find "$crashes" -type f | wc -l)"
  options=(-max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
    -artifact_prefix="$crashes/" -max_len=4096)
  if ((jobs > 1)); then options+=(-fork="$jobs" -ignore_crashes=1); fi
  echo "== fuzz: $target for ${seconds} s (log: $log)"
  rc=0
  started=$SECONDS
  "$bin/fuzz-$target" "${options[@]}" "$corpus" "Tests/OTAFuzzingTests/Seeds/$target" >"$log" 2>&1 </dev/null || rc=$?

  elapsed=$((SECONDS - started > 0 ? SECONDS - started : 1))
  execs="$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' | awk '{s+=$1} END {print s+0}' || true)"
  if [[ "$execs" == 0 ]]; then
    execs="$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)"
  fi
  cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+' || echo 0)"
  crashes_found=$(($(find "$crashes" -type f | wc -l) - crashes_before))
  if ((rc != 0 && crashes_found == 0)); then crashes_found=1; fi
  corpus_size="$(find "$corpus" -type f | wc -l)"
  echo "FUZZ target=$target seconds=$elapsed execs=${execs:-0} execs_per_s=$((${execs:-0} / elapsed)) crashes=$crashes_found corpus=$corpus_size cov=${cov:-0}"
  if ((crashes_found > 0)); then
    status=1
    failed_targets=$((failed_targets + 1))
    grep -E 'Fatal error|invariant violation|^  - |ERROR: ' "$log" | head -n 12 || true
    echo "   crashing inputs: $crashes (replay: $bin/fuzz-$target FILE; minimize: -minimize_crash=1 -runs=10000 FILE)"
  fi
done
# The counting line Scripts/test.sh reads: a target that crashed is a failed test.
echo "fuzzing: $((${#targets[@]} - failed_targets)) passed, $failed_targets failed"
exit "$status"
