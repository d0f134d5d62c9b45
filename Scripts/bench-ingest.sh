#!/usr/bin/env bash
# The receiver's ingest against the floor: builds ota-bench (release) and the floor program
# (Scripts/floor/ota-floor.c, with cc -O2), then runs ota-bench with --floor so that it prints the
# device's CPU per MB and MB/s next to the floor's, and their ratio, per MTU.
#   Scripts/bench-ingest.sh [ota-bench arguments...]   e.g. --size 16 --mtu 23 --dir /dev/shm
# Defaults: --mtu 517 --mtu 247 --mtu 23.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Scripts/setup.sh
swift build -c release --product ota-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
floor="$bin/ota-floor"
cc -O2 -Wall -Wextra -o "$floor" Scripts/floor/ota-floor.c
arguments=("$@")
if [[ " ${arguments[*]} " != *" --mtu "* ]]; then arguments+=(--mtu 517 --mtu 247 --mtu 23); fi
exec "$bin/ota-bench" --floor "$floor" "${arguments[@]}"
