#!/usr/bin/env bash
# Runs INSIDE the harness VM as PID 1, right after the initramfs switch_roots into the host's root
# (read-only 9p under a tmpfs overlay). Started by Scripts/vm/run.sh; not meant to be run by hand.
#
# Brings up the real BlueZ stack (bluetooth + hci_vhci modules, a system dbus-daemon, N virtual
# LE controllers from `btvirt -L -lN`, two by default, bluetoothd), runs the host's test script, leaves everything
# in the results share and powers the VM off. Every step is time-bounded; whatever happens, the
# EXIT trap writes what it has and powers off.
#
# Environment (KEY=VAL words of the kernel command line, set by run.sh):
#   GUEST_RESULTS   the writable results share, mounted by the initramfs at its host path
#   GUEST_TEST      executable test script on the host's (read-only) root
#   VM_KVER         kernel version;  VM_MODULES  the trimmed module tree (host path, in the cache)
#   VM_TIMEOUT      seconds the host gives the whole VM; the test gets what remains minus a margin
#   BT_CONF         optional bluetoothd main.conf (host path, or a file in the results share)
#   BT_ARGS         optional extra bluetoothd arguments, separated by commas (e.g. -d)
#   VM_CONTROLLERS  how many virtual LE controllers btvirt makes (hci0 ... hciN-1), 2 to 8; default 2
#                   (run.sh --controllers N); the test gets it as GUEST_CONTROLLERS
#   VM_BTVIRT       the btvirt to run instead of Debian's (run.sh sets it with more than 2
#                   controllers: Scripts/vm/build-btvirt.sh)
#   GUEST_TRACE=1   trace every command of this script, timestamped, into trace.log
#                   (BLUEOTA_VM_TRACE=1 Scripts/vm/run.sh ...)
#   VM_NET_ADDRESS  (run.sh --forward-host-port) the address/prefix for eth0, e.g. 10.0.2.15/24:
#                   virtio_net is loaded and eth0 comes up with it (static, no DHCP client; lo is
#                   up anyway); the test reaches the host's forwarded port at GUEST_HOST_URL
#   anything else   passed through to the test unchanged (run.sh --env KEY=VAL)
#
# Results share contents: timings.tsv (step, seconds since the guest kernel started), stage (last
# step reached), error (why it stopped early), warnings, test.out, test.rc, test.timeout,
# bluetoothd.cmdline, bluetoothd.log, btvirt.log, dbus.log, dmesg.log.
#
# Under emulation every external command costs 0.1-0.5 s, so the waits below poll with bash
# builtins ($EPOCHREALTIME, read -t) and as few busctl/dmesg runs as they can.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
unset ginit

# devtmpfs has no /dev/fd (udev makes it on a normal boot); bash's <(...) and many scripts need it.
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

R="${GUEST_RESULTS:-/run/results}"
mkdir -p "$R"
if [[ "${GUEST_TRACE:-}" == 1 ]]; then
  exec 8>"$R/trace.log"
  BASH_XTRACEFD=8
  PS4='+ ${EPOCHREALTIME} '
  set -x
fi

# step NAME: record that NAME was reached, and when (seconds since the guest kernel started).
step() {
  local up _
  read -r up _ </proc/uptime
  printf '%s\t%s\n' "$1" "$up" >>"$R/timings.tsv"
  echo "$1" >"$R/stage"
  echo "guest-init: $1 at $up s" >&2  # the serial console: console.log, run.sh --verbose
}
fail() {
  echo "guest-init: $*" >&2
  echo "$*" >>"$R/error"
  exit 1
}
now_ms() { local t="${EPOCHREALTIME/[.,]/}"; echo "$((t / 1000))"; }
# A builtin sleep: read -t on a pipe nobody writes to (sleep(1) is a process per poll).
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" _ || true; }
# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 50 ms until it succeeds.
wait_for() {
  local seconds="$1" what="$2" deadline
  shift 2
  deadline=$(($(now_ms) + seconds * 1000))
  until "$@" >/dev/null 2>&1; do
    if (($(now_ms) >= deadline)); then
      echo "guest-init: gave up waiting for $what after $seconds s" >&2
      return 1
    fi
    nap 0.05
  done
}

