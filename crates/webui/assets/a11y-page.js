// The in-app assistant's eyes on the page (a11y.js describes and acts with these): the
// elements that have a role, in document order, with their accessible names (as
// dom-accessibility-api computes them) and states, read through shadow roots and around the
// assistant's own panel and an open modal dialog; the refs a description hands out; how a
// person would call an element and where it is; and waiting for the page to settle.

import { computeAccessibleName, getRole } from './vendor/dom-accessibility-api/index.mjs';
import { flat, what } from './a11y-text.js';

/// The assistant's own panel: never described, never acted on, never a cover.
export const ASSISTANT_ATTR = 'data-wright-assistant';

const SKIP_TAGS = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'iframe', 'object', 'embed']);
const IGNORED_ROLES = new Set(['generic', 'presentation', 'none', 'paragraph', 'rowgroup', 'document', 'legend', 'caption']);
// Containers whose name is their content's: around one listed element they give way to it,
// around several they are shown unnamed (the elements under them say it).
const WRAPPERS = new Set(['cell', 'gridcell', 'listitem', 'row']);
// Inputs the library gives no role that a browser exposes as text fields (or a button).
const INPUT_ROLES = {
  password: 'textbox', date: 'textbox', 'datetime-local': 'textbox', month: 'textbox', week: 'textbox', time: 'textbox',
  color: 'textbox', file: 'button',
};
// Shown even without a name: they give the tree its shape (pruned when nothing is under them).
const STRUCTURE = new Set([
  'banner', 'main', 'navigation', 'contentinfo', 'complementary', 'search', 'form', 'region', 'dialog', 'alertdialog',
  'table', 'grid', 'treegrid', 'tree', 'listbox', 'menu', 'menubar', 'tablist', 'radiogroup', 'toolbar',
]);
// Their words are the news: shown as text when they have no name.
const LIVE = new Set(['status', 'alert', 'log', 'timer', 'marquee']);
// Ancestors that say where a candidate is.
const CONTEXTS = new Set([
  'row', 'listitem', 'dialog', 'alertdialog', 'form', 'region', 'group', 'radiogroup', 'navigation', 'article', 'cell',
  'tabpanel', 'treeitem', 'menu', 'table', 'grid', 'complementary', 'banner', 'contentinfo',
]);
const CHECKABLE = new Set(['checkbox', 'switch', 'radio', 'menuitemcheckbox', 'menuitemradio']);
const VALUED = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox', 'progressbar', 'meter', 'scrollbar']);

const SETTLE_QUIET_MS = 150;
const SETTLE_MAX_MS = 3000;

// ---- refs ----------------------------------------------------------------------------------

// A description starts a new snapshot; its refs (and refs handed out by the actions after it,
// for what appeared) are `s{snapshot}e{n}`. A ref of an older snapshot is refused.
export const refs = { snapshot: 0, next: 1, of: new WeakMap(), byRef: new Map() };

export function newSnapshot() {
  refs.snapshot += 1;
  refs.next = 1;
  refs.of = new WeakMap();
  refs.byRef = new Map();
}

export function refOf(el) {
  let ref = refs.of.get(el);
  if (!ref) {
    ref = `s${refs.snapshot}e${refs.next}`;
    refs.next += 1;
    refs.of.set(el, ref);
    refs.byRef.set(ref, new WeakRef(el));
  }
  return ref;
}

// ---- reading the page ----------------------------------------------------------------------

// A form's controls shadow its properties (a button with id="inert" is `form.inert`), so the
// walk reads elements through Element's own methods.
const ELEMENT = Element.prototype;
export const attr = (el, name) => ELEMENT.getAttribute.call(el, name);
const has = (el, name) => ELEMENT.hasAttribute.call(el, name);
const LOCAL_NAME = Object.getOwnPropertyDescriptor(ELEMENT, 'localName').get;
const CHILDREN = Object.getOwnPropertyDescriptor(ELEMENT, 'children').get;
const SHADOW_ROOT = Object.getOwnPropertyDescriptor(ELEMENT, 'shadowRoot').get;
const tagName = (el) => LOCAL_NAME.call(el);
/// Hidden by the `hidden` attribute; made inert by the `inert` attribute.
export const hiddenAttr = (el) => has(el, 'hidden');
export const inertAttr = (el) => has(el, 'inert');

/// The element's parent across shadow boundaries.
export function parentOf(node) {
  if (node.assignedSlot) return node.assignedSlot;
  if (node.parentElement) return node.parentElement;
  const root = node.getRootNode?.();
  return root && root.host ? root.host : null;
}

/// `el` or an ancestor (across shadow roots) matching `test`; that one or null.
export function closestComposed(el, test) {
  for (let n = el; n; n = parentOf(n)) if (n instanceof Element && test(n)) return n;
  return null;
}

