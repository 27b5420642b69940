#!/usr/bin/env bash
# Runs the built test binary (Swift Testing) with a watchdog, so that a test that hangs fails the
# run with a report instead of stalling CI until its time runs out.
#
#   scripts/run-tests.sh [--filter X | --skip X]...
#
# The binary's events are kept in a log; the terminal gets everything but the per-test
# "started"/"passed" lines (failures, printed reports and the summary stay). After
# TEST_TIME_LIMIT seconds (default 1500) the tests still running are listed, every thread's stack
# is printed (gdb, else the toolchain's lldb) and the process is killed: exit 124.
set -uo pipefail
cd "$(dirname "$0")/.."
limit=${TEST_TIME_LIMIT:-1500}
bin_dir=$(swift build --show-bin-path)
binary=$(ls -d "$bin_dir"/*PackageTests.xctest 2>/dev/null | head -1)
if [ -z "$binary" ]; then
  echo "run-tests: no test binary in $bin_dir (run 'swift build --build-tests' first)" >&2
  exit 2
fi
log=$(mktemp /tmp/bubblekit-tests-XXXXXX.log)
trap 'rm -f "$log"' EXIT

# Line-buffered, so the log and the terminal are current when the watchdog reads them.
(
  NO_COLOR=1 stdbuf -oL -eL "$binary" --testing-library swift-testing --verbose "$@" 2>&1 | tee "$log" \
    | grep --line-buffered -v -E '^[^ ]+ (Test ("|[A-Za-z_0-9]+\(|case )|Suite ).* (started|passed after [0-9.]+ seconds)\.$'
  exit "${PIPESTATUS[0]}"
) &
pid=$!

elapsed=0
while kill -0 "$pid" 2>/dev/null; do
  if [ "$elapsed" -ge "$limit" ]; then
    echo
    echo "run-tests: still running after ${limit} s (TEST_TIME_LIMIT); these tests had not finished:"
    # A test is named the same way when it starts and when it ends: "Test "…" (aka 'f()')".
    grep -E '^[^ ]+ Test .* started\.$' "$log" | sed -E 's/^[^ ]+ (Test .*) started\.$/\1/' | grep -v '^Test run$' | sort > "$log.started"
    grep -E '^[^ ]+ Test .* (passed|failed) after [0-9.]+ seconds' "$log" \
      | sed -E 's/^[^ ]+ (Test .*) (passed|failed) after .*$/\1/' | sort -u > "$log.ended"
    comm -23 "$log.started" "$log.ended" | sed 's/^/  /'
    rm -f "$log.started" "$log.ended"
    test_pid=$(pgrep -f -n "^$binary" || true)
    if [ -n "$test_pid" ]; then
      echo "run-tests: the threads of process $test_pid:"
      if command -v gdb >/dev/null; then
        timeout 120 gdb -p "$test_pid" -batch -ex "thread apply all bt 30" 2>/dev/null \
          | grep -E '^(Thread|#)' | swift demangle --simplified | cut -c1-240
      else
        timeout 120 lldb -p "$test_pid" --batch -o "thread backtrace all -c 30" 2>/dev/null \
          | grep -E '^\s*(\* )?(thread|frame) #' | cut -c1-240
      fi
      kill -9 "$test_pid" 2>/dev/null
    fi
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exit 124
  fi
  sleep 5
  elapsed=$((elapsed + 5))
done
wait "$pid"
status=$?
# The slowest tests, so the CI budget (15 min) has a place to look first.
echo "run-tests: slowest tests of this run:"
grep -E '^[^ ]+ Test .* (passed|failed) after [0-9.]+ seconds' "$log" | grep -v ' Test run with ' \
  | sed -E 's/^[^ ]+ Test (.*) (passed|failed) after ([0-9.]+) seconds.*$/\3 \1/' \
  | sort -rn | head -8 | awk '{ printf "  %7.1f s  ", $1; $1 = ""; print substr($0, 2) }' | cut -c1-150
exit $status
