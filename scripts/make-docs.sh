#!/usr/bin/env bash
# `make docs`: the DocC documentation of every product as one static site in out/docs (issue 46).
#   1. every public symbol has documentation (scripts/check-docs.py over the symbol graphs), and
#      the public API is the one docs/api/public-symbols.txt lists,
#   2. the articles' code and output are the examples' (scripts/check-doc-snippets.py),
#   3. swift-docc-plugin builds the combined archive with warnings as errors (a broken link, a
#      parameter left undocumented), transformed for static hosting;
#   4. headless Chromium opens those articles' pages and finds that code and output on them
#      (scripts/check-doc-snippets.py --site).
# The site is written beside out/docs and moved into place only when all of it built.
# Serve it over HTTP (DocC pages read JSON): python3 -m http.server -d out/docs 8000, then
# http://127.0.0.1:8000/documentation/bubblekit/
set -euo pipefail
cd "$(dirname "$0")/.."
modules=(BubbleKit BubbleCore BubblePeople BubbleMedia BubbleText BubbleRender BubbleHTML BubbleImport BubbleStore BubbleServer)
swift package dump-symbol-graph --minimum-access-level public 2>&1 | grep -v 'prohibited flag' | tail -1
graphs=$(swift build --show-bin-path)/../symbolgraph
[ -d "$graphs" ] || graphs=.build/$(uname -m)-unknown-linux-gnu/symbolgraph
symbols=$(mktemp); trap 'rm -f "$symbols"' EXIT
python3 scripts/check-docs.py "$graphs" "${modules[@]:1}" --list "$symbols"
# The public API is what docs/api/public-symbols.txt lists: a change to it is made on purpose
# (BUBBLEKIT_UPDATE_API=1 rewrites the list) and goes into CHANGELOG.md.
if [ "${BUBBLEKIT_UPDATE_API:-}" = 1 ]; then
    { head -1 docs/api/public-symbols.txt; cat "$symbols"; } > docs/api/public-symbols.txt.new
    mv docs/api/public-symbols.txt.new docs/api/public-symbols.txt
elif ! diff -u <(tail -n +2 docs/api/public-symbols.txt) "$symbols"; then
    echo "docs: the public API differs from docs/api/public-symbols.txt (above: - removed, + added);" \
         "say so in CHANGELOG.md and run BUBBLEKIT_UPDATE_API=1 make docs" >&2
    exit 1
fi
python3 scripts/check-doc-snippets.py

targets=()
for m in "${modules[@]}"; do targets+=(--target "$m"); done
mkdir -p out
trap 'rm -rf out/docs.new "$symbols"' EXIT
rm -rf out/docs.new
swift package --allow-writing-to-directory out/docs.new generate-documentation \
    --enable-experimental-combined-documentation "${targets[@]}" \
    --output-path out/docs.new --transform-for-static-hosting --warnings-as-errors 2>&1 \
    | grep -v -E 'prohibited flag|^\[[0-9]+/[0-9]+\]' 
rm -rf out/docs
mv out/docs.new out/docs
echo "docs: out/docs ($(find out/docs/data/documentation -name '*.json' | wc -l) pages)"
python3 scripts/check-doc-snippets.py --site out/docs
