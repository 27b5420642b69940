#!/usr/bin/env bash
# Memory of `bubbles serve` with the 1,000,000-message conversation open (RSS from /proc): idle,
# opened, after 10 s of window fetches under wrk, after a reader at another width, after a reader
# from the other side. `make bench BENCH_ARGS="--cases serve-1m"` first (it makes the store and the
# release build); `scripts/serve-memory.sh [BUBBLES_BINARY]` (another build's binary compares it).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { [ "$(id -u)" = 0 ] && apt-get install -y -qq wrk >/dev/null; }
bubbles=${1:-$(swift build -c release --show-bin-path)/bubbles}
db=${TMPDIR:-/tmp}/bubblekit-bench-store-1000000.sqlite
[ -f "$db" ] || { echo "no $db: run make bench BENCH_ARGS=\"--cases serve-1m\" first" >&2; exit 1; }
export FONTCONFIG_FILE=$PWD/Sources/BubbleText/Fonts/fonts.conf
script=$(mktemp --suffix .lua)
port=$((20000 + RANDOM % 20000))
"$bubbles" serve --db "$db" --port $port > /dev/null &
server=$!
trap 'rm -f "$script"; kill $server 2>/dev/null || true' EXIT
sleep 2
rss() { awk '/VmRSS/ {printf "%d MB", $2/1024}' /proc/$server/status; }
url=http://127.0.0.1:$port
echo "idle:                         $(rss)"
height=$(curl -s "$url/c/1/view?width=720&wait=1" | sed -E 's/.*"height":([0-9]+).*/\1/')
echo "conversation open:            $(rss)"
cat > "$script" <<LUA
math.randomseed(2026)
request = function() return wrk.format("GET", "/c/1/view?width=720&y=" .. math.random(0, $height) .. "&h=2400") end
LUA
wrk -t2 -c50 -d10s -s "$script" "$url" > /dev/null
echo "after 10 s of windows:        $(rss)"
curl -s -o /dev/null "$url/c/1/view?width=500&y=0&h=2400"
echo "a reader at 500 px:           $(rss)"
other=$(curl -s "$url/api/v1/conversations/1" | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin)["participants"] if p["id"]!="me"][0])')
curl -s -o /dev/null "$url/c/1/view?width=720&as=${other//+/%2B}&wait=1"
echo "a reader from the other side: $(rss)"
