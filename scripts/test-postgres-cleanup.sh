#!/usr/bin/env bash
# Stops and removes any PostgreSQL a test process started (Tests/BubbleTestSupport/TestPostgres)
# and could not stop itself (it crashed or was killed). `make test` runs it after the tests,
# whether they passed or not. Only folders whose owning process is gone are touched.
shopt -s nullglob
for dir in /tmp/bubblekit-pg-*; do
  pid=${dir#/tmp/bubblekit-pg-}; pid=${pid%%-*}
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then continue; fi
  if [ -f "$dir/data/postmaster.pid" ]; then
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | head -1)
    if [ "$(id -u)" -eq 0 ]; then
      runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    else
      "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    fi
  fi
  rm -rf "$dir"
done
