#!/usr/bin/env bash
# Runs a step of `make test` and notes how long it took, so the run ends with where its time went
# (issue 65):
#   scripts/timed.sh "NAME" COMMAND [ARG]...   runs COMMAND, appends "SECONDS<TAB>NAME<TAB>STATUS" to the log
#   scripts/timed.sh --report                    prints the steps, their seconds and their share
# The log is $BUBBLEKIT_TIMES (default .build-times), started afresh by `make test`.
set -uo pipefail
log=${BUBBLEKIT_TIMES:-.build-times}
if [ "${1:-}" = --report ]; then
    [ -f "$log" ] || exit 0
    awk -F'\t' '{ total += $1; name[NR] = $2; secs[NR] = $1; st[NR] = $3 }
        END {
            print ""
            print "make test: where the time went"
            for (i = 1; i <= NR; i++) printf "  %6d s  %3d%%  %s%s\n", secs[i], total ? 100 * secs[i] / total : 0, name[i], st[i] == 0 ? "" : "  (failed)"
            printf "  %6d s        total (%d min %d s)\n", total, total / 60, total % 60
        }' "$log"
    exit 0
fi
name=$1
shift
start=$(date +%s)
"$@"
status=$?
printf '%s\t%s\t%s\n' "$(( $(date +%s) - start ))" "$name" "$status" >> "$log"
exit $status
