#!/usr/bin/env bash
# Makes a Raspberry Pi (Raspberry Pi OS bookworm, BlueZ 5.66) an updatable BlueOTA device:
# installs the runtime packages, otad and otactl, the systemd units, the D-Bus policy and a
# configuration, and enables the services. Run as root; non-interactive; running it again is
# fine (an existing /etc/otad/otad.toml and health check are never overwritten).
# docs/RASPBERRY-PI.md walks through the whole setup.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: install.sh [--binaries DIR | --build] [--mode tryboot|app-slots] [options]

  --binaries DIR        take otad and otactl from DIR (built elsewhere for this machine's
                        architecture, e.g. .build/release after
                        `swift build -c release --static-swift-stdlib`), and their man pages
                        from DIR/man when there (Scripts/make-manuals.sh DIR makes them)
  --build               build them here with `swift build -c release --static-swift-stdlib`
                        (needs the Swift 6 toolchain from swift.org on PATH or in /opt/swift)
                        Neither: keep the otad and otactl already installed.
  --mode MODE           the configuration to start from when there is none yet:
                        tryboot   (default) A/B boot partitions through the firmware's tryboot
                        app-slots two slot files under /var/lib/otad for one application
  --bluetooth-config    also set the peripheral's keys of bluetooth-main.conf in
                        /etc/bluetooth/main.conf (original kept as main.conf.blueota-orig) and
                        restart bluetooth.service
  --start               start the services now (default: enable them for the next boot)
  --adopt VERSION       record the running slot's bytes, flashed by hand, as firmware VERSION
                        (`otad adopt`): the first update over BLE is then a delta against
                        them. Only for a slot that does not change while it runs (an app
                        slot, a read-only root); with --start, after the boot stage
  --no-apt              do not run apt-get
  --destdir DIR         stage every file under DIR instead of /, and skip apt-get and
                        systemctl (for tests and packaging); root is not needed
  -h, --help            this text
EOF
}

say() { echo "install: $*"; }
warn() { echo "install: warning: $*" >&2; }
die() { echo "install: error: $*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

binaries=""
build=0
mode=""
destdir=""
apt=1
bluetooth_config=0
start=0
adopt=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --binaries) [[ $# -ge 2 ]] || die "--binaries needs a directory"; binaries="$2"; shift 2 ;;
    --binaries=*) binaries="${1#*=}"; shift ;;
    --build) build=1; shift ;;
    --mode) [[ $# -ge 2 ]] || die "--mode needs tryboot or app-slots"; mode="$2"; shift 2 ;;
    --mode=*) mode="${1#*=}"; shift ;;
    --destdir) [[ $# -ge 2 ]] || die "--destdir needs a directory"; destdir="$2"; shift 2 ;;
    --destdir=*) destdir="${1#*=}"; shift ;;
    --no-apt) apt=0; shift ;;
    --bluetooth-config) bluetooth_config=1; shift ;;
    --start) start=1; shift ;;
    --adopt) [[ $# -ge 2 ]] || die "--adopt needs the version the slot runs, like 1.0.0"; adopt="$2"; shift 2 ;;
    --adopt=*) adopt="${1#*=}"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done

case "${mode:-tryboot}" in
  tryboot | app-slots) ;;
  *) die "--mode must be tryboot or app-slots, not '$mode'" ;;
esac
[[ -n "$binaries" && "$build" == 1 ]] && die "give --binaries DIR or --build, not both"

# --- where to install --------------------------------------------------------------------------

staging=0
root=""
if [[ -n "$destdir" ]]; then
  mkdir -p "$destdir" || die "cannot create --destdir $destdir"
  root="$(cd "$destdir" && pwd)"
  [[ "$root" != "/" ]] || die "--destdir / is the live system: leave --destdir out instead"
  staging=1
  apt=0
  [[ "$start" == 0 ]] || die "--start cannot be used with --destdir"
elif [[ "$(id -u)" != 0 ]]; then
  die "run as root (sudo $0 ...), or stage the files with --destdir DIR"
