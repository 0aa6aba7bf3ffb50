// The page's helpers: find by id, make an element whose text is text (never markup), and call
// the API with the session cookie.

export const $ = (id) => document.getElementById(id);

/// Call the API; a JSON body comes back parsed, and an error status throws with the server's
/// message and code (its `{"error": {code, message}}`: the code is what a page words for the
/// viewer).
export async function api(path, options = {}) {
  const res = await fetch(path, { credentials: 'same-origin', ...options });
  const body = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  if (!res.ok) {
    const err = new Error(body?.error?.message || `HTTP ${res.status}`);
    err.status = res.status;
    err.code = body?.error?.code || null;
    err.retryAfter = res.headers.get('Retry-After');
    // The rest of the error object: a limit's or a spending cap's figures, for the page's words.
    err.details = body?.error || null;
    throw err;
  }
  return body;
}

/// <tag> with `props` (class, aria-*, role and tabindex as attributes, the rest as properties)
/// and, when given, `text` as its textContent.
export function el(tag, props = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('aria-') || k === 'role' || k === 'tabindex') node.setAttribute(k, v);
    else node[k] = v;
  }
  if (text !== undefined) node.textContent = text;
  return node;
}
