import assert from "node:assert/strict";
import { test } from "node:test";
import { random, web } from "./page.mjs";

const search = await import(new URL("search.js", web).href);
const live = await import(new URL("live.js", web).href);
const library = await import(new URL("library.js", web).href);
const composer = await import(new URL("composer.js", web).href);
const reads = await import(new URL("reads.js", web).href);
const dates = await import(new URL("dates.js", web).href);
const gallery = await import(new URL("gallery.js", web).href);

test("occurrences: case-insensitive, left to right, not overlapping, indices into the text even when lower-casing changes lengths", () => {
  assert.deepEqual(search.occurrences("Eclipse eclipse ECLIPSE", "eclipse"), [0, 8, 16]);
  assert.deepEqual(search.occurrences("aaaa", "aa"), [0, 2]);
  assert.deepEqual(search.occurrences("anything", ""), []);
  assert.deepEqual(search.occurrences("no match", "zebra"), []);
  const text = "İstanbul, istanbul";   // "İ".toLowerCase() is two code units
  for (const at of search.occurrences(text, "istanbul")) assert.equal(text.slice(at, at + 8).toLowerCase().replace("i̇", "i"), "istanbul");
  assert.deepEqual(search.occurrences(text, "stanbul"), [1, 11]);
});

test("kb, outbox labels, back-off and the new-messages pill", () => {
  assert.equal(live.kb(1536), "1.5 KB");
  assert.equal(live.kb(65536), "64 KB");
  assert.equal(live.outboxLabel("sending"), "Sending…");
  assert.equal(live.outboxLabel("failed", "too long"), "Failed — too long ");
  assert.equal(live.outboxLabel("failed"), "Failed — not sent ");
  let backoff = 250;
  for (let k = 0; k < 10; k++) {
    const r = live.reconnect(backoff, k / 10);
    assert.ok(r.wait >= backoff * 0.75 && r.wait <= backoff * 1.25);
    assert.ok(r.next <= 10000 && r.next >= Math.min(backoff, 10000));
    backoff = r.next;
  }
  assert.equal(backoff, 10000);
  assert.equal(live.newMessagesText(1), "1 new message ↓");
  assert.equal(live.newMessagesText(3), "3 new messages ↓");
});

