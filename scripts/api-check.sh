#!/usr/bin/env bash
# The public API against the last release (issue 46): `swift package
# diagnose-api-breaking-changes` compares the library products with the newest tag `vX.Y.Z`
# reachable from HEAD, and fails on a break unless the major version (0.x: the minor) went up
# in CHANGELOG.md's top entry. Without a tag (a fresh repository, a shallow clone) there is
# nothing to compare with: it says so and passes.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || true)
if [ -z "$tag" ]; then
    echo "api-check: no release tag (vX.Y.Z) yet: nothing to compare the public API with"
    exit 0
fi
current=$(sed -n 's/^## \[\([0-9][0-9.]*\)\].*/\1/p' CHANGELOG.md | head -1)
released=${tag#v}
major() { local v=$1; if [ "${v%%.*}" = 0 ]; then echo "0.$(echo "$v" | cut -d. -f2)"; else echo "${v%%.*}"; fi; }
if [ "$(major "$current")" != "$(major "$released")" ]; then
    echo "api-check: CHANGELOG.md's $current is a new major version after $tag: breaking changes allowed"
    exit 0
fi
products=(BubbleKit BubbleKitHTML BubbleKitImport BubbleKitStore BubbleKitServer)
args=(); for p in "${products[@]}"; do args+=(--products "$p"); done
echo "api-check: comparing the public API with $tag"
swift package diagnose-api-breaking-changes "$tag" "${args[@]}" 2>&1 | grep -v 'prohibited flag'
exit "${PIPESTATUS[0]}"
