// The page's two DOM helpers: find by id, and make an element whose text is text (never markup).

export const $ = (id) => document.getElementById(id);

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