fi

owner=()
[[ "$(id -u)" == 0 ]] && owner=(-o root -g root)

bindir="$root/usr/local/bin"
libdir="$root/usr/local/lib/otad"
docdir="$root/usr/local/share/doc/blueota"
# Beside /usr/local/bin, where bash-completion (XDG_DATA_DIRS), Debian's zsh (fpath), fish (its
# vendor directories) and man (MANDATORY_MANPATH) look.
sharedir="$root/usr/local/share"
unitdir="$root/etc/systemd/system"
dbusdir="$root/etc/dbus-1/system.d"
confdir="$root/etc/otad"
config="$confdir/otad.toml"
statedir="$root/var/lib/otad"
btconf="$root/etc/bluetooth/main.conf"

for file in otad.service otad-boot.service otactl-gateway.service otad-dbus.conf otad.toml otad-app-slots.toml \
  bluetooth-main.conf bluetooth-restart.conf health-check blueota-locks.conf; do
  [[ -f "$here/$file" ]] || die "$here/$file is missing: run install.sh from a complete Scripts/rpi"
done

# --- the system --------------------------------------------------------------------------------

if [[ "$staging" == 0 ]]; then
  if [[ -r /etc/os-release ]]; then
    # shellcheck disable=SC1091
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
    [[ "$codename" == bookworm ]] ||
      warn "made for Raspberry Pi OS bookworm (Debian 12); this is '${codename:-unknown}'"
  fi
  command -v systemctl >/dev/null || die "systemctl not found: otad's services need systemd"
fi

runtime_packages=(bluez dbus libdbus-1-3 zlib1g libzstd1 libstdc++6 libgcc-s1 rfkill)
build_packages=(pkg-config zlib1g-dev libzstd-dev libdbus-1-dev libc6-dev)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

if [[ "$apt" == 1 ]]; then
  command -v apt-get >/dev/null || die "apt-get not found (use --no-apt and install the packages yourself)"
  wanted=("${runtime_packages[@]}")
  [[ "$build" == 1 ]] && wanted+=("${build_packages[@]}")
  # The Raspberry Pi's own controller is attached by pi-bluetooth; Raspberry Pi OS ships it.
  if [[ -e /proc/device-tree/model ]] && grep -qa "Raspberry Pi" /proc/device-tree/model &&
    apt-cache show pi-bluetooth >/dev/null 2>&1; then
    wanted+=(pi-bluetooth)
  fi
  missing=()
  for package in "${wanted[@]}"; do installed "$package" || missing+=("$package"); done
  if [[ ${#missing[@]} -gt 0 ]]; then
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed (network? see above)"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null ||
      die "apt-get install ${missing[*]} failed (see above)"
  else
    say "Debian packages already installed: ${wanted[*]}"
  fi
fi

# --- the binaries ------------------------------------------------------------------------------

find_swift() {
  command -v swift >/dev/null 2>&1 && return 0
  local candidate
  for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
    if [[ -x "$candidate/swift" ]]; then
      PATH="$candidate:$PATH"
      return 0
    fi
  done
  return 1
}

if [[ "$build" == 1 ]]; then
  [[ -f "$repo/Package.swift" ]] || die "--build needs the BlueOTA sources around Scripts/rpi ($repo has no Package.swift)"
  find_swift || die "--build: no Swift toolchain. Install Swift 6 for Debian 12 aarch64 from swift.org
       (into /opt/swift or on PATH), or build elsewhere and use --binaries DIR (docs/RASPBERRY-PI.md)"
  say "building otad and otactl (release, static Swift runtime); the first build takes a while"
  (cd "$repo" && swift build -c release --static-swift-stdlib --product otad &&
    swift build -c release --static-swift-stdlib --product otactl) || die "swift build failed (see above)"
  binaries="$(cd "$repo" && swift build -c release --static-swift-stdlib --show-bin-path)"
  "$repo/Scripts/make-manuals.sh" "$binaries" ||
    warn "the man pages could not be made (see above); everything else installs"
fi

# The ELF machine of a file (aarch64, arm, x86_64, ...), or "" when it is not ELF.
elf_machine() {
  local magic machine
  magic="$(od -An -c -N4 "$1" 2>/dev/null | tr -d ' ')"
  [[ "$magic" == '177ELF' ]] || return 0
  machine="$(od -An -tu2 -j18 -N2 "$1" | tr -d ' ')"
  case "$machine" in
    183) echo aarch64 ;;
    40) echo arm ;;
    62) echo x86_64 ;;
    *) echo "machine-$machine" ;;
  esac
}