finish() {
  local status=$?
  set +e
  trap - EXIT
  [[ -s /tmp/bluetoothd.log ]] && cp /tmp/bluetoothd.log "$R/bluetoothd.log"
  [[ -s /tmp/dbus.log ]] && cp /tmp/dbus.log "$R/dbus.log"
  dmesg >"$R/dmesg.log" 2>&1
  if [[ -n "${btmon_pid:-}" && "$(cat "$R/test.rc" 2>/dev/null)" != 0 ]]; then
    kill "$btmon_pid" 2>/dev/null
    nap 0.3
    [[ -s /tmp/btmon.snoop ]] && cp /tmp/btmon.snoop "$R/btmon.snoop"
  fi
  if [[ ! -f "$R/test.rc" ]]; then
    echo "guest-init: stopped before the test finished (stage $(cat "$R/stage" 2>/dev/null), status $status)" >&2
  fi
  read -r up _ </proc/uptime
  printf 'poweroff\t%s\n' "$up" >>"$R/timings.tsv"  # (the stage stays the last step reached)
  sync
  # Debian's /sbin/poweroff is systemctl, which needs systemd as PID 1; busybox's -f calls
  # reboot(2) directly. Should that fail, PID 1 exiting panics the kernel, and panic=-1 with
  # qemu -no-reboot ends qemu as well.
  busybox poweroff -f
  nap 10
  echo o >/proc/sysrq-trigger
  exit 1
}
trap finish EXIT

step guest-init

# --- mounts ------------------------------------------------------------------------------------
# /proc /sys /dev (moved from the initramfs) and /run (fresh tmpfs) are there already.
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620 devpts /dev/pts || true
mount -t tmpfs -o mode=1777 tmpfs /dev/shm || true
# debugfs: /sys/kernel/debug/bluetooth (l2cap channel list, hciN internals) for tests.
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
# The host's stored adapters and keys must not leak into the guest.
mount -t tmpfs -o mode=0700 tmpfs /var/lib/bluetooth || fail "cannot mount /var/lib/bluetooth"
echo blueota-vm >/proc/sys/kernel/hostname
ip link set lo up 2>/dev/null || true

# --- modules -----------------------------------------------------------------------------------
# The trimmed tree from the cache, bound where kmod looks for it. Loading bluetooth only now,
# after switch_root, matters: the kernel then loads the crypto helpers bluetooth asks for (ecdh,
# drbg, ...) through /sbin/modprobe from this tree; loaded inside the initramfs, the ecdh
# self-test fails and btvirt cannot open /dev/vhci.
[[ -n "${VM_KVER:-}" && -d "${VM_MODULES:-}" ]] || fail "VM_KVER/VM_MODULES not set or missing"
mkdir -p "/lib/modules/$VM_KVER"
mount --bind "$VM_MODULES" "/lib/modules/$VM_KVER" || fail "cannot bind the module tree"
# btvirt's emulated controllers do their AES and CMAC through AF_ALG sockets, and bluetoothd opens
# a BNEP socket. Loaded on demand, each module costs a modprobe run over 9p; for btvirt that
# happens while the kernel is already waiting for the new controller's answer to HCI Reset, and
# under load it waited more than its 2 s: "hci0: Opcode 0x0c03 failed: -110", and hci0 never
# reached bluetoothd. Loading them here, in one modprobe, takes them off that path.
timeout 60 modprobe -a bluetooth hci_vhci af_alg algif_hash algif_skcipher ecb cmac bnep ||
  fail "modprobe bluetooth hci_vhci (and the AF_ALG modules) failed"
wait_for 10 /dev/vhci test -c /dev/vhci || fail "no /dev/vhci after modprobe hci_vhci"
step modules

# --- the network (run.sh --forward-host-port only) ----------------------------------------------
# qemu's user-mode network with restrict=on: the guest reaches nothing but the guestfwd address
# (GUEST_HOST_URL). A static address in qemu's 10.0.2.0/24; the forwarded address is on-link.
if [[ -n "${VM_NET_ADDRESS:-}" ]]; then
  timeout 30 modprobe virtio_net || fail "modprobe virtio_net failed"
  wait_for 10 eth0 test -e /sys/class/net/eth0 || fail "no eth0 after modprobe virtio_net"
  ip addr add "$VM_NET_ADDRESS" dev eth0 || fail "ip addr add $VM_NET_ADDRESS dev eth0 failed"
  ip link set eth0 up || fail "ip link set eth0 up failed"
  step network
fi

