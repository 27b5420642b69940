import assert from "node:assert/strict";
import { test } from "node:test";
import { web } from "./page.mjs";

const d = await import(new URL("dates.js", web).href);

test("monthsOf: each month with its first day with messages and its count, in order", () => {
  const months = d.monthsOf([{ date: "2024-01-03", count: 2 }, { date: "2024-01-30", count: 5 }, { date: "2024-03-01", count: 1 }]);
  assert.deepEqual([...months], [["2024-01", { first: "2024-01-03", count: 7 }], ["2024-03", { first: "2024-03-01", count: 1 }]]);
  assert.equal(d.monthsOf([]).size, 0);
});

test("monthGrid: Monday-first blanks and the month's days, leap years included", () => {
  assert.deepEqual([d.monthGrid("2024-01").blanks, d.monthGrid("2024-01").days], [0, 31]);   // 1 Jan 2024: a Monday
  assert.deepEqual([d.monthGrid("2024-02").blanks, d.monthGrid("2024-02").days], [3, 29]);   // a Thursday; leap year
  assert.deepEqual([d.monthGrid("2023-02").blanks, d.monthGrid("2023-02").days], [2, 28]);
  assert.deepEqual([d.monthGrid("2026-11").blanks, d.monthGrid("2026-11").days], [6, 30]);   // a Sunday
  assert.deepEqual([d.monthGrid("1900-02").blanks, d.monthGrid("1900-02").days], [3, 28]);   // not a leap year
  for (let y = 1970; y < 2100; y++) for (let m = 1; m <= 12; m++) {
    const key = y + "-" + String(m).padStart(2, "0"), grid = d.monthGrid(key);
    assert.equal(grid.first.toISOString().slice(0, 10), key + "-01");
    assert.equal((grid.first.getUTCDay() + 6) % 7, grid.blanks);
  }
});

test("dotSize, dayKey, labels", () => {
  assert.deepEqual([0, 1, 33, 34, 66, 67, 100].map((n) => d.dotSize(n, 100)), [0, 1, 1, 2, 2, 3, 3]);
  assert.equal(d.dotSize(5, 0), 3, "a busiest of 0 is read as 1");
  assert.equal(d.dayKey("2024-03", 7), "2024-03-07");
  assert.equal(d.monthLabel("2024-03", 1204), "March 2024 · 1,204");
  assert.equal(d.messagesText(1), "1 message");
  assert.equal(d.messagesText(2), "2 messages");
});

test("pillDay: today, yesterday, a weekday within the week, else the date (the year when it is another), by UTC days", () => {
  const now = new Date("2026-11-29T10:00:00Z");
  assert.equal(d.pillDay(new Date("2026-11-29T00:00:01Z"), now, "en-GB"), "Today");
  assert.equal(d.pillDay(new Date("2026-11-28T23:59:59Z"), now, "en-GB"), "Yesterday");
  assert.equal(d.pillDay(new Date("2026-11-24T12:00:00Z"), now, "en-GB"), "Tuesday");
  // (ICU versions differ in the comma after the weekday.)
  assert.match(d.pillDay(new Date("2026-11-22T12:00:00Z"), now, "en-GB"), /^Sun,? 22 November$/);
  assert.match(d.pillDay(new Date("2024-03-05T12:00:00Z"), now, "en-GB"), /^Tue,? 5 March 2024$/);
  assert.equal(d.pillDay(new Date("2026-11-28T12:00:00Z"), now, "de-DE"), "Gestern");
  assert.match(d.pillDay(new Date("2026-11-30T12:00:00Z"), now, "en-GB"), /^Mon,? 30 November$/, "a day ahead (another clock) is a date");
});