this_machine() {
  case "$(uname -m)" in
    aarch64 | arm64) echo aarch64 ;;
    armv6l | armv7l | armhf | arm) echo arm ;;
    *) uname -m ;;
  esac
}

if [[ -n "$binaries" ]]; then
  [[ -d "$binaries" ]] || die "--binaries $binaries is not a directory"
  for program in otad otactl; do
    [[ -f "$binaries/$program" ]] || die "$binaries/$program not found (build with: swift build -c release --static-swift-stdlib)"
    [[ -x "$binaries/$program" ]] || die "$binaries/$program is not executable"
    if [[ "$staging" == 0 ]]; then
      machine="$(elf_machine "$binaries/$program")"
      if [[ -n "$machine" && "$machine" != "$(this_machine)" ]]; then
        die "$binaries/$program is built for $machine, this machine is $(this_machine): build on an arm64 machine (docs/RASPBERRY-PI.md)"
      fi
    fi
  done
elif [[ ! -x "$bindir/otad" || ! -x "$bindir/otactl" ]]; then
  die "no otad and otactl to install: give --binaries DIR (built with
       swift build -c release --static-swift-stdlib) or --build (docs/RASPBERRY-PI.md)"
fi

# --- installing --------------------------------------------------------------------------------

# put SOURCE DESTINATION MODE: copies through a temporary file and a rename, so that a running
# otad is never overwritten in place and a half-copied file never appears.
put() {
  local source="$1" destination="$2" mode="$3"
  local directory temporary
  directory="$(dirname "$destination")"
  mkdir -p "$directory" || die "cannot create $directory"
  temporary="$(mktemp "$directory/.install.XXXXXX")" || die "cannot write in $directory"
  if ! install "${owner[@]}" -m "$mode" "$source" "$temporary"; then
    rm -f "$temporary"
    die "cannot install $destination"
  fi
  mv -f "$temporary" "$destination" || { rm -f "$temporary"; die "cannot install $destination"; }
}

directory() { # directory PATH MODE
  install -d "${owner[@]}" -m "$2" "$1" || die "cannot create $1"
}

if [[ -n "$binaries" ]]; then
  put "$binaries/otad" "$bindir/otad" 0755
  put "$binaries/otactl" "$bindir/otactl" 0755
  say "installed otad and otactl from $binaries into ${bindir#"$root"}"
else
  say "keeping the installed otad and otactl in ${bindir#"$root"}"
fi

put "$here/otad-boot.service" "$unitdir/otad-boot.service" 0644
put "$here/otad.service" "$unitdir/otad.service" 0644
# The gateway's unit, not enabled: docs/FLEET.md says how to set it up and enable it.
put "$here/otactl-gateway.service" "$unitdir/otactl-gateway.service" 0644
put "$here/otad-dbus.conf" "$dbusdir/otad.conf" 0644
# The update locks' directory, made at each boot (applications in the group blueota-lock write it).
directory "$root/etc/tmpfiles.d" 0755
put "$here/blueota-locks.conf" "$root/etc/tmpfiles.d/blueota-locks.conf" 0644
# bluetoothd started again when it dies (Debian's unit does not): bluetooth-restart.conf says why.
directory "$unitdir/bluetooth.service.d" 0755
put "$here/bluetooth-restart.conf" "$unitdir/bluetooth.service.d/blueota-restart.conf" 0644