export const inAssistant = (node) => {
  const el = node && node.nodeType === 1 ? node : node?.parentElement;
  return !!el && !!closestComposed(el, (n) => has(n, ASSISTANT_ATTR));
};

/// The element's children as they are rendered: a shadow root's, a slot's assigned ones.
function childrenOf(el) {
  const shadow = SHADOW_ROOT.call(el);
  if (shadow) return [...shadow.children];
  if (tagName(el) === 'slot' && typeof el.assignedElements === 'function') {
    const assigned = el.assignedElements({ flatten: true });
    if (assigned.length) return assigned;
  }
  return [...CHILDREN.call(el)];
}

/// The element draws a box a person can see (opacity aside: faded is still there).
function visible(el, style) {
  if (style.visibility === 'hidden' || style.visibility === 'collapse') return false;
  if (typeof el.checkVisibility === 'function') return el.checkVisibility();
  return el.getClientRects().length > 0;
}

function levelOf(el) {
  const aria = parseInt(attr(el, 'aria-level') || '', 10);
  if (aria > 0) return aria;
  const m = /^h([1-6])$/.exec(tagName(el));
  return m ? Number(m[1]) : undefined;
}

function checkedOf(el, role) {
  if (!CHECKABLE.has(role)) return undefined;
  if (tagName(el) === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
    return el.indeterminate ? 'mixed' : el.checked;
  }
  const v = attr(el, 'aria-checked');
  if (v === 'mixed') return 'mixed';
  return v === 'true';
}

function valueOf(el, role) {
  if (!VALUED.has(role)) return undefined;
  const tag = tagName(el);
  if (tag === 'select') return [...el.selectedOptions].map((o) => flat(o.label || o.text)).join(', ');
  if (tag === 'input' || tag === 'textarea') {
    if (el.type === 'password') return el.value ? '••••••' : '';
    return el.value;
  }
  const text = attr(el, 'aria-valuetext') ?? attr(el, 'aria-valuenow');
  if (text !== null) return text;
  if (tag === 'progress' || tag === 'meter') return String(el.value);
  // A custom text field's value is its text; a custom combobox's only when it is editable.
  if (role === 'textbox' || role === 'searchbox') return el.textContent;
  if (role === 'combobox' && el.isContentEditable) return el.textContent;
  return undefined;
}

export function disabledOf(el) {
  if (typeof el.matches === 'function' && el.matches(':disabled')) return true;
  return !!closestComposed(el, (n) => attr(n, 'aria-disabled') === 'true');
}

function statesOf(el, role) {
  const s = {};
  if (role === 'heading') s.level = levelOf(el);
  const checked = checkedOf(el, role);
  if (checked !== undefined) s.checked = checked;
  const pressed = attr(el, 'aria-pressed');
  if (pressed === 'true') s.pressed = true;
  else if (pressed === 'mixed') s.pressed = 'mixed';
  const expanded = attr(el, 'aria-expanded');
  if (expanded === 'true') s.expanded = true;
  else if (expanded === 'false') s.expanded = false;
  else if (tagName(el) === 'summary' && el.parentElement?.localName === 'details') s.expanded = el.parentElement.open;
  if (attr(el, 'aria-selected') === 'true') s.selected = true;
  if (disabledOf(el)) s.disabled = true;
  const field = ['input', 'select', 'textarea'].includes(tagName(el));
  if ((field && el.required === true) || attr(el, 'aria-required') === 'true') s.required = true;
  if (attr(el, 'aria-invalid') === 'true') s.invalid = true;
  const value = valueOf(el, role);
  if (value !== undefined && value !== '') s.value = value;
  return s;
}

/// The element's role (dom-accessibility-api's, with the input types it leaves out), or null.
export function roleOf(el) {
  let role = null;
  try {
    role = getRole(el);
  } catch {
    role = null;
  }
  if (!role && tagName(el) === 'input') role = INPUT_ROLES[(attr(el, 'type') || '').toLowerCase()] || null;
  return role;
}

/// The accessible name; `hidden`: of an element that is hidden (else the name is empty).
export function nameOf(el, hidden = false) {
  try {
    return flat(computeAccessibleName(el, hidden ? { hidden: true } : {}));
  } catch {
    return flat(attr(el, 'aria-label') || '');
  }
}

