#!/usr/bin/env bash
# Smoke test of an INSTALLED treeexplorer, run from outside the checkout: bash .ci/smoke.sh VENV_BIN WORKDIR
# (bundled datasets, a solve, a PNG export, and the app answering on / then stopping on Ctrl-C within 2 s).
set -euo pipefail
bin=$1
work=$2
mkdir -p "$work" && cd "$work"
tx="$bin/treeexplorer"

"$tx" --version
"$tx" datasets | tee datasets.txt
for name in balance-scale car iris monks-1 tic-tac-toe; do
  grep -q "^$name " datasets.txt || { echo "smoke: bundled dataset $name is missing" >&2; exit 1; }
done
"$tx" solve car --solver branches --max-depth 2 --out front.json
"$tx" export front.json --tree 1 --format png -o tree.png
"$bin/python" -c "import sys; d = open('tree.png', 'rb').read(); sys.exit(d[:8] != b'\x89PNG\r\n\x1a\n')"
"$tx" export front.json --tree 1 --format rules | grep -q "^IF "

"$tx" app --port 0 --no-show > app.log 2>&1 &
app=$!
url=""
for _ in $(seq 600); do  # the first session may compile CART's kernels (cold numba cache)
  url=$(grep -o 'http://[^ ]*' app.log | head -n 1 || true)
  [ -n "$url" ] && break
  kill -0 "$app" 2>/dev/null || break
  sleep 0.5
done
if [ -z "$url" ]; then
  cat app.log >&2
  kill -9 "$app" 2>/dev/null || true
  echo "smoke: treeexplorer app printed no address" >&2
  exit 1
fi
"$bin/python" - "$url" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=300) as r:
    page = r.read().decode("utf-8", "replace")
assert r.status == 200 and "treeexplorer" in page, page[:500]
print(f"smoke: {sys.argv[1]} answered {r.status} ({len(page)} bytes)")
PY
start=$(date +%s%N)
kill -INT "$app"
wait "$app" || true
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "smoke: app stopped ${ms} ms after Ctrl-C"
[ "$ms" -le 2000 ] || { echo "smoke: Ctrl-C took longer than 2 s" >&2; exit 1; }
echo "smoke: installed package OK"