directory "$confdir" 0755
directory "$statedir" 0700
directory "$libdir" 0755

case "${mode:-tryboot}" in
  tryboot) example="$here/otad.toml" ;;
  app-slots) example="$here/otad-app-slots.toml" ;;
esac
# App-slot mode on a device never updated: slot A holds nothing to run yet, and otad refuses a
# missing slot A (it would otherwise claim firmware there), so it starts as an empty file.
if [[ "${mode:-tryboot}" == app-slots && ! -e "$statedir/slot-a.img" ]]; then
  install "${owner[@]}" -m 0644 /dev/null "$statedir/slot-a.img" || die "cannot create $statedir/slot-a.img"
  say "created an empty ${statedir#"$root"}/slot-a.img: push the first version"
fi
if [[ -e "$config" ]]; then
  say "keeping the existing ${config#"$root"} (the examples are in ${docdir#"$root"})"
else
  put "$example" "$config" 0644
  say "installed ${config#"$root"} for ${mode:-tryboot}: review it before the next boot"
fi

if [[ -e "$libdir/health-check" ]]; then
  say "keeping the existing ${libdir#"$root"}/health-check"
else
  put "$here/health-check" "$libdir/health-check" 0755
fi

for file in otad.toml otad-app-slots.toml bluetooth-main.conf health-check; do
  put "$here/$file" "$docdir/$file" 0644
done
if [[ -f "$repo/docs/RASPBERRY-PI.md" ]]; then
  put "$repo/docs/RASPBERRY-PI.md" "$docdir/RASPBERRY-PI.md" 0644
fi
if [[ -f "$repo/docs/FLEET.md" ]]; then
  put "$repo/docs/FLEET.md" "$docdir/FLEET.md" 0644
fi

# --- shell completions and man pages ----------------------------------------------------------

# Completions come from the installed programs themselves (swift-argument-parser's
# --generate-completion-script), so they always match them; a program that cannot run here (built
# for another machine, in a staged install) leaves its completions out, with a warning.
completions=0
for program in otad otactl; do
  for shell in bash zsh fish; do
    case "$shell" in
      bash) destination="$sharedir/bash-completion/completions/$program" ;;
      zsh) destination="$sharedir/zsh/site-functions/_$program" ;;
      fish) destination="$sharedir/fish/vendor_completions.d/$program.fish" ;;
    esac
    script="$(mktemp)"
    if "$bindir/$program" --generate-completion-script "$shell" >"$script" 2>/dev/null && [[ -s "$script" ]]; then
      put "$script" "$destination" 0644
      completions=$((completions + 1))
    else
      warn "$program does not run here: no $shell completion for it (install on the device itself)"
    fi
    rm -f "$script"
  done
done
((completions == 0)) || say "installed $completions shell completions (bash, zsh, fish) under ${sharedir#"$root"}"

# Man pages: otad's in section 8 (a daemon), otactl's in section 1, made where the binaries were
# built (Scripts/make-manuals.sh DIR writes DIR/man; --build does it).
if [[ -n "$binaries" ]]; then
  if [[ -f "$binaries/man/otad.8" && -f "$binaries/man/otactl.1" ]]; then
    put "$binaries/man/otad.8" "$sharedir/man/man8/otad.8" 0644
    put "$binaries/man/otactl.1" "$sharedir/man/man1/otactl.1" 0644
    say "installed the man pages otad(8) and otactl(1)"
  else
    warn "no man pages in $binaries/man: Scripts/make-manuals.sh $binaries makes them (on any machine)"
  fi
fi

# --- /etc/bluetooth/main.conf ------------------------------------------------------------------