# --- D-Bus -------------------------------------------------------------------------------------
dbus-uuidgen --ensure || fail "dbus-uuidgen --ensure failed"
mkdir -p /run/dbus
timeout 20 dbus-daemon --system --fork --nopidfile >/tmp/dbus.log 2>&1 || fail "dbus-daemon failed to start"
wait_for 10 "system bus" test -S /run/dbus/system_bus_socket || fail "no system bus socket"
step dbus

# --- the HCI and management traffic, for a failed test ------------------------------------------
# btmon records every controller's commands and events and bluetoothd's management commands into
# a btsnoop file on tmpfs (cheap: no decoding while the test runs). It reaches the results only
# when the test failed (finish): it is how a device "not seen" was told apart from a device not
# advertising (docs/BLUEZ.md). Read it with Wireshark or `btmon -r` (5.66 stops early on some).
btmon -w /tmp/btmon.snoop >/dev/null 2>&1 &
btmon_pid=$!

# --- the virtual LE controllers ----------------------------------------------------------------
# btvirt -L -lN: N LE-only controllers on /dev/vhci (hci0 ... hciN-1; two unless VM_CONTROLLERS
# says otherwise) joined by btvirt's emulated radio. It must keep running for the whole test.
controllers="${VM_CONTROLLERS:-2}"
[[ "$controllers" =~ ^[2-8]$ ]] || fail "VM_CONTROLLERS=$controllers: 2 to 8 controllers"
hcis=()
for ((i = 0; i < controllers; i++)); do hcis+=("hci$i"); done
last_hci="hci$((controllers - 1))"
btvirt="${VM_BTVIRT:-btvirt}"
[[ "$btvirt" == btvirt || -x "$btvirt" ]] || fail "VM_BTVIRT $btvirt is not an executable file"
btvirt_pid=
start_btvirt() {
  "$btvirt" -L "-l$controllers" >>"$R/btvirt.log" 2>&1 &
  btvirt_pid=$!
  # btvirt makes them in order: the last one there means all are.
  wait_for 15 "$last_hci" test -e "/sys/class/bluetooth/$last_hci"
}
start_btvirt || fail "btvirt made no $last_hci (see btvirt.log)"
step btvirt

