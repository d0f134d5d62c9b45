#!/usr/bin/env bash
# A screenshot of goosebit's devices page (and of its rollouts page, next to it as
# OUT-rollouts.png), logged in as the admin, with Debian's headless chromium and selenium.
#
#   Scripts/fleet/screenshot.sh DIR PORT OUT.png
#
# DIR and PORT are those given to `goosebit.sh start` (DIR tells http from https: DIR/tls).
# Installs chromium and chromium-driver (apt) and selenium (pinned, <repo>/.build-selenium, as
# Scripts/setup.sh does for the lab test) when missing.
set -euo pipefail
if (($# != 3)); then echo "usage: $0 DIR PORT OUT.png" >&2; exit 2; fi
dir="$1" port="$2" out="$3"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
selenium_version=4.43.0  # the same pin as Scripts/setup.sh
venv="$root/.build-selenium"

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  echo "screenshot: installing chromium chromium-driver" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver </dev/null >&2
fi
installed="$("$venv/bin/python" -m pip show selenium 2>/dev/null | sed -n 's/^Version: //p' || true)"
if [[ "$installed" != "$selenium_version" ]]; then
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "selenium==$selenium_version" </dev/null >&2
fi

scheme=http
[[ -d "$dir/tls" ]] && scheme=https
url="$scheme://127.0.0.1:$port"
user="${GOOSEBIT_ADMIN_USER:-admin}" password="${GOOSEBIT_ADMIN_PASSWORD:-goosebit-admin}"
"$venv/bin/python" "$root/Scripts/fleet/screenshot_goosebit.py" "$url" "$user" "$password" "$out" devices
"$venv/bin/python" "$root/Scripts/fleet/screenshot_goosebit.py" "$url" "$user" "$password" "${out%.png}-rollouts.png" rollouts
