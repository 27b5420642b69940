#!/usr/bin/env bash
# Module boundaries (issue 19) and the async store and server (issue 38), checked on every `make test`: data flows one way,
#   BubbleCore → BubbleText → BubbleHTML, BubbleCore → BubbleText → BubbleRender,
#   BubbleCore → BubblePeople → BubbleMedia, BubbleCore → BubbleStats, BubbleCore → BubbleMarkup (issue 65: the core keeps the
#   model, layout, themes, nine-slice and the text protocol; features live beside it),
# and nothing that measures text or writes HTML reaches the painting stack (Cairo, gdk-pixbuf, libpng).
# Prints each import that crosses a boundary, with its file and line, and exits 1 if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
# forbid MODULE-FOLDER PATTERN REASON
forbid() {
    local folder=$1 pattern=$2 reason=$3 hits
    hits=$(grep -rnE "^\s*(@testable\s+)?import\s+($pattern)\b" "Sources/$folder" --include='*.swift' || true)
    if [[ -n "$hits" ]]; then
        echo "boundary: Sources/$folder must not import $pattern ($reason):" >&2
        echo "$hits" | sed 's/^/  /' >&2
        status=1
    fi
}

painting='CCairo|CGdkPixbuf|CPNGShim'
features='BubblePeople|BubbleMedia|BubbleStats|BubbleMarkup'
above='BubbleText|BubbleHTML|BubbleRender|BubbleImport|BubbleStore|BubbleServer'
native="$painting|CPango|CPangoMeasure|CLineBreak|CLibXML2|CZlibInflate"
forbid BubbleCore "$native|$features|$above" "pure Swift: model, layout, themes, nine-slice, the text protocol"
forbid BubblePeople "$native|BubbleMedia|BubbleStats|$above" "pure Swift: phone numbering, vCards, persons (BubbleCore only)"
forbid BubbleMedia "$native|BubbleStats|$above" "pure Swift: probing media files, finding a message's files (BubbleCore, BubblePeople)"
forbid BubbleStats "$native|BubblePeople|BubbleMedia|BubbleMarkup|$above" "pure Swift: statistics, charts and the book's plan as scenes (BubbleCore only)"
forbid BubbleMarkup "$native|BubblePeople|BubbleMedia|BubbleStats|$above" "pure Swift: chat markup read into spans (BubbleCore only)"
forbid BubbleText "$painting|$features|BubbleHTML|BubbleRender|BubbleImport" "measures text; drawing is BubbleRender's"
forbid BubbleHTML "$painting|BubbleRender|BubbleImport" "writes HTML; pictures come through PictureDecoder"
forbid BubbleRender "BubbleHTML|BubbleImport" "paints; HTML and importers are beside it, not under it"
forbid BubbleImport "$painting|CPango|BubbleText|BubbleHTML|BubbleRender|BubbleStore" "reads exports into the model"
forbid BubbleStore "$painting|CPango|CLibXML2|BubbleMedia|BubbleStats|BubbleText|BubbleHTML|BubbleRender|BubbleImport" "keeps conversations: BubbleCore, BubblePeople and BubbleMarkup with GRDB (SQLite) and postgres-nio (PostgreSQL) only"
forbid BubbleServer "$painting|BubbleRender|BubbleImport" "serves the store; pictures come through PictureDecoder"
forbid BubbleKit "BubbleHTML|BubbleImport|BubbleStore|BubbleServer" "the BubbleKit product is BubbleCore, BubbleText and BubbleRender: the others are products of their own"

# The core stays small: what grows is a feature, and features get targets of their own.
core_lines=$(find Sources/BubbleCore -name '*.swift' -print0 | xargs -0 cat | wc -l)
if [[ $core_lines -ge 8000 ]]; then
    echo "boundary: Sources/BubbleCore has $core_lines lines of Swift (limit 8,000): move a feature into a target of its own" >&2
    status=1
fi

# The C headers BubbleText's Swift sees must not bring Cairo in either.
for header in Sources/CPango/shim.h Sources/CPangoMeasure/include/pango_measure.h; do
    if grep -nE '#include\s*[<"](cairo|pango/pangocairo|gdk-pixbuf|png)' "$header" >&2; then
        echo "boundary: $header must not include Cairo, gdk-pixbuf or libpng headers" >&2
        status=1
    fi
done

# The store and the server are async end to end (issue 38): nothing in them blocks a thread to
# wait — no semaphores, no EventLoopFuture.wait(), no sleeping or threads of their own.
blocking=$(grep -rnE 'DispatchSemaphore|\.wait\(\)|Thread\.sleep|Thread\(|usleep\(|NSCondition' Sources/BubbleStore Sources/BubbleServer --include='*.swift' || true)
if [[ -n "$blocking" ]]; then
    echo "async: Sources/BubbleStore and Sources/BubbleServer must not block a thread to wait (await instead):" >&2
    echo "$blocking" | sed 's/^/  /' >&2
    status=1
fi

[[ $status -eq 0 ]] && echo "module boundaries and async: ok"
exit $status
