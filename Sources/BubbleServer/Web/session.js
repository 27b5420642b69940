// session.js — the page's session: the `?token=` of a server started with one, the signed-in
// user's CSRF token (sent with every write that goes through fetch), and `post()` for the JSON
// API. Everything else that talks to the server imports from here.

const query = new URLSearchParams(location.search);
/** The server's access token when the page was opened with `?token=` (else ""). */
export const token = query.get("token") || "";
/** `&token=…` to append to a URL that has a query already. */
export const tokenPart = token ? "&token=" + encodeURIComponent(token) : "";
/** `?token=…` for a URL without a query. */
export const tokenQuery = token ? "?token=" + encodeURIComponent(token) : "";

/**
 * The content of `<meta name=NAME>` ("" when there is none).
 * @param {string} name
 * @returns {string}
 */
export function meta(name) {
  const m = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="' + name + '"]'));
  return m ? m.content : "";
}

/** The signed-in session's CSRF token and user name ("" without accounts). */
export const csrf = meta("bk-csrf"), me = meta("bk-user");

/**
 * An element of the page by its id. The pages are written by the server (and checked by the
 * browser tests), so elements are typed loosely here.
 * @param {string} id
 * @returns {any}
 */
export const byId = (id) => document.getElementById(id);

/** Sends the CSRF token with every write made through `fetch` (reads go as they are). */
export function installCsrf() {
  if (!csrf) return;
  const plain = window.fetch.bind(window);
  /** @type {typeof fetch} */
  const wrapped = (url, options = {}) => {
    const method = (options.method || "GET").toUpperCase();
    if (method !== "GET" && method !== "HEAD") {
      options = Object.assign({}, options, { headers: Object.assign({}, options.headers || {}, { "X-CSRF-Token": csrf }) });
    }
    return plain(url, options);
  };
  window.fetch = wrapped;
}

/**
 * POSTs JSON and returns the answer; a refusal throws with the server's error text.
 * @param {string} url
 * @param {object} [body]
 * @returns {Promise<any>}
 */
export async function post(url, body) {
  const r = await fetch(url, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
  const answer = r.status === 204 ? {} : await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(answer.error || String(r.status));
  return answer;
}

/**
 * The text to show for a caught error.
 * @param {any} x
 * @returns {string}
 */
export const reason = (x) => String((x && x.message) || x);
