#!/usr/bin/env bash
# Tests Scripts/rpi/install.sh without touching the system: installs into temporary --destdir
# trees with two dummy executables standing in for otad and otactl, twice, and checks every file,
# its mode and its content, that the second run keeps an edited configuration and health check
# and leaves /etc/bluetooth/main.conf as the first run made it, that wrong arguments fail with a
# message, and that systemd-analyze accepts the units (skipped when it is not installed).
# Usage: Scripts/rpi/test-install.sh (from anywhere; no arguments; root not needed).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
install_sh="$here/install.sh"

# shellcheck source=Scripts/lib/harness.sh
source "$repo/Scripts/lib/harness.sh"
# One line for a check only when it fails (with the command's output): 128 PASS lines say nothing.
HARNESS_QUIET=1
harness_workdir work rpi-install
mode_of() { stat -c '%a' "$1"; }
# has_mode PATH MODE KIND: PATH exists, is a KIND (f or d) and has MODE.
has_mode() {
  if [[ "$3" == d ]]; then [[ -d "$1" ]] || { echo "$1 is not a directory"; return 1; }
  else [[ -f "$1" ]] || { echo "$1 is not a file"; return 1; }; fi
  [[ "$(mode_of "$1")" == "$2" ]] || { echo "$1 has mode $(mode_of "$1"), expected $2"; return 1; }
}
same() { cmp "$1" "$2"; }
contains() { grep -q -- "$2" "$1" || { echo "'$2' not in $1"; return 1; }; }
# run_install LOG ARGS...: runs install.sh, output into LOG; returns its status.
run_install() {
  local log="$1"
  shift
  bash "$install_sh" "$@" >"$log" 2>&1
}
# ini_values FILE SECTION KEY: the values of KEY's uncommented lines in [SECTION], one a line.
ini_values() {
  awk -v section="$2" -v key="$3" '
    /^[ \t]*\[/ { name = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", name); inside = (name == section); next }
    inside && $0 ~ ("^[ \t]*" key "[ \t]*=") { sub(/^[^=]*=[ \t]*/, ""); print }
  ' "$1"
}
ini_is() { # ini_is FILE SECTION KEY VALUE: exactly one uncommented KEY in [SECTION], equal to VALUE
  local values
  values="$(ini_values "$1" "$2" "$3")"
  [[ "$values" == "$4" ]] || { echo "[$2] $3 in $1: '${values//$'\n'/, }', expected exactly '$4'"; return 1; }
}

# --- the scripts themselves --------------------------------------------------------------------

for script in install.sh test-install.sh; do
  check "bash -n $script" bash -n "$here/$script"
done
check "sh -n health-check" sh -n "$here/health-check"
check "install.sh is executable" test -x "$install_sh"
check "health-check is executable" test -x "$here/health-check"
check "install.sh --help" bash "$install_sh" --help

if command -v python3 >/dev/null && python3 -c 'import tomllib' 2>/dev/null; then
  for toml in otad.toml otad-app-slots.toml; do
    check "$toml is valid TOML" python3 -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' "$here/$toml"
  done
  check "the configurations use only known sections and keys" python3 - "$here/otad.toml" "$here/otad-app-slots.toml" <<'EOF'
import sys, tomllib
tryboot, app = (tomllib.load(open(p, "rb")) for p in sys.argv[1:])
assert tryboot["boot"]["backend"] == "tryboot" and tryboot["boot"]["stage"] == "separate", tryboot["boot"]
assert tryboot["boot"]["attempts"] == 1, "tryboot is one-shot"
assert tryboot["boot"]["tryboot"]["boot-directory"] == "/boot/firmware"
assert app["boot"]["backend"] == "file" and app["boot"]["stage"] == "daemon", app["boot"]
assert app["slots"]["capacity"] and app["boot"]["link"].startswith("/var/lib/otad/")
allowed = {"slots": {"a", "b", "capacity"}, "state": {"directory"}, "bluez": {"adapter", "name", "require-pairing"},
           "boot": {"backend", "attempts", "stage", "health-check", "confirm", "health-timeout", "confirm-timeout", "restart", "link", "tryboot"},
           "log": {"level"}}
for config in (tryboot, app):
    for section, keys in config.items():
        assert section in allowed, f"unknown section [{section}]"
        assert set(keys) <= allowed[section], f"[{section}] unknown keys {set(keys) - allowed[section]}"
assert set(tryboot["boot"]["tryboot"]) == {"boot-directory", "partition-a", "partition-b"}
EOF
else
  skip "python3 with tomllib not found: skipping the TOML checks"
fi

if command -v python3 >/dev/null; then
  check "otad-dbus.conf is well-formed XML" python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$here/otad-dbus.conf"
elif command -v xmllint >/dev/null; then
  check "otad-dbus.conf is well-formed XML" xmllint --noout "$here/otad-dbus.conf"
else
  skip "neither python3 nor xmllint: skipping the XML check"
fi

# --- dummy binaries and a main.conf like Debian's ----------------------------------------------

bin="$work/bin"
mkdir -p "$bin"
make_dummies() { # make_dummies VERSION
  local program
  for program in otad otactl; do
    printf '#!/bin/sh\necho "%s %s $*"\n' "$program" "$1" >"$bin/$program"
    chmod 0755 "$bin/$program"
  done
}
make_dummies 1
# Man pages as Scripts/make-manuals.sh leaves them beside the binaries.
mkdir -p "$bin/man"
echo ".Dt OTAD 8" >"$bin/man/otad.8"
echo ".Dt OTACTL 1" >"$bin/man/otactl.1"

fixture="$work/main.conf"
cat >"$fixture" <<'EOF'
[General]
# Restricts all controllers to the specified transport.
#ControllerMode = dual
#Privacy = off

[Policy]
AutoEnable=false
EOF

# --- first run: tryboot, with the Bluetooth settings -------------------------------------------

dest="$work/root"
mkdir -p "$dest/etc/bluetooth"
cp "$fixture" "$dest/etc/bluetooth/main.conf"
chmod 0644 "$dest/etc/bluetooth/main.conf"

if run_install "$work/first.log" --destdir "$dest" --no-apt --binaries "$bin" --mode tryboot --bluetooth-config; then
  pass
else
  fail "first install.sh run failed:"; sed 's/^/    /' "$work/first.log" >&2
fi

expect_tree() { # the files every successful run leaves
  check "otad installed 0755" has_mode "$dest/usr/local/bin/otad" 755 f
  check "otactl installed 0755" has_mode "$dest/usr/local/bin/otactl" 755 f
  check "otad-boot.service installed 0644" has_mode "$dest/etc/systemd/system/otad-boot.service" 644 f
  check "otad.service installed 0644" has_mode "$dest/etc/systemd/system/otad.service" 644 f
  check "otad-boot.service is the shipped one" same "$here/otad-boot.service" "$dest/etc/systemd/system/otad-boot.service"
  check "otad.service is the shipped one" same "$here/otad.service" "$dest/etc/systemd/system/otad.service"
  check "otactl-gateway.service installed 0644, the shipped one" \
    same "$here/otactl-gateway.service" "$dest/etc/systemd/system/otactl-gateway.service"
  check "D-Bus policy installed 0644" has_mode "$dest/etc/dbus-1/system.d/otad.conf" 644 f
  check "the update locks' tmpfiles.d entry installed 0644, as shipped" has_mode "$dest/etc/tmpfiles.d/blueota-locks.conf" 644 f
  check "the update locks' directory: sticky, for the group blueota-lock" \
    contains "$dest/etc/tmpfiles.d/blueota-locks.conf" "d /run/blueota/locks 1770 root blueota-lock -"
  check "bluetooth.service's drop-in installed 0644, the shipped one" \
    same "$here/bluetooth-restart.conf" "$dest/etc/systemd/system/bluetooth.service.d/blueota-restart.conf"
  check "the drop-in restarts bluetoothd when it fails, in [Service]" python3 - \
    "$dest/etc/systemd/system/bluetooth.service.d/blueota-restart.conf" <<'PY'
import configparser, sys
unit = configparser.ConfigParser(strict=True, interpolation=None)
unit.optionxform = str
unit.read(sys.argv[1])
assert unit.sections() == ["Service"], unit.sections()
assert unit["Service"]["Restart"] == "on-failure" and unit["Service"]["RestartSec"] == "2s", dict(unit["Service"])
PY
  check "D-Bus policy is the shipped one" same "$here/otad-dbus.conf" "$dest/etc/dbus-1/system.d/otad.conf"
  check "/etc/otad is 0755" has_mode "$dest/etc/otad" 755 d
  check "otad.toml installed 0644" has_mode "$dest/etc/otad/otad.toml" 644 f
  check "/var/lib/otad is 0700" has_mode "$dest/var/lib/otad" 700 d
  check "/usr/local/lib/otad is 0755" has_mode "$dest/usr/local/lib/otad" 755 d
  check "health check installed 0755" has_mode "$dest/usr/local/lib/otad/health-check" 755 f
  local file
  for file in otad.toml otad-app-slots.toml bluetooth-main.conf health-check; do
    check "doc copy of $file 0644" has_mode "$dest/usr/local/share/doc/blueota/$file" 644 f
    check "doc copy of $file is current" same "$here/$file" "$dest/usr/local/share/doc/blueota/$file"
  done
  if [[ -f "$repo/docs/RASPBERRY-PI.md" ]]; then
    check "RASPBERRY-PI.md installed 0644" has_mode "$dest/usr/local/share/doc/blueota/RASPBERRY-PI.md" 644 f
  fi
  check "no temporary files left behind" test -z "$(find "$dest" -name '.install.*' -o -name '.main.conf.*')"
  check "no systemd enablement in a --destdir run" test ! -e "$dest/etc/systemd/system/multi-user.target.wants"
}
expect_tree
check "otad is the given binary" same "$bin/otad" "$dest/usr/local/bin/otad"
# Completions are what the installed programs print for --generate-completion-script SHELL.
completion_is() { # completion_is FILE PROGRAM SHELL
  has_mode "$1" 644 f || return 1
  [[ "$(cat "$1")" == "$2 1 --generate-completion-script $3" ]] || { echo "$1: $(cat "$1")"; return 1; }
}
share="$dest/usr/local/share"
for program in otad otactl; do
  check "$program's bash completion" completion_is "$share/bash-completion/completions/$program" "$program" bash
  check "$program's zsh completion" completion_is "$share/zsh/site-functions/_$program" "$program" zsh
  check "$program's fish completion" completion_is "$share/fish/vendor_completions.d/$program.fish" "$program" fish
done
check "otad(8) installed 0644" has_mode "$share/man/man8/otad.8" 644 f
check "otad(8) is the given page" same "$bin/man/otad.8" "$share/man/man8/otad.8"
check "otactl(1) installed 0644" has_mode "$share/man/man1/otactl.1" 644 f
check "otactl(1) is the given page" same "$bin/man/otactl.1" "$share/man/man1/otactl.1"
check "otactl is the given binary" same "$bin/otactl" "$dest/usr/local/bin/otactl"
check "the tryboot configuration was installed" same "$here/otad.toml" "$dest/etc/otad/otad.toml"
check "the example health check was installed" same "$here/health-check" "$dest/usr/local/lib/otad/health-check"
check "units run otad boot with the config" contains "$dest/etc/systemd/system/otad-boot.service" \
  "ExecStart=/usr/local/bin/otad boot --config /etc/otad/otad.toml"
check "units run otad run with the config" contains "$dest/etc/systemd/system/otad.service" \
  "ExecStart=/usr/local/bin/otad run --config /etc/otad/otad.toml"

btconf="$dest/etc/bluetooth/main.conf"
check "main.conf: original kept" same "$fixture" "$btconf.blueota-orig"
check "main.conf: ControllerMode set over its commented default" ini_is "$btconf" General ControllerMode le
check "main.conf: the commented default line was replaced" test "$(grep -c 'ControllerMode' "$btconf")" = 1
check "main.conf: other comments kept" contains "$btconf" "#Privacy = off"
check "main.conf: AutoEnable replaced" ini_is "$btconf" Policy AutoEnable true
check "main.conf: [GATT] added with Channels" ini_is "$btconf" GATT Channels 1
check "main.conf: [GATT] KeySize" ini_is "$btconf" GATT KeySize 16
check "main.conf: one [GATT] section" test "$(grep -c '^\[GATT\]' "$btconf")" = 1
check "main.conf: mode kept" has_mode "$btconf" 644 f
# shellcheck disable=SC2016 # the script is for the inner bash
check "main.conf: no key of the snippet left out" bash -c '
  section=""; status=0
  while IFS= read -r line; do
    if [[ "$line" =~ ^\[([A-Za-z]+)\] ]]; then section="${BASH_REMATCH[1]}"
    elif [[ "$line" =~ ^([A-Za-z]+)[[:space:]]*= ]]; then
      grep -Eq "^${BASH_REMATCH[1]} = " "$2" || { echo "${BASH_REMATCH[1]} missing"; status=1; }
    fi
  done <"$1"; exit $status' _ "$here/bluetooth-main.conf" "$btconf"

# --- second run: the user edited things; another --mode; new binaries --------------------------

echo "# edited on the device" >>"$dest/etc/otad/otad.toml"
cp "$dest/etc/otad/otad.toml" "$work/otad.toml.edited"
echo "# edited health check" >>"$dest/usr/local/lib/otad/health-check"
cp "$dest/usr/local/lib/otad/health-check" "$work/health-check.edited"
cp "$btconf" "$work/main.conf.after-first"
make_dummies 2

if run_install "$work/second.log" --destdir "$dest" --no-apt --binaries "$bin" --mode app-slots --bluetooth-config; then
  pass
else
  fail "second install.sh run failed:"; sed 's/^/    /' "$work/second.log" >&2
fi
expect_tree
check "second run: the configuration was not overwritten" same "$work/otad.toml.edited" "$dest/etc/otad/otad.toml"
check "second run: says it kept the configuration" contains "$work/second.log" "keeping the existing /etc/otad/otad.toml"
check "second run: warns that --mode disagrees with the kept file" contains "$work/second.log" "going by the file"
check "second run: the health check was not overwritten" same "$work/health-check.edited" "$dest/usr/local/lib/otad/health-check"
check "second run: otad replaced by the new build" same "$bin/otad" "$dest/usr/local/bin/otad"
check "second run: otactl replaced by the new build" same "$bin/otactl" "$dest/usr/local/bin/otactl"
check "second run: main.conf unchanged" same "$work/main.conf.after-first" "$btconf"
check "second run: main.conf original still the first one" same "$fixture" "$btconf.blueota-orig"
check "second run: says main.conf already had the settings" contains "$work/second.log" "already has the peripheral settings"

# --- a third run with no binaries keeps the installed ones -------------------------------------

if run_install "$work/third.log" --destdir "$dest" --no-apt; then pass; else fail "third run (no --binaries) failed"; sed 's/^/    /' "$work/third.log" >&2; fi
check "third run: kept the installed otad" same "$bin/otad" "$dest/usr/local/bin/otad"
check "third run: says so" contains "$work/third.log" "keeping the installed otad and otactl"

# --- app-slot mode on a fresh tree -------------------------------------------------------------

app="$work/app"
if run_install "$work/app.log" --destdir "$app" --no-apt --binaries "$bin" --mode app-slots; then pass; else fail "app-slots run failed"; sed 's/^/    /' "$work/app.log" >&2; fi
check "app-slots: the app-slot configuration was installed" same "$here/otad-app-slots.toml" "$app/etc/otad/otad.toml"
check "app-slots: main.conf untouched without --bluetooth-config" test ! -e "$app/etc/bluetooth/main.conf"

# --- binaries that do not run here (another machine's), without man pages ----------------------

foreign="$work/foreign"
mkdir -p "$foreign"
for program in otad otactl; do
  printf '#!/bin/sh\nexit 126\n' >"$foreign/$program"
  chmod 0755 "$foreign/$program"
done
if run_install "$work/foreign.log" --destdir "$work/f" --no-apt --binaries "$foreign"; then pass; else fail "run with foreign binaries failed"; sed 's/^/    /' "$work/foreign.log" >&2; fi
check "foreign binaries: says there are no completions" contains "$work/foreign.log" "otad does not run here: no bash completion"
check "foreign binaries: no completion file" test ! -e "$work/f/usr/local/share/bash-completion/completions/otad"
check "foreign binaries: says where man pages come from" contains "$work/foreign.log" "Scripts/make-manuals.sh"

# --- the real main.conf of this machine, when there is one -------------------------------------

if [[ -f /etc/bluetooth/main.conf ]]; then
  real="$work/real"
  mkdir -p "$real/etc/bluetooth"
  cp /etc/bluetooth/main.conf "$real/etc/bluetooth/main.conf"
  if run_install "$work/real.log" --destdir "$real" --no-apt --binaries "$bin" --bluetooth-config; then pass; else fail "run on this machine's main.conf failed"; sed 's/^/    /' "$work/real.log" >&2; fi
  check "this machine's main.conf: ControllerMode" ini_is "$real/etc/bluetooth/main.conf" General ControllerMode le
  check "this machine's main.conf: Channels" ini_is "$real/etc/bluetooth/main.conf" GATT Channels 1
  check "this machine's main.conf: KeySize" ini_is "$real/etc/bluetooth/main.conf" GATT KeySize 16
  check "this machine's main.conf: AutoEnable" ini_is "$real/etc/bluetooth/main.conf" Policy AutoEnable true
  check "this machine's main.conf: only the four lines changed" test "$(diff /etc/bluetooth/main.conf "$real/etc/bluetooth/main.conf" | grep -c '^>')" -le 4
else
  skip "no /etc/bluetooth/main.conf here: skipping the check against a real one"
fi

# --- wrong arguments fail, with a message ------------------------------------------------------

refuses() { # refuses MESSAGE ARGS...: install.sh exits non-zero and says MESSAGE
  local message="$1" status=0
  shift
  bash "$install_sh" "$@" >"$work/refused.log" 2>&1 || status=$?
  [[ "$status" != 0 ]] || { echo "install.sh $* succeeded"; return 1; }
  grep -q -- "$message" "$work/refused.log" || { echo "no '$message' in:"; cat "$work/refused.log"; return 1; }
}
check "refuses a missing --binaries directory" refuses "is not a directory" --destdir "$work/r1" --no-apt --binaries "$work/nowhere"
mkdir -p "$work/half"
cp "$bin/otad" "$work/half/otad"
check "refuses a --binaries directory without otactl" refuses "otactl not found" --destdir "$work/r2" --no-apt --binaries "$work/half"
check "refuses an unknown --mode" refuses "must be tryboot or app-slots" --destdir "$work/r3" --no-apt --binaries "$bin" --mode ab
check "refuses an unknown option" refuses "unknown argument" --destdir "$work/r4" --frobnicate
check "refuses a fresh install without binaries" refuses "no otad and otactl to install" --destdir "$work/r5" --no-apt
check "refuses --binaries with --build" refuses "not both" --destdir "$work/r6" --binaries "$bin" --build
if [[ "$(id -u)" != 0 ]]; then
  check "refuses to install into / without root" refuses "run as root" --no-apt --binaries "$bin"
fi

# --- systemd-analyze verify --------------------------------------------------------------------

if command -v systemd-analyze >/dev/null; then
  # The units as installed, with ExecStart= pointing at the staged dummy otad (verify wants the
  # program to exist); everything else unchanged.
  units="$work/units"
  mkdir -p "$units"
  for unit in otad.service otad-boot.service otactl-gateway.service; do
    sed -e "s|/usr/local/bin/otad |$dest/usr/local/bin/otad |g" -e "s|/usr/local/bin/otactl |$dest/usr/local/bin/otactl |g" \
      "$dest/etc/systemd/system/$unit" >"$units/$unit"
  done
  verify() {
    local output status=0
    output="$(systemd-analyze verify "$units/otad-boot.service" "$units/otad.service" \
      "$units/otactl-gateway.service" 2>&1)" || status=$?
    if [[ "$status" != 0 ]] || grep -q "otad" <<<"$output"; then
      echo "systemd-analyze verify (exit $status):"
      echo "$output"
      return 1
    fi
  }
  check "systemd-analyze verify accepts otad.service, otad-boot.service and otactl-gateway.service" verify
else
  skip "systemd-analyze not found: skipping systemd-analyze verify"
fi

# The counting line Scripts/test.sh reads; a check left out (its tool missing here) is one skipped.
harness_counts "rpi install"
