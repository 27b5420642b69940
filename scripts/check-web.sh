#!/usr/bin/env bash
# The web app's front-end code, checked by `make test` before anything is built and before any
# browser starts (issue 62), so that a slip in a module fails in seconds:
#   - `node --check` on every module of Sources/BubbleServer/Web (syntax);
#   - `tsc -p tsconfig.json` (TypeScript's checker over the JSDoc types, strict; Debian's
#     node-typescript, installed by scripts/bootstrap.sh);
#   - the unit tests of the pure logic under `node --test` (Tests/Web/*.test.mjs: the virtual
#     scroller's arithmetic, dates, search marks, the outbox, the gallery's rows…);
#   - no .swift file under Sources/ holds more than 20 lines of JavaScript or CSS.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in node tsc; do
    command -v "$tool" >/dev/null || { echo "check-web: $tool is missing; scripts/bootstrap.sh installs it (nodejs, node-typescript)" >&2; exit 1; }
done
for f in Sources/BubbleServer/Web/*.js; do
    node --check "$f" || { echo "check-web: $f: syntax error (node --check)" >&2; exit 1; }
done
tsc -p tsconfig.json || { echo "check-web: type errors (tsc -p tsconfig.json)" >&2; exit 1; }
node --test --test-reporter=dot Tests/Web/*.test.mjs || { echo "check-web: a unit test of the web app failed (node --test Tests/Web/*.test.mjs)" >&2; exit 1; }
echo
scripts/check-web-in-swift.py
echo "web app: syntax, types and unit tests: ok"
