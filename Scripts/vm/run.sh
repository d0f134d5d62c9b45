#!/usr/bin/env bash
# Runs a test script against the REAL BlueZ stack (kernel bluetooth + hci_vhci, dbus-daemon,
# bluetoothd 5.66, virtual LE controllers from `btvirt -L -l2`, or -lN) inside a small qemu VM under
# software emulation (TCG). The guest's root is the host's own / (read-only 9p under a tmpfs
# overlay), so binaries built on the host run there unchanged. See Scripts/vm/README.md.
#
#   Scripts/vm/run.sh TEST_SCRIPT [options]
#
#   --eatt on|off        on (default): [GATT] Channels = 3, bluetoothd's default, EATT in use;
#                        off: Channels = 1, one ATT bearer (write commands arrive in order)
#   --bt-conf FILE       a whole main.conf for bluetoothd instead (not together with --eatt)
#   --bt-args "ARGS"     extra bluetoothd arguments, e.g. "-d" for its debug log
#   --controllers N      N virtual LE controllers, hci0 ... hciN-1 (2 to 8; default 2); more
#                        than 2 run a btvirt built with btvirt-handles.patch (build-btvirt.sh)
#   --env KEY=VAL        added to the test's environment (repeatable; KEY in upper case, no
#                        spaces or quotes: it travels on the kernel command line)
#   --timeout SECONDS    wall-time limit of the whole VM (default 120); the test gets what is
#                        left after boot, minus 10 s for collecting logs
#   --forward-host-port PORT
#                        give the guest one way out: a virtio NIC on qemu's user-mode network
#                        with restrict=on (nothing else leaves the guest), where TCP to
#                        10.0.2.100:80 reaches 127.0.0.1:PORT on the host (guestfwd, one socat per
#                        connection); the guest is 10.0.2.15/24 and the test gets GUEST_HOST_URL
#                        (http://10.0.2.100, without :80: goosebit's links leave the default port
#                        out, and otactl gateway takes a link with another origin for another
#                        server). Without it the VM has no network (-nic none)
#   --results DIR        write the results into DIR (created, must be empty, always kept)
#   --keep               keep the temporary results folder even when the test passes
#   --verbose            stream the VM's serial console (kernel, test output) while it runs
#
# The test runs as root in the VM, in /tmp, with GUEST_RESULTS (a writable folder shared with the
# host, the same path on both sides: what the test writes there survives), GUEST_PERIPHERAL=hci0,
# GUEST_CENTRAL=hci1, BLUEOTA_VM=1, GUEST_TEST_TIMEOUT (seconds it has), BT_CONF (the main.conf
# bluetoothd runs with), GUEST_HOST_URL with --forward-host-port, and every --env. Everything else
# it writes vanishes with the VM.
#
# Exit status: the test's own exit status when it ran to the end; 124 when the guest stopped it at
# its time limit; 125 when the harness failed (prepare failed, the VM did not boot, the stack did
# not come up, qemu killed by the timeout): the message names the console log; 2: usage error.
# Results (a temp folder, removed after a pass unless --keep/--results): timings.tsv, test.out,
# test.rc, bluetoothd.log, btvirt.log, dmesg.log, console.log, qemu.cmdline, main.conf; and
# btmon.snoop (every controller's HCI traffic, btsnoop) when the test failed.
#
# Environment: BLUEOTA_VM_CACHE (cache folder, default ~/.cache/blueota-vm), BLUEOTA_VM_ACCEL
# (qemu -accel, default tcg,thread=multi; kvm where it works), BLUEOTA_VM_TRACE=1 (guest-init.sh
# traces its every command into trace.log). Always a VM: the harness never uses the host's own
# Bluetooth, even where the host kernel has one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { sed -n '7,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die_usage() { echo "run.sh: $*" >&2; usage >&2; exit 2; }
harness_failure() { echo "run.sh: HARNESS FAILURE: $*" >&2; exit 125; }

