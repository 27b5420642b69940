#!/usr/bin/env bash
# The first layout of the 1,000,000-message conversation by `bubbles serve`, binaries compared
# in alternating rounds (the machine's speed drifts by ±20% within minutes: only runs taken in
# turn compare): for each, the wall time of `/c/1/view?width=720&wait=1` from a fresh start, the
# server's CPU seconds over it and its peak RSS by then.
#   scripts/bench-first-layout.sh [ROUNDS] [BUBBLES_BINARY…]   (default: 3 rounds, this build's)
# Needs the bench's store: `make bench BENCH_ARGS="--cases serve-1m"` makes it.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=("$(swift build -c release --show-bin-path)/bubbles")
db=${TMPDIR:-/tmp}/bubblekit-bench-store-1000000.sqlite
[ -f "$db" ] || { echo "bench-first-layout: no $db; run make bench BENCH_ARGS=\"--cases serve-1m\" first" >&2; exit 1; }
export FONTCONFIG_FILE=$PWD/Sources/BubbleText/Fonts/fonts.conf
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null || true' EXIT
cpu() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat"; }
for round in $(seq "$rounds"); do
  for binary in "${binaries[@]}"; do
    port=$((20000 + RANDOM % 20000))
    "$binary" serve --db "$db" --port "$port" > /dev/null 2>&1 &
    server=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
    before=$(cpu "$server")
    wall=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port/c/1/view?width=720&wait=1")
    after=$(cpu "$server")
    peak=$(awk '/VmHWM/ {printf "%d", $2 / 1024}' "/proc/$server/status")
    printf 'round %d  %-40s first layout %6.2f s  server CPU %6.2f s  peak RSS %4d MB\n' \
      "$round" "$binary" "$wall" "$(awk -v a="$after" -v b="$before" 'BEGIN { print a - b }')" "$peak"
    kill "$server"; wait "$server" 2>/dev/null || true
    server=
  done
done
