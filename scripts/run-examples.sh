#!/usr/bin/env bash
# Builds and runs the example packages (Examples/, issue 46), which depend on BubbleKit by path
# as a user's package would, and checks what they make:
#   RenderConversation → conversation.png (a 750-pixel-wide PNG), .pdf, .svg, .html
#   BubbleFrames       → the bubble frames of its sample WhatsApp export, equal to
#                        Examples/BubbleFrames/expected.txt (BUBBLEKIT_UPDATE_GOLDEN=1 rewrites it).
# Both build in one scratch folder, EXAMPLES_SCRATCH (default .build-examples), so what they
# share is compiled once. `make test` on a fresh checkout (CI) gives them the package's own
# `.build` once its tests have run: SwiftPM then reuses the packages compiled there and the
# examples cost ~1 minute instead of ~2. Not where `.build` is a working tree's build: each
# switch between the package and an example as the root recompiles BubbleKit's modules (~2½
# minutes a `make test`). Exit 1 when a build, a run or a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export FONTCONFIG_FILE=${FONTCONFIG_FILE:-$PWD/Sources/BubbleText/Fonts/fonts.conf}
scratch=${EXAMPLES_SCRATCH:-.build-examples}
out=$(mktemp -d /tmp/bubblekit-examples-XXXXXX)
trap 'rm -rf "$out"' EXIT

for example in RenderConversation BubbleFrames; do
    swift build --package-path "Examples/$example" --scratch-path "$scratch" 2>&1 | grep -v 'prohibited flag' || true
    test "${PIPESTATUS[0]}" -eq 0 || { echo "examples: $example does not build" >&2; exit 1; }
done
bin=$(swift build --package-path Examples/BubbleFrames --scratch-path "$scratch" --show-bin-path)

"$bin/RenderConversation" "$out"
for ext in png pdf svg html; do
    test -s "$out/conversation.$ext" || { echo "examples: RenderConversation wrote no conversation.$ext" >&2; exit 1; }
done
python3 - "$out" <<'PY'
import struct, sys
out = sys.argv[1]
png = open(f"{out}/conversation.png", "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n", "conversation.png is not a PNG"
width, height = struct.unpack(">II", png[16:24])
assert width == 750, f"conversation.png is {width} pixels wide; expected 750 (375 points at 2x)"
assert open(f"{out}/conversation.pdf", "rb").read(5) == b"%PDF-", "conversation.pdf is not a PDF"
svg = open(f"{out}/conversation.svg", encoding="utf-8").read()
assert "<svg" in svg and "little bubble" in svg, "conversation.svg lacks its text"
html = open(f"{out}/conversation.html", encoding="utf-8").read()
assert "Bubbles respect" in html, "conversation.html lacks its text"
print(f"examples: RenderConversation: PNG {width}×{height} px, PDF, SVG and HTML")
PY

expected=Examples/BubbleFrames/expected.txt
"$bin/BubbleFrames" "Examples/BubbleFrames/Sample/WhatsApp Chat with Ann Lee.txt" "Ben Ode" > "$out/frames.txt"
if [ "${BUBBLEKIT_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$out/frames.txt" "$expected"; echo "examples: wrote $expected"
elif ! diff -u "$expected" "$out/frames.txt"; then
    echo "examples: BubbleFrames printed other frames than $expected" >&2; exit 1
fi
echo "examples: BubbleFrames: $(grep -c ' line' "$out/frames.txt") bubbles as expected"
