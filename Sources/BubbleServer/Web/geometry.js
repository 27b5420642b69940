// geometry.js — the virtual scroller's arithmetic, without a page: how tall the column is for a
// conversation of a given height, where the thumb's place is in the conversation, which message
// is at a height, which rows to fetch, and how a small scroll eases the offset. Browsers cap an
// element's height (~33 million px in Chromium), so past MAX_COLUMN the column is shorter than
// the conversation by a factor `scale`. Tested by `node --test` (Tests/Web).

/** The tallest column the page makes (px); a taller conversation is scaled into it. */
export const MAX_COLUMN = 8000000;

/**
 * The column's height for a conversation `total` px tall, and the scale between them: 1 when the
 * column holds the conversation; else the thumb's travel (column less one view) maps onto the
 * conversation's.
 * @param {number} total
 * @param {number} viewHeight
 * @param {number} [max]
 * @returns {{ spacer: number, scale: number }}
 */
export function column(total, viewHeight, max = MAX_COLUMN) {
  const spacer = Math.max(Math.min(total, max), 1);
  const scale = spacer < total && spacer > viewHeight ? (total - viewHeight) / (spacer - viewHeight) : 1;
  return { spacer, scale };
}

/**
 * Where the column scrolls to show the conversation from `y` (clamped to the conversation): the
 * scroll top and the offset between the two.
 * @param {number} y
 * @param {number} total
 * @param {number} viewHeight
 * @param {number} scale
 * @returns {{ y: number, top: number, offset: number }}
 */
export function scrollFor(y, total, viewHeight, scale) {
  y = Math.max(0, Math.min(y, total - viewHeight));
  const top = scale > 1 ? y / scale : y;
  return { y, top, offset: y - top };
}

/**
 * The index of the message whose top is the last at or above `y` (0 when `y` is above them all).
 * @param {number[]} tops ascending
 * @param {number} y
 * @returns {number}
 */
export function indexAt(tops, y) {
  let lo = 0, hi = tops.length - 1;
  if (hi < 0 || tops[0] > y) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (tops[mid] <= y) lo = mid; else hi = mid - 1;
  }
  return lo;
}

/**
 * Whether a window of rows from `top` to `bottom` covers the view at `y` and half a screen
 * above and a screen and a half below (else the rows there are fetched).
 * @param {{ top: number, bottom: number } | null} win
 * @param {number} y
 * @param {number} viewHeight
 * @param {number} total
 * @returns {boolean}
 */
export function covers(win, y, viewHeight, total) {
  return !!win && win.top <= Math.max(0, y - viewHeight / 2) && win.bottom >= Math.min(total, y + viewHeight * 1.5);
}

/**
 * The band of the conversation to fetch around the view at `y`: a screen above, the view, a
 * screen below (the `/view` query).
 * @param {number} y
 * @param {number} viewHeight
 * @returns {string}
 */
export function bandQuery(y, viewHeight) {
  return "y=" + Math.max(0, Math.floor(y - viewHeight)) + "&h=" + Math.ceil(viewHeight * 3);
}

/**
 * The offset after a scroll of a scaled column: none at the top, the whole difference at the
 * bottom, the thumb's place after a long move (a drag), and otherwise eased toward it by at most
 * half of what the wheel moved (rows move by as much as the wheel).
 * @param {{ scrollTop: number, moved: number, viewHeight: number, spacer: number, total: number, scale: number, offset: number }} s
 * @returns {number}
 */
export function easedOffset(s) {
  if (s.scrollTop <= 0) return 0;
  if (s.scrollTop >= s.spacer - s.viewHeight - 1) return s.total - s.spacer;
  if (Math.abs(s.moved) > s.viewHeight) return s.scrollTop * (s.scale - 1);
  const wanted = s.scrollTop * (s.scale - 1) - s.offset;
  return s.offset + Math.sign(wanted) * Math.min(Math.abs(wanted), Math.abs(s.moved) * 0.5);
}

/**
 * Where a jump puts a message that is `top` to `next` in the conversation: "centre" (in the
 * middle of the view), "top" (8 px below the top) or "flush" (at the very top).
 * @param {"centre" | "top" | "flush"} where
 * @param {number} top
 * @param {number} next
 * @param {number} viewHeight
 * @returns {number}
 */
export function jumpTarget(where, top, next, viewHeight) {
  if (where === "centre") return top - (viewHeight - (next - top)) / 2;
  return where === "top" ? top - 8 : top;
}
