import assert from "node:assert/strict";
import { test } from "node:test";
import { random, web } from "./page.mjs";

const g = await import(new URL("geometry.js", web).href);

test("column: the whole conversation when it fits; past the cap the thumb's travel maps onto the conversation's", () => {
  assert.deepEqual(g.column(5000, 700), { spacer: 5000, scale: 1 });
  assert.deepEqual(g.column(0, 700), { spacer: 1, scale: 1 });
  const big = g.column(100_000_000, 700);
  assert.equal(big.spacer, g.MAX_COLUMN);
  assert.ok(Math.abs((big.spacer - 700) * big.scale - (100_000_000 - 700)) < 1e-3, "the thumb's end is the conversation's end");
});

test("scrollFor: clamped to the conversation; scroll top × scale + offset is the place asked for", () => {
  const next = random(7);
  for (let k = 0; k < 500; k++) {
    const total = 1000 + next() * 3e8, vh = 300 + next() * 900, { scale } = g.column(total, vh);
    const y = next() * total * 1.2 - total * 0.1;
    const to = g.scrollFor(y, total, vh, scale);
    assert.equal(to.y, Math.max(0, Math.min(y, total - vh)));
    assert.ok(Math.abs(to.top + to.offset - to.y) < 1e-6);
    assert.ok(to.top <= g.MAX_COLUMN, "the scroll top stays inside the column");
  }
});

test("indexAt: the last message whose top is at or above y (binary search = the linear scan it replaced)", () => {
  const next = random(11);
  for (let k = 0; k < 300; k++) {
    const tops = [];
    let y = next() * 100;
    for (let n = Math.floor(next() * 40); n > 0; n--) { tops.push(y); y += 1 + Math.floor(next() * 3) * next() * 200; }
    const at = next() * (y + 200) - 100;
    let linear = 0;
    while (linear + 1 < tops.length && tops[linear + 1] <= at) linear++;
    assert.equal(g.indexAt(tops, at), linear, JSON.stringify({ tops, at }));
  }
  assert.equal(g.indexAt([], 50), 0);
  assert.equal(g.indexAt([10, 10, 10], 10), 2, "equal tops: the last of them");
});

test("covers and bandQuery: a window is enough when it spans half a screen above to a screen and a half below", () => {
  assert.equal(g.covers(null, 0, 700, 5000), false);
  assert.equal(g.covers({ top: 0, bottom: 1050 }, 0, 700, 5000), true);
  assert.equal(g.covers({ top: 0, bottom: 1049 }, 0, 700, 5000), false);
  assert.equal(g.covers({ top: 1001, bottom: 9000 }, 1350, 700, 5000), false);
  assert.equal(g.covers({ top: 3950, bottom: 5000 }, 4300, 700, 5000), true, "the end counts as covered");
  assert.equal(g.covers({ top: 3951, bottom: 5000 }, 4300, 700, 5000), false);
  assert.equal(g.bandQuery(1000.6, 700), "y=300&h=2100");
  assert.equal(g.bandQuery(10, 333.3), "y=0&h=1000");
});

test("easedOffset: 0 at the top, the whole difference at the bottom, the thumb's place after a drag, and never past it when easing", () => {
  const base = { viewHeight: 700, spacer: 8_000_000, total: 40_000_000, scale: (40_000_000 - 700) / (8_000_000 - 700) };
  assert.equal(g.easedOffset({ ...base, scrollTop: 0, moved: -50, offset: 1234 }), 0);
  assert.equal(g.easedOffset({ ...base, scrollTop: 8_000_000 - 700, moved: 50, offset: 5 }), 32_000_000);
  assert.equal(g.easedOffset({ ...base, scrollTop: 1e6, moved: 800, offset: 5 }), 1e6 * (base.scale - 1));
  const next = random(3);
  for (let k = 0; k < 500; k++) {
    const scrollTop = 1 + next() * 7_000_000, moved = (next() - 0.5) * 1400, offset = next() * 3e7;
    const anchor = scrollTop * (base.scale - 1), eased = g.easedOffset({ ...base, scrollTop, moved, offset });
    if (Math.abs(moved) > 700) continue;
    assert.ok(Math.abs(eased - offset) <= Math.abs(moved) * 0.5 + 1e-6, "moves rows by at most half the wheel");
    assert.ok(Math.abs(anchor - eased) <= Math.abs(anchor - offset) + 1e-6, "toward the thumb's place, never past it");
  }
});

test("jumpTarget: centred, 8 px from the top, or flush", () => {
  assert.equal(g.jumpTarget("centre", 1000, 1100, 700), 1000 - 300);
  assert.equal(g.jumpTarget("top", 1000, 1100, 700), 992);
  assert.equal(g.jumpTarget("flush", 1000, 1100, 700), 1000);
});
