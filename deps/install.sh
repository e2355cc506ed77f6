#!/usr/bin/env bash
# Installs what `make` needs and is missing: Debian packages from deps/apt.txt, then .venv with the pinned
# Python packages from deps/requirements.txt. Idempotent and quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < deps/apt.txt
if (( ${#missing[@]} )); then
  echo "deps: installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
stamp=.venv/.requirements.stamp
if [[ ! -x .venv/bin/python ]]; then
  echo "deps: creating .venv"
  python3 -m venv .venv
fi
if [[ ! -f $stamp ]] || ! cmp -s deps/requirements.txt "$stamp"; then
  echo "deps: installing pinned Python packages"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r deps/requirements.txt
  cp deps/requirements.txt "$stamp"
fi
