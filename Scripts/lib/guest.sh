# The VM guest's plumbing (Scripts/vm/run.sh boots the guest; Scripts/bluez/guest-*.sh run in it),
# sourced by guest-e2e.sh, and by guest-hold.sh when it runs alone:
#
#   source "$root/Scripts/lib/guest.sh" NAME    # refuses to run outside the VM, then sets
#                                                # bin, results, central, work
#   step "3. a push"                             # "== [uptime] 3. a push"
#   fail "why"                                   # FAIL line, otad's log's tail, exit 1
#   discovering; wait_discovering 10             # the central's discovery (bluetoothd's word)
#   registered                                   # otad's advertisement registrations so far
#
# Needs BLUEOTA_BIN (otad and otactl), GUEST_RESULTS (where the results go) and, for another
# central than hci1, GUEST_CENTRAL; `root` set by the script that sources it.
# shellcheck shell=bash

[[ "${BLUEOTA_VM:-}" == 1 ]] || { echo "$1: runs inside the harness VM (Scripts/test-bluez.sh)" >&2; exit 2; }
bin="${BLUEOTA_BIN:?BLUEOTA_BIN names the folder with otad and otactl}"
results="$GUEST_RESULTS"
central="${GUEST_CENTRAL:-hci1}"
work="$(mktemp -d)"
now() { awk '{print $1}' /proc/uptime; }
step() { echo "== [$(now)] $*"; }
fail() { echo "FAIL: $*" >&2; tail -n 40 "$results/otad.log" >&2 || true; exit 1; }

# A scanner in these VMs sees an advertiser only at two moments: when its own scan starts (the
# virtual controller reports every advertiser at once, once, filtering duplicates) and when the
# advertiser enables its advertising while the scanner scans. Linux 6.1 drops the first kind about
# half the time: it comes before the kernel marks its discovery as finding (docs/BLUEZ.md). So the
# steps that must find a device have the central scanning before the device advertises.
discovering() { busctl get-property org.bluez "/org/bluez/$central" org.bluez.Adapter1 Discovering 2>/dev/null | grep -q true; }
wait_discovering() { for _ in $(seq "$((${1:-5} * 20))"); do discovering && return 0; sleep 0.05; done; return 1; }
registered() { grep -c "RegisterAdvertisement accepted" "$results/otad.log" || true; }
