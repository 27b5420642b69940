#!/usr/bin/env bash
# Window fetches of the 1,000,000-message conversation under wrk (a C load client, 50 connections,
# keep-alive and a connection per request), beside Hummingbird answering a fixed response of the
# same size: `make bench BENCH_ARGS="--cases serve-1m"` first (it makes the store and the release
# build); then `scripts/bench-serve-wrk.sh [BUBBLES_BINARY]` (another build's binary compares it).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { [ "$(id -u)" = 0 ] && apt-get install -y -qq wrk >/dev/null; }
bin=$(swift build -c release --show-bin-path)
bubbles=${1:-$bin/bubbles}
db=${TMPDIR:-/tmp}/bubblekit-bench-store-1000000.sqlite
[ -f "$db" ] || { echo "no $db: run make bench BENCH_ARGS=\"--cases serve-1m\" first" >&2; exit 1; }
export FONTCONFIG_FILE=$PWD/Sources/BubbleText/Fonts/fonts.conf
script=$(mktemp --suffix .lua)
trap 'rm -f "$script"; kill $(jobs -p) 2>/dev/null || true' EXIT
port=$((20000 + RANDOM % 20000))
"$bubbles" serve --db "$db" --port $port > /dev/null &
server=$!
sleep 2
height=$(curl -s "http://127.0.0.1:$port/c/1/view?width=720&wait=1" | sed -E 's/.*"height":([0-9]+).*/\1/')
cat > "$script" <<LUA
math.randomseed(2026)
request = function() return wrk.format("GET", "/c/1/view?width=720&y=" .. math.random(0, $height) .. "&h=2400") end
LUA
run() { wrk -t2 -c50 -d15s --latency "$@" | awk '/Requests\/sec/ {r=$2} / 50%/ {p50=$2} / 99%/ {p99=$2} END {printf "%9s req/s  p50 %8s  p99 %8s\n", r, p50, p99}'; }
echo "bubbles serve ($bubbles), RSS $(awk '/VmRSS/ {printf "%d MB", $2/1024}' /proc/$server/status)"
echo -n "  windows, keep-alive:            "; run -s "$script" "http://127.0.0.1:$port"
echo -n "  windows, a connection each:     "; run -s "$script" -H "Connection: close" "http://127.0.0.1:$port"
kill -INT $server; wait $server || true
"$bin/BubbleBench" --baseline-server 8605 > "$script.out" &
sleep 1.5
base=$(grep -o '[0-9]*/$' "$script.out" | tr -d /)
echo "Hummingbird, a fixed 8,605-byte response (a window's size)"
echo -n "  keep-alive:                     "; run "http://127.0.0.1:$base/fixed"
echo -n "  a connection each:              "; run -H "Connection: close" "http://127.0.0.1:$base/fixed"
rm -f "$script.out"