# --- bluetoothd --------------------------------------------------------------------------------
bt_args=(-n)
if [[ -n "${BT_CONF:-}" ]]; then
  conf="$BT_CONF"
  [[ "$conf" == /* ]] || conf="$R/$conf"
  [[ -f "$conf" ]] || fail "BT_CONF $BT_CONF not found"
  bt_args+=(-f "$conf")
fi
if [[ -n "${BT_ARGS:-}" ]]; then
  IFS=, read -r -a extra <<<"$BT_ARGS"
  bt_args+=("${extra[@]}")
fi
echo "bluetoothd ${bt_args[*]}" >"$R/bluetoothd.cmdline"
# With -n bluetoothd also logs to stderr. The log stays on tmpfs until the end: writing every
# line through 9p costs a round trip each under emulation.
# Supervised as the Raspberry Pi kit runs it (Scripts/rpi/bluetooth-restart.conf: Restart=on-failure,
# RestartSec=2s): a bluetoothd that dies is started again 2 s later, and the warnings say so with
# its exit status (BlueZ 5.66 aborts, 134, in advertising.c's add_client_complete error path); a
# clean stop (SIGTERM: guest-e2e step 6 restarts it itself) is not.
supervise_bluetoothd() {
  local status
  while :; do
    status=0
    /usr/libexec/bluetooth/bluetoothd "${bt_args[@]}" >>/tmp/bluetoothd.log 2>&1 || status=$?
    ((status != 0 && status != 143)) || return 0
    echo "bluetoothd exited (status $status) and was started again 2 s later, as the kit's systemd drop-in does; its log: bluetoothd.log" >>"$R/warnings"
    nap 2
  done
}
: >/tmp/bluetoothd.log
supervise_bluetoothd &
bluetoothd_pid=$!

# adapters_state: "ready" when GetManagedObjects lists every /org/bluez/hciN (hci0 and hci1 by
# default), "powered" when all also say Powered true; one busctl run. Its output is one line:
# "/org/bluez/hci0" 10 "org.bluez.Adapter1" 17 "Address" s "00:AA:..." ... "Powered" b true ...
# "/org/bluez/hci1" ...
adapters_state() {
  local objects hci adapter state=powered
  objects="$(busctl --system --timeout=2 call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects 2>/dev/null)" || return 0
  for hci in "${hcis[@]}"; do
    [[ "$objects" == *"\"/org/bluez/$hci\""* ]] || return 0
  done
  for hci in "${hcis[@]}"; do
    adapter="${objects#*\"/org/bluez/$hci\"}"; adapter="${adapter%%\"/org/bluez/*}"
    [[ "$adapter" == *'"Powered" b true'* ]] || state=ready
  done
  echo "$state"
}
no_controllers() { ! compgen -G '/sys/class/bluetooth/hci*' >/dev/null; }
# An HCI command the kernel gave up on while setting a controller up ("hciN: Opcode 0x0c03
# failed: -110") leaves that controller out of bluetoothd for good.
init_timeouts() { dmesg | grep -cE 'Bluetooth: hci[0-9]+: Opcode 0x[0-9a-f]+ failed: -110' || true; }

# Wait for every adapter on D-Bus. Should a controller's setup time out anyway (a very busy host),
# restart btvirt (bluetoothd, still running, picks the new controllers up); at most twice.
attempt=1
deadline=$(($(now_ms) + 20000))
next_check=$(($(now_ms) + 2000))
timeouts_before="$(init_timeouts)"
while :; do
  state="$(adapters_state)"
  [[ -z "$state" ]] || break
  kill -0 "$bluetoothd_pid" 2>/dev/null || fail "bluetoothd exited (see bluetoothd.log)"
  restart=0
  if (($(now_ms) >= deadline)); then
    restart=1
  elif (($(now_ms) >= next_check)); then
    next_check=$(($(now_ms) + 2000))
    [[ "$(init_timeouts)" == "$timeouts_before" ]] || restart=1
  fi
  if ((restart)); then
    ((attempt < 3)) || fail "bluetoothd did not list /org/bluez/${hcis[*]} (btvirt started $attempt times; see dmesg.log)"
    echo "guest-init: a virtual controller did not come up; restarting btvirt" | tee -a "$R/warnings" >&2
    kill "$btvirt_pid" 2>/dev/null || true
    wait "$btvirt_pid" 2>/dev/null || true
    wait_for 10 "controllers gone" no_controllers || fail "the old controllers did not go away"
    attempt=$((attempt + 1))
    step "btvirt-restart-$attempt"
    timeouts_before="$(init_timeouts)"
    start_btvirt || fail "btvirt made no $last_hci (see btvirt.log)"
    deadline=$(($(now_ms) + 20000))
  fi
  nap 0.05
done
step bluetoothd-ready
# AutoEnable (the default) powers every adapter right away. A main.conf that turns it off leaves
# powering to the test, so this is only waited for briefly, and recorded.
powered() { [[ "$(adapters_state)" == powered ]]; }
if [[ "$state" == powered ]] || wait_for 5 "all ${#hcis[@]} adapters powered" powered; then
  step adapters-powered
fi

# --- the test ----------------------------------------------------------------------------------
[[ -n "${GUEST_TEST:-}" ]] || fail "no GUEST_TEST given"
[[ -x "$GUEST_TEST" ]] || fail "GUEST_TEST $GUEST_TEST is not an executable file"
# Leave 10 s for collecting logs and powering off within the host's timeout.
read -r up _ </proc/uptime
test_timeout=$((${VM_TIMEOUT:-120} - ${up%.*} - 10))
((test_timeout >= 5)) || test_timeout=5
echo "$test_timeout" >"$R/test.timeout"

export GUEST_RESULTS="$R" GUEST_PERIPHERAL=hci0 GUEST_CENTRAL=hci1 BLUEOTA_VM=1 GUEST_TEST_TIMEOUT="$test_timeout"
export GUEST_CONTROLLERS="$controllers"
export BT_CONF="${conf:-}"
unset VM_TIMEOUT VM_CONTROLLERS VM_BTVIRT VM_NET_ADDRESS BT_ARGS GUEST_TRACE
step test-start
cd /tmp
set +e
# The output goes to the share and to the serial console (run.sh --verbose shows it live).
timeout -k 5 "$test_timeout" "$GUEST_TEST" </dev/null 2>&1 | tee "$R/test.out" >/dev/console
rc=${PIPESTATUS[0]}
set -e
echo "$rc" >"$R/test.rc"
step test-end
# finish (the EXIT trap) collects the logs and powers off.