test_script=""
eatt=""
bt_conf=""
bt_args=""
controllers=""
timeout_s=120
results=""
keep=0
verbose=0
forward_port=""
extra_env=()
while (($#)); do
  case "$1" in
    --eatt) [[ "${2:-}" == on || "${2:-}" == off ]] || die_usage "--eatt takes on or off"; eatt="$2"; shift 2 ;;
    --bt-conf) [[ -f "${2:-}" ]] || die_usage "--bt-conf: no such file: ${2:-}"; bt_conf="$(realpath "$2")"; shift 2 ;;
    --bt-args) bt_args="${2-}"; shift 2 ;;
    --controllers) [[ "${2:-}" =~ ^[2-8]$ ]] || die_usage "--controllers takes 2 to 8"; controllers="$2"; shift 2 ;;
    --env)
      # Upper-case keys only: the kernel keeps lower-case words it knows (root=, init=, ...) and
      # treats KEY.PARAM=VAL as a module parameter.
      [[ "${2:-}" =~ ^[A-Z][A-Z0-9_]*=[^[:space:]\"\']*$ ]] || die_usage "--env takes KEY=VAL: KEY in upper case, no spaces or quotes"
      case "${2%%=*}" in
        GUEST_*|VM_*|BT_CONF|BT_ARGS|BLUEOTA_VM) die_usage "--env ${2%%=*} is set by the harness" ;;
      esac
      extra_env+=("$2"); shift 2 ;;
    --timeout)
      if ! [[ "${2:-}" =~ ^[0-9]+$ ]] || (("$2" < 30)); then
        die_usage "--timeout takes whole seconds, at least 30"
      fi
      timeout_s="$2"; shift 2 ;;
    --results) [[ -n "${2:-}" ]] || die_usage "--results takes a folder"; results="$2"; shift 2 ;;
    --forward-host-port)
      if ! [[ "${2:-}" =~ ^[1-9][0-9]{0,4}$ ]] || (("$2" > 65535)); then
        die_usage "--forward-host-port takes a TCP port"
      fi
      forward_port="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --verbose) verbose=1; shift ;;
    -h|--help) sed -n '2,47p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die_usage "unknown option $1" ;;
    *) [[ -z "$test_script" ]] || die_usage "only one TEST_SCRIPT"; test_script="$1"; shift ;;
  esac