# ini_set FILE SECTION KEY VALUE: sets KEY in [SECTION]: replaces the key's line, or else its first
# commented-out line ("#Key = default"), or else adds it under the section header; adds the
# section at the end when there is none. Running it again changes nothing.
ini_set() {
  local file="$1" section="$2" key="$3" value="$4" temporary
  temporary="$(mktemp "$(dirname "$file")/.main.conf.XXXXXX")" || die "cannot write in $(dirname "$file")"
  awk -v section="$section" -v key="$key" -v value="$value" '
    { line[NR] = $0 }
    END {
      header = 0; active = 0; commented = 0; inside = 0
      for (i = 1; i <= NR; i++) {
        l = line[i]
        if (l ~ /^[ \t]*\[[^]]*\][ \t]*$/) {
          name = l; gsub(/^[ \t]*\[|\][ \t]*$/, "", name)
          inside = (name == section)
          if (inside && !header) header = i
          continue
        }
        if (!inside) continue
        if (!active && l ~ ("^[ \t]*" key "[ \t]*=")) active = i
        if (!commented && l ~ ("^[ \t]*#[ \t]*" key "[ \t]*=")) commented = i
      }
      target = active ? active : commented
      for (i = 1; i <= NR; i++) {
        if (i == target) print key " = " value; else print line[i]
        if (!target && i == header) print key " = " value
      }
      if (!header) { if (NR > 0) print ""; print "[" section "]"; print key " = " value }
    }' "$file" >"$temporary" || { rm -f "$temporary"; die "cannot edit $file"; }
  chmod --reference="$file" "$temporary" 2>/dev/null || chmod 0644 "$temporary"
  mv -f "$temporary" "$file"
}

if [[ "$bluetooth_config" == 1 ]]; then
  mkdir -p "$(dirname "$btconf")"
  if [[ ! -e "$btconf" ]]; then
    [[ "$staging" == 1 ]] || warn "${btconf} did not exist (is bluez installed?): creating it"
    : >"$btconf"
    chmod 0644 "$btconf"
  elif [[ ! -e "$btconf.blueota-orig" ]]; then
    cp -p "$btconf" "$btconf.blueota-orig"
  fi
  before="$(cat "$btconf")"
  section=""
  while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line%%$'\r'}"
    if [[ "$line" =~ ^\[([A-Za-z]+)\][[:space:]]*$ ]]; then
      section="${BASH_REMATCH[1]}"
    elif [[ "$line" =~ ^([A-Za-z]+)[[:space:]]*=[[:space:]]*(.*[^[:space:]])[[:space:]]*$ ]]; then
      [[ -n "$section" ]] || die "bluetooth-main.conf: ${BASH_REMATCH[1]} outside a section"
      ini_set "$btconf" "$section" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
    fi
  done <"$here/bluetooth-main.conf"
  if [[ "$(cat "$btconf")" == "$before" ]]; then
    say "${btconf#"$root"} already has the peripheral settings"
  else
    say "set the peripheral settings in ${btconf#"$root"} (the original is main.conf.blueota-orig)"
    if [[ "$staging" == 0 && -d /run/systemd/system ]]; then
      systemctl restart bluetooth.service || warn "could not restart bluetooth.service (journalctl -u bluetooth)"
    fi
  fi
fi

# --- systemd -----------------------------------------------------------------------------------