test("uuidFrom: version 4, variant 10, from any 16 bytes, without changing them", () => {
  const next = random(5);
  for (let k = 0; k < 200; k++) {
    const bytes = Uint8Array.from({ length: 16 }, () => Math.floor(next() * 256));
    const copy = Uint8Array.from(bytes);
    assert.match(live.uuidFrom(bytes), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(bytes, copy);
  }
});

test("ndjsonLines: only complete lines, a line that is not JSON as {}, the offset to go on from", () => {
  const text = '{"progress":{"done":1,"total":3}}\nnot json\n{"result":{"id":4}}\n{"error":';
  const first = library.ndjsonLines(text, 0);
  assert.deepEqual(first.lines, [{ progress: { done: 1, total: 3 } }, {}, { result: { id: 4 } }]);
  assert.equal(text.slice(first.next), '{"error":');
  const more = text + '{"message":"x"}}\n';
  assert.deepEqual(library.ndjsonLines(more, first.next).lines, [{ error: { message: "x" } }]);
  assert.equal(library.progressText({ done: 0, total: 1 }), "Importing…");
  assert.equal(library.progressText({ done: 1, total: 1200 }), "Importing conversation 2 of 1,200…");
  assert.equal(library.progressText({ done: 1200, total: 1200 }), "Importing conversation 1,200 of 1,200…");
});

test("participants: trimmed, empty ones dropped, the signed-in user first unless named", () => {
  assert.deepEqual(library.participants(" You, Ann ,, ", ""), ["You", "Ann"]);
  assert.deepEqual(library.participants("ann, ben", "cy"), ["cy", "ann", "ben"]);
  assert.deepEqual(library.participants("Ann, CY", "cy"), ["Ann", "CY"]);
  assert.deepEqual(library.participants("", ""), []);
});

test("tooLong, badges and read marks worth sending", () => {
  assert.equal(composer.tooLong(65536, 65536), null);
  assert.equal(composer.tooLong(65537, 65536), "This message is 64 KB; a message may have at most 64 KB.");
  assert.deepEqual([1, 99, 100, 1234].map(reads.badgeText), ["1", "99", "99+", "99+"]);
  assert.equal(reads.worthSending(5, 4, true), true);
  assert.equal(reads.worthSending(4, 4, true), false, "nothing new");
  assert.equal(reads.worthSending(9, 4, false), false, "a hidden page reads nothing");
  assert.equal(reads.worthSending(NaN, 0, true), false);
});

test("receiptText: Read once another member read it, Delivered once it reached another's device, else Sent; one's own marks do not count", () => {
  const marks = (entries) => new Map(entries);
  assert.equal(live.receiptText(5, marks([]), "ann"), null, "nobody else keeps marks");
  assert.equal(live.receiptText(5, marks([["ann", { read: 9, delivered: 9 }]]), "ann"), null, "only one's own");
  assert.equal(live.receiptText(5, marks([["ann", { read: 9, delivered: 9 }], ["ben", { read: 3, delivered: 4 }]]), "ann"), "Sent");
  assert.equal(live.receiptText(5, marks([["ben", { read: 3, delivered: 5 }]]), "ann"), "Delivered");
  assert.equal(live.receiptText(5, marks([["ben", { read: 5, delivered: 5 }], ["cy", { read: 0, delivered: 0 }]]), "ann"), "Read");
});

test("listTime: today's time, Yesterday, a weekday within the week, then the date (a year only when another)", () => {
  const now = new Date(2026, 10, 28, 18, 30);   // Saturday 28 November 2026, local time
  assert.equal(dates.listTime(new Date(2026, 10, 28, 9, 5), now, "en-GB"), "09:05");
  assert.equal(dates.listTime(new Date(2026, 10, 27, 23, 59), now, "en-GB"), "Yesterday");
  assert.equal(dates.listTime(new Date(2026, 10, 23, 12, 0), now, "en-GB"), "Monday");
  assert.equal(dates.listTime(new Date(2026, 10, 21, 12, 0), now, "en-GB"), "21 Nov");
  assert.equal(dates.listTime(new Date(2025, 0, 2, 12, 0), now, "en-GB"), "2 Jan 2025");
  assert.equal(dates.listTime(new Date(2026, 10, 27, 12, 0), now, "de"), "Gestern");
});

test("galleryRows: a heading per month, rows of at most cols cells, every item once in order; firstRowBelow = a linear scan", () => {
  const next = random(9);
  for (let k = 0; k < 200; k++) {
    const items = [];
    let month = 1;
    for (let n = Math.floor(next() * 60); n > 0; n--) { if (next() < 0.1) month++; items.push({ month: "2024-" + String(month).padStart(2, "0") }); }
    const cols = 2 + Math.floor(next() * 6);
    const { rows, height } = gallery.galleryRows(items, cols, 126, 36);
    const seen = rows.flatMap((r) => r.items || []);
    assert.deepEqual(seen, items.map((_, i) => i));
    assert.equal(rows.filter((r) => r.month).length, new Set(items.map((i) => i.month)).size);
    for (const r of rows) if (r.items) assert.ok(r.items.length <= cols && r.items.every((i) => items[i].month === items[r.items[0]].month));
    rows.forEach((r, i) => assert.equal(r.top, i ? rows[i - 1].top + rows[i - 1].height : 0));
    assert.equal(height, rows.length ? rows[rows.length - 1].top + rows[rows.length - 1].height : 0);
    const top = next() * (height + 100);
    let linear = 0;
    while (linear < rows.length && rows[linear].top + rows[linear].height < top) linear++;
    assert.equal(gallery.firstRowBelow(rows, top), linear);
  }
  assert.equal(gallery.duration(0), "0:00");
  assert.equal(gallery.duration(61.4), "1:01");
  assert.equal(gallery.duration(3600), "60:00");
});

test("search helpers: the marked word, \"3 of 1,204\", stepping through matches, hits grouped by conversation with real counts", () => {
  assert.equal(search.markedWord("  tonight fox"), "tonight");
  assert.equal(search.markedWord("-cat \"dog\" x"), "dog");
  assert.equal(search.markedWord("pre*"), "pre");
  assert.equal(search.markedWord(""), "");
  assert.equal(search.matchLabel(2, 1204), "3 of 1,204");
  assert.equal(search.matchLabel(0, 0), "No matches");
  assert.equal(search.stepMatch(0, 3, true), 1);
  assert.equal(search.stepMatch(2, 3, true), 2, "stops at the oldest");
  assert.equal(search.stepMatch(0, 3, false), 0, "stops at the newest");
  const groups = search.groupHits([{ conversation: 2, seq: 9 }, { conversation: 1, seq: 4 }, { conversation: 2, seq: 3 }, { conversation: 7, seq: 1 }],
    [{ id: 1, count: 1200 }, { id: 2, count: 2 }, { id: 5, count: 0 }]);
  assert.deepEqual(groups.map((g) => [g.id, g.count, g.hits.map((h) => h.seq)]), [[1, 1200, [4]], [2, 2, [9, 3]], [7, 0, [1]]]);
});