/// The page's elements that have a role, in document order, each as {el, key, role, name,
/// states, text, depth, shown}. `all`: hidden ones too (marked shown: false), so an action on
/// one can say why not; otherwise only what is visible, and unnamed structure only when
/// something is under it.
export function collect(root, { all = false } = {}) {
  const items = [];
  // An open modal dialog makes the rest of the page inert.
  const modal = modalDialog();
  const toModal = new Set();
  for (let n = modal; n; n = parentOf(n)) toModal.add(n);
  const walk = (el, depth, hiddenAbove, inModal) => {
    if (!(el instanceof Element) || SKIP_TAGS.has(tagName(el)) || has(el, ASSISTANT_ATTR)) return;
    let hidden = hiddenAbove;
    if (!hidden && (hiddenAttr(el) || attr(el, 'aria-hidden') === 'true' || inertAttr(el))) hidden = true;
    if (modal && !inModal) {
      if (el === modal) inModal = true;
      else if (!toModal.has(el)) hidden = true;
    }
    const style = getComputedStyle(el);
    if (!hidden && style.display === 'none') hidden = true;
    if (hidden && !all) return;
    const role = roleOf(el);
    let item = null;
    if (role && !IGNORED_ROLES.has(role)) {
      const shown = !hidden && visible(el, style);
      if (shown || all) {
        const name = nameOf(el, !shown);
        const text = !name && LIVE.has(role) ? flat(el.textContent) : '';
        if (name || text || STRUCTURE.has(role)) {
          item = { el, key: el, role, name, states: statesOf(el, role), text, depth, shown };
          items.push(item);
        }
      }
    }
    // A native select's options are its value; a live region's words are its text.
    if (tagName(el) === 'select' || tagName(el) === 'datalist' || (item && item.text)) return;
    const before = items.length;
    for (const child of childrenOf(el)) walk(child, item ? depth + 1 : depth, hidden, inModal);
    if (!item || all) return; // an action looks for names as they are
    if (!item.name && !item.text && items.length === before) items.pop(); // bare structure
    else if (WRAPPERS.has(role) && items.length === before + 1) {
      // A cell (row, list item) around one element is that element.
      items.splice(before - 1, 1);
      items[before - 1].depth = depth;
    } else if (WRAPPERS.has(role) && items.length > before) {
      // Around several: its name is theirs, said again; it stays as structure.
      item.name = '';
    }
  };
  if (root) walk(root, 0, false, false);
  return items;
}

/// The open modal <dialog>, if there is one (the rest of the page is inert while it is open).
export function modalDialog() {
  try {
    return document.querySelector('dialog:modal');
  } catch {
    return null;
  }
}

/// A short name for an element that has none to show: `div#veil.overlay`.
function tagOf(el) {
  const id = attr(el, 'id') ? `#${attr(el, 'id')}` : '';
  const classes = (attr(el, 'class') || '').trim();
  const cls = classes ? `.${classes.split(/\s+/).slice(0, 2).join('.')}` : '';
  return `${tagName(el)}${id}${cls}`;
}

/// How a person would call `el`: its role and name, or its tag.
export function label(el) {
  const role = roleOf(el);
  const name = role && !IGNORED_ROLES.has(role) ? nameOf(el) || nameOf(el, true) : '';
  return role && name ? what(role, name) : tagOf(el);
}

/// The nearest named ancestor that says where `el` is: `row "Alice 42"`, `dialog "Delete?"`.
export function contextOf(el) {
  const own = nameOf(el);
  for (let n = parentOf(el); n; n = parentOf(n)) {
    if (!(n instanceof Element) || n === document.body) break;
    const role = roleOf(n);
    if (!role || !CONTEXTS.has(role)) continue;
    const name = nameOf(n);
    if (name && name !== own) return what(role, name);
  }
  return '';
}

// ---- settling ------------------------------------------------------------------------------

/// Resolve (with the milliseconds it took) once the page has not changed for `quiet` ms, or
/// after `max` ms whatever it does. Changes inside the assistant's panel do not count.
export function settle({ quiet = SETTLE_QUIET_MS, max = SETTLE_MAX_MS } = {}) {
  const start = performance.now();
  return new Promise((resolve) => {
    let timer = 0;
    let cap = 0;
    const done = () => {
      observer.disconnect();
      clearTimeout(timer);
      clearTimeout(cap);
      resolve(Math.round(performance.now() - start));
    };
    const observer = new MutationObserver((records) => {
      if (records.every((r) => inAssistant(r.target))) return;
      clearTimeout(timer);
      timer = setTimeout(done, quiet);
    });
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    timer = setTimeout(done, quiet);
    cap = setTimeout(done, max);
  });
}

/// A watcher started before an action: changes the action makes at once are counted too.
export function watch() {
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver((records) => {
    if (records.some((r) => !inAssistant(r.target))) last = performance.now();
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  return {
    /// Wait until quiet; the milliseconds since the watch began.
    async done({ quiet = SETTLE_QUIET_MS, max = SETTLE_MAX_MS } = {}) {
      for (;;) {
        const now = performance.now();
        if (now - start >= max) break;
        const still = now - last;
        if (still >= quiet && now - start >= quiet) break;
        await new Promise((r) => setTimeout(r, Math.max(10, Math.min(quiet - still, max - (now - start)))));
      }
      observer.disconnect();
      return Math.round(performance.now() - start);
    },
  };
}