# What the configuration in place says: "separate" runs otad-boot.service, "daemon" does not.
stage="$(awk '
  /^[ \t]*\[/ { inside = ($0 ~ /^[ \t]*\[boot\][ \t]*(#.*)?$/); next }
  inside && /^[ \t]*stage[ \t]*=/ { sub(/^[^=]*=[ \t]*"/, ""); sub(/".*/, ""); print; exit }
' "$config")"
case "$stage" in
  separate | daemon) ;;
  "") stage=separate ;;
  *) die "${config#"$root"}: [boot] stage = \"$stage\": expected \"separate\" or \"daemon\"" ;;
esac
if [[ -n "$mode" ]]; then
  expected=separate
  [[ "$mode" == app-slots ]] && expected=daemon
  [[ "$stage" == "$expected" ]] ||
    warn "--mode $mode, but ${config#"$root"} (kept) says stage = \"$stage\": going by the file"
fi

if [[ "$staging" == 1 ]]; then
  [[ -z "$adopt" ]] || warn "--adopt: not in a staged install (it reads the device's running slot)"
  say "staged under $root (no apt-get, no systemctl)"
  exit 0
fi

if ldd "$bindir/otad" 2>/dev/null | grep -q "not found"; then
  warn "otad needs libraries this system does not have:"
  ldd "$bindir/otad" | grep "not found" >&2
  warn "build with --static-swift-stdlib (the Swift runtime is then inside the binary)"
fi

# The group whose members may hold update locks, and the directory now rather than at the next boot.
getent group blueota-lock >/dev/null || groupadd --system blueota-lock ||
  warn "could not create the group blueota-lock: applications cannot hold update locks (docs/OTAD.md)"
systemd-tmpfiles --create /etc/tmpfiles.d/blueota-locks.conf 2>/dev/null ||
  warn "systemd-tmpfiles could not create /run/blueota/locks now: it will at the next boot"

# dbus-daemon notices new policy files itself; a reload makes sure. Without a running systemd
# (a chroot building an image) enabling still works; reloading is for the next boot.
if [[ -d /run/systemd/system ]]; then
  systemctl reload dbus.service 2>/dev/null || true
  systemctl daemon-reload
else
  warn "systemd is not running here: enabling the units for the next boot only"
  [[ "$start" == 0 ]] || die "--start needs a running systemd"
fi
systemctl enable otad.service >/dev/null
if [[ "$stage" == separate ]]; then
  systemctl enable otad-boot.service >/dev/null
  say "enabled otad-boot.service and otad.service"
else
  if systemctl is-enabled --quiet otad-boot.service 2>/dev/null; then
    systemctl disable otad-boot.service >/dev/null
    say "disabled otad-boot.service (stage = \"daemon\": each otad start is a boot)"
  fi
  say "enabled otad.service"
fi

# What the tryboot layout needs, to warn early rather than at the first update.
if [[ "$stage" == separate ]] && grep -Eq '^[[:space:]]*backend[[:space:]]*=[[:space:]]*"tryboot"' "$config"; then
  bootdir="$(sed -n 's/^[[:space:]]*boot-directory[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$config" | head -n 1)"
  bootdir="${bootdir:-/boot/firmware}"
  [[ -f "$bootdir/autoboot.txt" ]] ||
    warn "no $bootdir/autoboot.txt: the tryboot A/B layout is not set up yet (docs/RASPBERRY-PI.md)"
  while read -r slot; do
    [[ -n "$slot" ]] || continue
    [[ -e "$slot" ]] || warn "slot $slot does not exist"
    if awk -v device="$slot" '$1 == device { found = 1 } END { exit !found }' /proc/mounts; then
      warn "slot $slot is mounted: unmount it and take it out of /etc/fstab, otad writes it raw"
    fi
  done < <(awk '
    /^[ \t]*\[/ { inside = ($0 ~ /^[ \t]*\[slots\]/); next }
    inside && /^[ \t]*[ab][ \t]*=/ { sub(/^[^=]*=[ \t]*"/, ""); sub(/".*/, ""); print }
  ' "$config")
fi

if [[ "$start" == 1 && "$stage" == separate ]]; then
  systemctl start otad-boot.service || die "otad-boot.service failed: journalctl -b -u otad-boot"
fi
if [[ -n "$adopt" ]]; then
  # Reads the whole running slot once (a partition: a few seconds per GiB) and records its length,
  # CRC32 and version in the boot state; a running otad is told.
  "$bindir/otad" adopt --config "$config" --image-version "$adopt" ||
    die "otad adopt failed (see above): the slot stays unknown, and the first update sends everything"
fi
if [[ "$start" == 1 ]]; then
  systemctl restart otad.service || die "otad.service failed: journalctl -b -u otad"
  say "started; follow it with: journalctl -f -u otad"
else
  say "done. Review /etc/otad/otad.toml, then reboot (or run again with --start)."
fi
