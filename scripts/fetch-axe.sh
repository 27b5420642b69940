#!/usr/bin/env bash
# axe-core for the accessibility tests (issue 63): PyPI's axe-playwright-python ships axe-core's
# axe.min.js (4.12.1); only that file is needed, so the wheel is downloaded without its
# dependencies and the file taken out of it, checked against its SHA-256, into .build/axe/.
# Does nothing when the file is there. The browser tests call it themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
target=.build/axe/axe.min.js
sha=84494fec757e4710dc751c8d7a636e457f4532f08f85c86dc9070133fbff53bc
if [[ -f $target ]] && echo "$sha  $target" | sha256sum -c --quiet 2>/dev/null; then exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" "axe-playwright-python==0.1.8" >&2 \
    || { echo "fetch-axe: cannot download axe-playwright-python 0.1.8 from PyPI (python3 -m pip; scripts/bootstrap.sh installs python3-pip)" >&2; exit 1; }
python3 - "$tmp" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[1] + "/axe.min.js", "wb") as out:
    out.write(z.read("axe_playwright_python/axe.min.js"))
PY
echo "$sha  $tmp/axe.min.js" | sha256sum -c --quiet || { echo "fetch-axe: axe.min.js is not the file expected (SHA-256 differs)" >&2; exit 1; }
mkdir -p .build/axe
mv "$tmp/axe.min.js" "$target.tmp" && mv "$target.tmp" "$target"
echo "fetch-axe: $target (axe-core 4.12.1)" >&2
