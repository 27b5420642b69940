// The little of a browser page the modules touch when they are imported (session.js reads the
// URL's query and two <meta> tags): enough to import them under `node --test`, no DOM.
globalThis.location ??= /** @type {any} */ ({ search: "", origin: "http://127.0.0.1", host: "127.0.0.1", protocol: "http:" });
globalThis.document ??= /** @type {any} */ ({ querySelector: () => null, getElementById: () => null, addEventListener: () => {}, visibilityState: "visible" });

/** The web app's modules, from the repository. */
export const web = new URL("../../Sources/BubbleServer/Web/", import.meta.url);

/**
 * A seeded generator (xorshift32): the same numbers on every run.
 * @param {number} seed
 */
export function random(seed) {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; };
}
