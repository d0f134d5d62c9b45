#!/usr/bin/env bash
# Runs INSIDE the GRUB test VM as PID 1, once per boot, after the initramfs (./init) switch_roots into
# the host's root (read-only 9p under a tmpfs overlay). Started by GRUB's choice of menuentry; test.sh
# drives it. Not meant to be run by hand.
#
# Each boot: arms the i6300esb watchdog (busybox watchdog, fed every second, 5 s timeout: the
# systemd RuntimeWatchdogSec the Raspberry Pi docs recommend, without systemd), mounts the ESP (the
# grubenv GRUB reads and writes) on /boot/efi and the data partition (otad's slots and state) on
# /var/lib/otad, brings up eth0 (qemu user networking) and carries TCP port 7000 to otad's socket
# with socat, starts `otad run` with the GRUB backend, and then serves test.sh's requests: shell
# snippets dropped into GUEST_RESULTS/mailbox/*.req, answered in *.out and *.rc.
# Console lines for test.sh: BLUEOTA-BOOT slot=X (the slot GRUB booted, from /proc/cmdline),
# BLUEOTA-READY, BLUEOTA-HANG, BLUEOTA-RESTART (otad's restart command), BLUEOTA-OTAD-EXIT.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
here="$(dirname "$(readlink -f "$0")")"
R="$GUEST_RESULTS"
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
up() { local u _; read -r u _ </proc/uptime; echo "$u"; }
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" _ || true; }

slot=none
read -r -a words </proc/cmdline
for word in "${words[@]}"; do
  case "$word" in rauc.slot=*) slot="${word#rauc.slot=}" ;; esac
done
echo "BLUEOTA-BOOT slot=$slot up=$(up) cmdline=$(cat /proc/cmdline)"

# The watchdog, first: from here on a guest that stops feeding it is reset by the emulated i6300esb.
busybox watchdog -F -T 5 -t 1 /dev/watchdog &
watchdog_pid=$!

mkdir -p /dev/pts /boot/efi /var/lib/otad
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t vfat /dev/vda1 /boot/efi || echo "BLUEOTA-ERROR cannot mount the ESP"
mount -t ext4 /dev/vda2 /var/lib/otad || echo "BLUEOTA-ERROR cannot mount the data partition"
env_file=/boot/efi/boot/grub/grubenv
env_list="$(grub-editenv "$env_file" list 2>&1)"; env_rc=$?
echo "BLUEOTA-ENV rc=$env_rc ${env_list//$'\n'/ }"
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0

# A slot whose image carries the marker hangs before otad starts: the watchdog feeder is killed and
# nothing else runs (a kernel that stopped answering, as far as the watchdog can tell).
if [[ "$slot" == A || "$slot" == B ]] && grep -q BLUEOTA-HANG "/var/lib/otad/slot-${slot,,}.img" 2>/dev/null; then
  echo "BLUEOTA-HANG slot=$slot up=$(up): the feeder stops, the i6300esb resets the machine"
  kill -9 "$watchdog_pid"
  while :; do nap 100; done
fi

# A grubenv that grub-editenv calls invalid (zeroed, or cut to 0 bytes) is otad's to mend: its GRUB
# backend reads it as holding nothing and writes a new block in its place. Say so on the console.
if [[ -e "$env_file" && "$env_rc" != 0 ]]; then
  echo "BLUEOTA-ENV-INVALID $env_list"
fi

# grub-editenv as otad runs it: the real one, through the cut wrapper (which only acts when test.sh
# armed it with /run/cut-step).
mkdir -p /run/tools
ln -sf "$GUEST_ROOT/Images/firmware/health-check.sh" /run/health-check.sh
ln -sf "$here/grub-editenv-cut" /run/tools/grub-editenv
echo "=== boot: slot $slot, uptime $(up)" >>"$R/otad.log"
PATH="/run/tools:$PATH" "$BLUEOTA_BIN/otad" run --config "$here/otad.toml" --log-level debug >>"$R/otad.log" 2>&1 &
otad_pid=$!
for _ in $(seq 400); do [[ -S /run/otad.sock ]] && break; kill -0 "$otad_pid" 2>/dev/null || break; nap 0.05; done
socat TCP-LISTEN:7000,fork,reuseaddr UNIX-CONNECT:/run/otad.sock 2>>"$R/socat-guest.log" &
if [[ -S /run/otad.sock ]]; then
  echo "BLUEOTA-READY slot=$slot up=$(up)"
else
  echo "BLUEOTA-NOT-READY slot=$slot up=$(up)"
fi

mkdir -p "$R/mailbox"
otad_reported=0
while :; do
  for req in "$R"/mailbox/*.req; do
    [[ -e "$req" ]] || continue
    base="${req%.req}"
    # Taken off the queue first: a request that reboots the machine runs once.
    mv "$req" "$base.run" || continue
    bash "$base.run" >"$base.out.tmp" 2>&1
    echo "$?" >"$base.rc.tmp"
    mv "$base.out.tmp" "$base.out"
    rm -f "$base.run"
    mv "$base.rc.tmp" "$base.rc"
  done
  if ((!otad_reported)) && ! kill -0 "$otad_pid" 2>/dev/null; then
    wait "$otad_pid"
    echo "BLUEOTA-OTAD-EXIT rc=$? up=$(up)"
    otad_reported=1
  fi
  nap 0.1
done
