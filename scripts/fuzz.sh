#!/usr/bin/env bash
# `make fuzz`: every reader under libFuzzer with AddressSanitizer, each for FUZZ_SECONDS (default
# 60), two at a time. Seeds are the project's fixtures; the growing corpus stays in
# .build-fuzz/corpus; an input that crashes, hangs over 10 s or takes over 1 GB is kept in
# Tests/Fuzz/crashes/READER-… and ends the run of that reader. A summary line per reader at the end.
#   scripts/fuzz.sh [SECONDS] [READER…]     readers: SMS WhatsApp WhatsAppZip Telegram Native IMessage Messenger Discord MsgStore WhatsAppBackup SignalExport Contacts
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FUZZ_SECONDS:-60}}
shift || true
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=(SMS WhatsApp WhatsAppZip Telegram Native IMessage Messenger Discord MsgStore WhatsAppBackup SignalExport Contacts)
scratch=.build-fuzz
fixtures=Tests/BubbleImportTests/Fixtures

# Linked with the toolchain's lld: gold stops with an internal error (format_file_lineno) on
# the contacts target's debug information.
echo "fuzz: building the targets (coverage + AddressSanitizer)…" >&2
swift build --package-path Tests/Fuzz -c release --scratch-path "$PWD/$scratch" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xlinker --allow-multiple-definition >&2

seed() {  # reader → seed files into its corpus
  local dir=$scratch/corpus/$1
  mkdir -p "$dir"
  case $1 in
    SMS) cp $fixtures/sms/*.xml "$dir/" ;;
    WhatsApp) cp $fixtures/whatsapp-*.txt "$dir/"; for f in $fixtures/whatsapp-*/*.txt; do cp "$f" "$dir/$(basename "$(dirname "$f")").txt"; done ;;
    WhatsAppZip) python3 - "$dir" $fixtures/whatsapp-ios $fixtures/whatsapp-android-us <<'PY'
import os, sys, zipfile
out = sys.argv[1]
for folder in sys.argv[2:]:
    with zipfile.ZipFile(os.path.join(out, os.path.basename(folder) + ".zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for name in os.listdir(folder):
            z.write(os.path.join(folder, name), name)
PY
      ;;
    Telegram) for f in $fixtures/telegram-*/result.json; do cp "$f" "$dir/$(basename "$(dirname "$f")").json"; done ;;
    Native) cp $fixtures/native.json Sources/BubbleCore/Samples/*.json "$dir/" ;;
    IMessage) cp $fixtures/imessage/chat.db "$dir/" ;;
    Messenger) k=0; for f in $(find $fixtures/meta-* -name '*.json'); do k=$((k+1)); cp "$f" "$dir/thread-$k.json"; done ;;
    Discord) k=0; for f in $fixtures/discord/*.json; do k=$((k+1)); cp "$f" "$dir/channel-$k.json"; done ;;
    MsgStore) cp $fixtures/appdb/whatsapp-new/msgstore.db "$dir/new.db"; cp $fixtures/appdb/whatsapp-legacy/msgstore.db "$dir/legacy.db" ;;
    WhatsAppBackup) cp $fixtures/appdb/whatsapp-new/msgstore.db.crypt1[45] "$dir/" ;;
    Contacts) cp $fixtures/contacts/*.vcf $fixtures/contacts/*.csv "$dir/" ;;
    SignalExport) printf '[2024-03-01 10:00:00] Ann: Hi\nsecond\n(- Me: ❤️ -)\n[2024-03-01 10:01:00] Me: \n\n> Hi\n\nYes ![a.jpg](./media/a.jpg)  \n' > "$dir/chat.md" ;;
  esac
}

mkdir -p Tests/Fuzz/crashes "$scratch/logs"
run() {
  local r=$1
  seed "$r"
  # Leaks are not looked for (neither per input nor at exit): Foundation's Data(contentsOf:)
  # leaks 4 KB reading an empty file, which would end every run with a false report.
  ASAN_OPTIONS=detect_leaks=0 "$scratch/release/Fuzz$r" "$scratch/corpus/$r" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
    -detect_leaks=0 -max_len=65536 -artifact_prefix="Tests/Fuzz/crashes/$r-" -print_final_stats=1 > "$scratch/logs/$r.log" 2>&1 || true
}
pids=()
for r in "${readers[@]}"; do
  echo "fuzz: $r for $seconds s…" >&2
  run "$r" & pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait
printf '%-12s %10s %10s %8s %s\n' reader runs exec/s crashes corpus
for r in "${readers[@]}"; do
  log=$scratch/logs/$r.log
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  crashes=$(ls Tests/Fuzz/crashes/ 2>/dev/null | grep -c "^$r-" || true)
  corpus=$(ls "$scratch/corpus/$r" | wc -l)
  printf '%-12s %10s %10s %8s %s\n' "$r" "${runs:-0}" "${rate:-0}" "$crashes" "$corpus"
done
