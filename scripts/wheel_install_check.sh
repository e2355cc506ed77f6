#!/usr/bin/env bash
# Installs dist/ketch-*.whl into a fresh venv (the system's python3) in a temporary directory and runs
# scripts/wheel_smoke.py there with only the venv on PATH (no compiler, no repository on sys.path).
# Prints the pip install time. Used by `make wheel-check` (CI).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
wheel=$(ls "$repo"/dist/ketch-*.whl)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --upgrade pip 2>&1 | { grep -v "^WARNING: Location" || true; }
start=$(date +%s.%N)
"$tmp/venv/bin/python" -m pip install -q "$wheel" 2>&1 | { grep -v "^WARNING: Location" || true; }
echo "wheel-check: pip install $(basename "$wheel") into a fresh venv: $(echo "$(date +%s.%N) - $start" | bc) s"
cp "$repo/scripts/wheel_smoke.py" "$tmp/smoke.py"
cd "$tmp"
if env -i HOME="$tmp" PATH="$tmp/venv/bin" bash -c 'command -v cc gcc g++ c++ clang' > /dev/null 2>&1; then
  echo "wheel-check: a compiler is on the smoke run's PATH" >&2
  exit 1
fi
env -i HOME="$tmp" PATH="$tmp/venv/bin" LANG=C.UTF-8 "$tmp/venv/bin/python" smoke.py