done
[[ -n "$test_script" ]] || die_usage "no TEST_SCRIPT"
# The kernel hands /init at most 32 environment variables; the harness uses 11 of them (13 with
# --controllers, 2 more with --forward-host-port).
((${#extra_env[@]} <= 16)) || die_usage "at most 16 --env"
[[ -f "$test_script" && -x "$test_script" ]] || die_usage "TEST_SCRIPT $test_script is not an executable file"
test_script="$(realpath "$test_script")"
[[ -z "$bt_conf" || -z "$eatt" ]] || die_usage "--bt-conf and --eatt together: set [GATT] Channels in the file"
[[ -n "$bt_conf" || -n "$eatt" ]] || eatt=on
# Words on the kernel command line are split at spaces: paths must not contain any.
for value in "$test_script" "$here" "$bt_conf" "$bt_args"; do
  [[ "$value" != *[\"\']* ]] || die_usage "quotes are not allowed in paths or --bt-args: $value"
done
[[ "$test_script$here$bt_conf" != *[[:space:]]* ]] || die_usage "paths with spaces cannot be passed to the VM"

now_ms() { echo "$(($(date +%s%N) / 1000000))"; }
seconds_since() { awk -v ms="$(($(now_ms) - $1))" 'BEGIN { printf "%.1f", ms / 1000 }'; }
wall_start="$(now_ms)"

# --- cache: packages, kernel, modules, initramfs ----------------------------------------------
"$here/prepare.sh" || harness_failure "prepare.sh failed"
cache="${BLUEOTA_VM_CACHE:-$HOME/.cache/blueota-vm}"
# shellcheck source=/dev/null
source "$cache/vm.env"
# Stock btvirt 5.66 cannot carry more than one link per controller (build-btvirt.sh says why):
# more controllers than the two that hold one link between them get the patched one.
btvirt=""
if [[ -n "$controllers" ]] && ((controllers > 2)); then
  btvirt="$("$here/build-btvirt.sh" "$cache")" || harness_failure "build-btvirt.sh failed"
fi

# --- results folder: the writable share -------------------------------------------------------
if [[ -n "$results" ]]; then
  mkdir -p "$results"
  results="$(realpath "$results")"
  [[ -z "$(ls -A "$results")" ]] || die_usage "--results $results is not empty"
  keep=1
else
  results="$(mktemp -d "${TMPDIR:-/tmp}/blueota-vm.XXXXXX")"
fi
[[ "$results" != *[[:space:]]* ]] || die_usage "the results path has spaces: $results"

qemu_pid=""
# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() {
  local status=$?
  if [[ -n "$qemu_pid" ]] && kill -0 "$qemu_pid" 2>/dev/null; then
    kill "$qemu_pid" 2>/dev/null || true   # timeout passes it on to qemu
    wait "$qemu_pid" 2>/dev/null || true
  fi
  if [[ "$keep" == 0 && "$status" == 0 ]]; then
    rm -rf "$results"
  elif [[ -d "$results" ]]; then
    echo "run.sh: results kept in $results"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -n "$eatt" ]]; then
  # bluetoothd 5.66 default is Channels = 3 (EATT with up to 2 extra bearers); 1 turns EATT off.
  channels=3
  [[ "$eatt" == on ]] || channels=1
  printf '# written by Scripts/vm/run.sh --eatt %s\n[GATT]\nChannels = %s\n' "$eatt" "$channels" >"$results/main.conf"
  bt_conf="$results/main.conf"
fi

# --- the VM -----------------------------------------------------------------------------------
# KEY=VAL words after the kernel's own parameters reach /init, and through switch_root the guest
# script, as environment variables.
append=(console=ttyS0 panic=-1 quiet loglevel=3 "ginit=$here/guest-init.sh"
        "GUEST_TEST=$test_script" "GUEST_RESULTS=$results" "VM_KVER=$VM_KVER" "VM_MODULES=$VM_MODULES"
        "VM_TIMEOUT=$timeout_s" "BT_CONF=$bt_conf" ${BLUEOTA_VM_TRACE:+GUEST_TRACE=1}
        ${controllers:+VM_CONTROLLERS=$controllers} ${btvirt:+VM_BTVIRT=$btvirt})
# The guest's one way out (--forward-host-port): guest-init.sh loads virtio_net and gives eth0
# VM_NET_ADDRESS (qemu's user-mode network is 10.0.2.0/24; no DHCP client needed).
guest_host="10.0.2.100:80"
if [[ -n "$forward_port" ]]; then
  # Port 80 left out of the URL: servers (goosebit) leave the default port out of the links they
  # send, and otactl gateway follows only links of the origin it was given.
  append+=("VM_NET_ADDRESS=10.0.2.15/24" "GUEST_HOST_URL=http://${guest_host%:80}")
fi
if [[ -n "$bt_args" ]]; then
  # One word on the kernel command line: the arguments joined with commas.
  read -r -a words <<<"$bt_args"
  append+=("BT_ARGS=$(IFS=,; echo "${words[*]}")")
fi
append+=("${extra_env[@]}")
# x86's kernel command line holds 2048 bytes.
((${#append[*]} > 0 && $(echo -n "${append[*]}" | wc -c) < 2000)) || die_usage "the kernel command line is too long (long paths or --env values)"

# KVM does not work on every machine this runs on (it does not here); TCG always does.
accel="${BLUEOTA_VM_ACCEL:-tcg,thread=multi}"
# No network unless --forward-host-port: then user-mode networking with restrict=on, which isolates
# the guest from the host and the world but for the guestfwd rule. A guestfwd to a chardev
# (tcp:HOST:PORT) holds one stream for qemu's lifetime, opened at boot; cmd: runs a socat for every
# connection the guest makes, so HTTP clients that open several connections work.
nic=(-nic none)
if [[ -n "$forward_port" ]]; then
  nic=(-nic "user,model=virtio-net-pci,restrict=on,guestfwd=tcp:$guest_host-cmd:socat - TCP:127.0.0.1:$forward_port")
fi
# shellcheck disable=SC2054  # the commas belong to qemu's option values
qemu=(qemu-system-x86_64 -accel "$accel" -cpu max -smp 2 -m 2048 -nographic -no-reboot -monitor none "${nic[@]}"
      -kernel "$VM_KERNEL" -initrd "$VM_INITRD" -append "${append[*]}"
      -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
      -virtfs "local,path=$results,mount_tag=results,security_model=none,multidevs=remap")
printf '%q ' "${qemu[@]}" >"$results/qemu.cmdline"
echo >>"$results/qemu.cmdline"

console="$results/console.log"
echo "run.sh: booting the VM ($(basename "$test_script"), eatt ${eatt:-from --bt-conf},${controllers:+ $controllers controllers,}${forward_port:+ $guest_host -> 127.0.0.1:$forward_port,} timeout ${timeout_s} s)"
# The guest powers itself off; panic=-1 plus -no-reboot end qemu on a guest crash too; timeout ends
# it in any other case. stdin is not the terminal: -nographic would put a tty into raw mode.
vm_start="$(now_ms)"
timeout -k 5 "$timeout_s" "${qemu[@]}" </dev/null >"$console" 2>&1 &
qemu_pid=$!
if [[ "$verbose" == 1 ]]; then
  # Without the escape sequences SeaBIOS and the kernel send (one of them resets the terminal).
  tail -n +1 -f --pid="$qemu_pid" "$console" | sed -u -e 's/\x1bc//g' -e 's/\x1b\[[?0-9;]*[A-Za-z]//g' &
fi
qemu_status=0
wait "$qemu_pid" || qemu_status=$?
qemu_pid=""
wait  # for tail
vm_wall="$(seconds_since "$vm_start")"
total_wall="$(seconds_since "$wall_start")"

# --- report -----------------------------------------------------------------------------------
echo "== guest steps (seconds since the guest kernel started)"
if [[ -s "$results/timings.tsv" ]]; then
  awk -F'\t' '{ printf "  %-20s %7.2f\n", $1, $2 }' "$results/timings.tsv"
else
  echo "  (none recorded)"
fi
[[ ! -s "$results/warnings" ]] || sed 's/^/  warning: /' "$results/warnings"
if [[ -f "$results/test.out" && "$verbose" == 0 ]]; then
  echo "== test output ($(basename "$test_script"))"
  cat "$results/test.out"
fi

if [[ ! -f "$results/test.rc" ]]; then
  why="the VM stopped at stage '$(cat "$results/stage" 2>/dev/null || echo 'before the initramfs')'"
  [[ ! -s "$results/error" ]] || why+=": $(tr '\n' ' ' <"$results/error")"
  ((qemu_status != 124 && qemu_status != 137)) || why+=" (qemu killed after ${timeout_s} s)"
  echo "run.sh: HARNESS FAILURE: the test did not run to the end; $why. Console log: $console" >&2
  exit 125
fi
rc="$(cat "$results/test.rc")"
test_timeout="$(cat "$results/test.timeout" 2>/dev/null || echo '?')"
walls="wall ${total_wall} s, of which the VM ${vm_wall} s"
if [[ "$rc" == 0 ]]; then
  echo "run.sh: PASS ($walls)"
elif [[ "$rc" == 124 || "$rc" == 137 ]]; then
  echo "run.sh: FAIL: the test hit its ${test_timeout} s limit in the guest ($walls; console $console)" >&2
  rc=124
else
  echo "run.sh: FAIL: the test exited with $rc ($walls; console $console)" >&2
fi
if [[ "$rc" != 0 ]]; then
  # What bluetoothd said last, and whether it died: a CI log shows only this output's tail.
  grep -h "bluetoothd exited" "$results/warnings" 2>/dev/null | sed 's/^/run.sh: /' >&2 || true
  if [[ -s "$results/bluetoothd.log" ]]; then
    echo "run.sh: bluetoothd.log, its last 12 lines:" >&2
    tail -n 12 "$results/bluetoothd.log" | sed 's/^/  /' >&2
  fi
fi
exit "$rc"
