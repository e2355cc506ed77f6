#!/usr/bin/env bash
# Installs what `make` needs and is missing. `deps/install.sh demo`: the Debian packages of
# deps/apt.txt and a .venv with deps/requirements-demo.txt (build the extension, run the demo);
# `deps/install.sh test` (the default): also deps/apt-test.txt and deps/requirements.txt (tests,
# benchmarks, every optional feature). Idempotent and quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-test}"
case "$mode" in
  demo) apt_lists=(deps/apt.txt); requirements=deps/requirements-demo.txt ;;
  test) apt_lists=(deps/apt.txt deps/apt-test.txt); requirements=deps/requirements.txt ;;
  *) echo "deps/install.sh: want 'demo' or 'test', got '$mode'" >&2; exit 2 ;;
esac
missing=()
for list in "${apt_lists[@]}"; do
  while read -r pkg; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < "$list"
done
if (( ${#missing[@]} )); then
  echo "deps: installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [[ ! -x .venv/bin/python ]]; then
  echo "deps: creating .venv"
  python3 -m venv .venv
fi
# One stamp per requirements file: its content when it was last installed.
stamp=".venv/.$(basename "$requirements" .txt).stamp"
if [[ ! -f $stamp ]] || ! cat deps/requirements-demo.txt "$requirements" | cmp -s - "$stamp"; then
  echo "deps: installing pinned Python packages ($requirements)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r "$requirements"
  cat deps/requirements-demo.txt "$requirements" > "$stamp"
fi
