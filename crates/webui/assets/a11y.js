// The in-app assistant's hands on the page, through its accessibility tree: describe what is
// there (roles and accessible names as dom-accessibility-api computes them, with states), and
// click or fill an element named by role + accessible name or by a ref from the last
// description. Every action refuses, with the reason, an element a person could not use
// (hidden, disabled, inert, covered), fires the events frameworks listen to, waits for the
// page to settle and says what changed. Errors come back as {ok: false, error}, never thrown.

import { computeAccessibleName, getRole, isInaccessible } from './vendor/dom-accessibility-api/index.mjs';
import {
  ambiguousError,
  byName,
  diffSnapshots,
  flat,
  formatTree,
  notFoundError,
  optionIndex,
  parseBool,
  parseRef,
  readTarget,
  roleFits,
  splitList,
  what,
} from './a11y-text.js';

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
// Roles looked for when none of the role asked for has the name.
const FALLBACK = { radio: ['radiogroup', 'group'], option: ['listbox', 'combobox'] };
const CHECKABLE = new Set(['checkbox', 'switch', 'radio', 'menuitemcheckbox', 'menuitemradio']);
const VALUED = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox', 'progressbar', 'meter', 'scrollbar']);

const SETTLE_QUIET_MS = 150;
const SETTLE_MAX_MS = 3000;

// ---- refs ----------------------------------------------------------------------------------

// A description starts a new snapshot; its refs (and refs handed out by the actions after it,
// for what appeared) are `s{snapshot}e{n}`. A ref of an older snapshot is refused.
const refs = { snapshot: 0, next: 1, of: new WeakMap(), byRef: new Map() };

function newSnapshot() {
  refs.snapshot += 1;
  refs.next = 1;
  refs.of = new WeakMap();
  refs.byRef = new Map();
}

function refOf(el) {
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
const attr = (el, name) => ELEMENT.getAttribute.call(el, name);
const has = (el, name) => ELEMENT.hasAttribute.call(el, name);
const LOCAL_NAME = Object.getOwnPropertyDescriptor(ELEMENT, 'localName').get;
const CHILDREN = Object.getOwnPropertyDescriptor(ELEMENT, 'children').get;
const SHADOW_ROOT = Object.getOwnPropertyDescriptor(ELEMENT, 'shadowRoot').get;
const tagName = (el) => LOCAL_NAME.call(el);
/// Hidden by the `hidden` attribute; made inert by the `inert` attribute.
const hiddenAttr = (el) => has(el, 'hidden');
const inertAttr = (el) => has(el, 'inert');

/// The element's parent across shadow boundaries.
function parentOf(node) {
  if (node.assignedSlot) return node.assignedSlot;
  if (node.parentElement) return node.parentElement;
  const root = node.getRootNode?.();
  return root && root.host ? root.host : null;
}

/// `el` or an ancestor (across shadow roots) matching `test`; that one or null.
function closestComposed(el, test) {
  for (let n = el; n; n = parentOf(n)) if (n instanceof Element && test(n)) return n;
  return null;
}

const inAssistant = (node) => {
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

function disabledOf(el) {
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
function roleOf(el) {
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
function nameOf(el, hidden = false) {
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
function collect(root, { all = false } = {}) {
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
function modalDialog() {
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
function label(el) {
  const role = roleOf(el);
  const name = role && !IGNORED_ROLES.has(role) ? nameOf(el) || nameOf(el, true) : '';
  return role && name ? what(role, name) : tagOf(el);
}

/// The nearest named ancestor that says where `el` is: `row "Alice 42"`, `dialog "Delete?"`.
function contextOf(el) {
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

/// Describe the page under `root` (the assistant's panel left out) as an indented tree of
/// `- role "name" [states] [ref=sNeM]` lines: {text, refs: [{ref, role, name}], snapshot,
/// count, truncated}. Starts a new snapshot: refs from earlier ones stop working.
export function describeAppUi(root = document.body, { maxChars = 48000 } = {}) {
  newSnapshot();
  const items = collect(root || document.body);
  const { text, shown, truncated } = formatTree(items, {
    maxChars,
    assignRef: (item) => {
      if (item.name || item.text) item.ref = refOf(item.el); // bare structure needs no ref
    },
  });
  // Refs of lines that did not fit are not handed out.
  const out = [];
  items.forEach((item, i) => {
    if (!item.ref) return;
    if (i < shown) out.push({ ref: item.ref, role: item.role, name: item.name });
    else {
      refs.byRef.delete(item.ref);
      refs.of.delete(item.el);
    }
  });
  return {
    text,
    refs: out,
    snapshot: refs.snapshot,
    count: items.length,
    truncated,
  };
}

// ---- finding the target --------------------------------------------------------------------

class Refusal extends Error {}

/// The element an action means: by ref (of the current snapshot), else by role + accessible
/// name, exactly one (a visible one preferred over hidden namesakes).
function resolve(args) {
  const { role, name, ref } = readTarget(args);
  if (ref) {
    const parsed = parseRef(ref);
    if (!parsed) throw new Refusal(`"${ref}" is not a ref (refs look like s3e12); describe again`);
    if (parsed.snapshot !== refs.snapshot) {
      throw new Refusal(
        parsed.snapshot < refs.snapshot
          ? `ref ${ref}: snapshot is stale; describe again`
          : `ref ${ref} is unknown; describe again`,
      );
    }
    const el = refs.byRef.get(ref)?.deref();
    if (!el) throw new Refusal(`ref ${ref} is unknown; describe again`);
    if (!el.isConnected) throw new Refusal(`the element ${ref} is no longer on the page; describe again`);
    return el;
  }
  if (!name) throw new Refusal('name the element: its role and accessible name ("description"), or a ref from describe_app_ui');
  const items = collect(document.body, { all: true });
  const ofRole = items.filter((i) => roleFits(i.role, role));
  let matches = byName(ofRole, name);
  // "the radio Shipping" is the radio group of that name (a model often calls it so).
  if (!matches.length && FALLBACK[role]) matches = byName(items.filter((i) => FALLBACK[role].includes(i.role)), name);
  if (matches.length > 1) {
    const seen = matches.filter((m) => m.shown);
    if (seen.length >= 1) matches = seen;
  }
  if (matches.length === 1) return matches[0].el;
  if (matches.length === 0) {
    const sameName = role ? byName(items.filter((i) => i.shown), name) : [];
    for (const c of sameName) c.ref = refOf(c.el);
    throw new Refusal(notFoundError(role, name, ofRole.filter((i) => i.shown), sameName));
  }
  const candidates = matches.map((m) => ({
    role: m.role,
    name: m.name,
    ref: m.shown ? refOf(m.el) : null,
    hidden: !m.shown,
    context: contextOf(m.el),
  }));
  throw new Refusal(ambiguousError(role, name, candidates));
}

/// The element under the point, through open shadow roots, the assistant's panel ignored.
function hitAt(x, y) {
  let hit = document.elementsFromPoint(x, y).find((e) => !inAssistant(e)) || null;
  for (let depth = 0; hit?.shadowRoot && depth < 20; depth += 1) {
    const inner = hit.shadowRoot.elementsFromPoint(x, y).find((e) => !inAssistant(e));
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
}

const within = (node, el) => !!closestComposed(node, (n) => n === el);

/// Why a person could not use `el` now, or null (it is then scrolled into view); and the point
/// a click lands on, and what is there.
function reach(el) {
  if (!el.isConnected) return { why: 'it is no longer on the page' };
  const who = label(el);
  if (closestComposed(el, inertAttr)) return { why: `${who} is inert (out of reach, e.g. behind a modal dialog)` };
  const modal = modalDialog();
  if (modal && !closestComposed(el, (n) => n === modal)) return { why: `${who} is inert: ${label(modal)} is open in front of it` };
  let hidden = false;
  try {
    hidden = isInaccessible(el);
  } catch {
    hidden = false;
  }
  if (hidden || (typeof el.checkVisibility === 'function' && !el.checkVisibility()) || closestComposed(el, hiddenAttr)) {
    return { why: `${who} is hidden` };
  }
  if (el.matches?.(':disabled')) return { why: `${who} is disabled` };
  if (closestComposed(el, (n) => attr(n, 'aria-disabled') === 'true')) return { why: `${who} is disabled (aria-disabled)` };
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  let box = el.getBoundingClientRect();
  // A visually hidden control (a styled checkbox) is used through its label.
  if ((box.width < 2 || box.height < 2) && el.labels?.length) {
    const lbl = [...el.labels].find((l) => l.getClientRects().length);
    if (lbl) {
      lbl.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      box = lbl.getBoundingClientRect();
    }
  }
  if (box.width < 1 || box.height < 1) return { why: `${who} has no size on the page (it is hidden)` };
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return { why: `${who} is outside the visible area and could not be scrolled into it` };
  const hit = hitAt(x, y);
  const ok = hit && (within(hit, el) || [...(el.labels || [])].some((l) => within(hit, l)));
  if (!ok) return { why: `${who} is covered by ${hit ? label(hit) : 'something'} at its center` };
  return { why: null, x, y, hit };
}

function refuseUnreachable(el) {
  const r = reach(el);
  if (r.why) throw new Refusal(r.why);
  return r;
}

// ---- acting --------------------------------------------------------------------------------

/// A person's click at (x, y): pointer and mouse down, focus, up, click. On `target` (what is
/// under the point, inside the element) when given.
function press(el, { x, y, hit } = {}) {
  const box = el.getBoundingClientRect();
  const cx = x ?? box.left + box.width / 2;
  const cy = y ?? box.top + box.height / 2;
  const target = hit && within(hit, el) ? hit : el;
  const base = { bubbles: true, cancelable: true, composed: true, clientX: cx, clientY: cy, button: 0, view: window };
  const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true };
  const Pointer = typeof PointerEvent === 'function' ? PointerEvent : MouseEvent;
  target.dispatchEvent(new Pointer('pointerdown', { ...pointer, buttons: 1 }));
  const down = target.dispatchEvent(new MouseEvent('mousedown', { ...base, buttons: 1, detail: 1 }));
  if (down && typeof el.focus === 'function') el.focus({ preventScroll: true });
  target.dispatchEvent(new Pointer('pointerup', { ...pointer, buttons: 0 }));
  target.dispatchEvent(new MouseEvent('mouseup', { ...base, buttons: 0, detail: 1 }));
  target.dispatchEvent(new MouseEvent('click', { ...base, buttons: 0, detail: 1 }));
}

/// The setter of `prop` on the element's prototype chain (not an own property a framework
/// put on the element to watch it), so a framework's value tracker sees the change as a user's.
function nativeSetter(el, prop) {
  for (let p = Object.getPrototypeOf(el); p; p = Object.getPrototypeOf(p)) {
    const d = Object.getOwnPropertyDescriptor(p, prop);
    if (d?.set) return d.set;
  }
  return null;
}

function setNative(el, prop, value) {
  const set = nativeSetter(el, prop);
  if (set) set.call(el, value);
  else el[prop] = value;
}

function fire(el, type, init = {}) {
  const Kind = type === 'input' && typeof InputEvent === 'function' ? InputEvent : Event;
  el.dispatchEvent(new Kind(type, { bubbles: true, composed: type === 'input', cancelable: false, ...init }));
}

/// Type `value` into an input or textarea as a person's edit: focus, the native value setter,
/// input and change, blur.
function typeInto(el, value, { blur = true, change = true } = {}) {
  el.focus({ preventScroll: true });
  setNative(el, 'value', value);
  fire(el, 'input', { inputType: 'insertReplacementText', data: value });
  if (change) fire(el, 'change');
  if (blur) el.blur();
}

function typeIntoEditable(el, value) {
  el.focus({ preventScroll: true });
  const sel = getSelection();
  const range = document.createRange();
  range.selectNodeContents(el);
  sel?.removeAllRanges();
  sel?.addRange(range);
  let done = false;
  try {
    // An editor (ProseMirror, Lexical, Quill) hears beforeinput/input as from a keyboard.
    done = document.execCommand(value ? 'insertText' : 'delete', false, value);
  } catch {
    done = false;
  }
  if (!done || flat(el.textContent) !== flat(value)) {
    el.textContent = value;
    fire(el, 'input', { inputType: 'insertReplacementText', data: value });
  }
  el.blur();
}

const TEXT_TYPES = new Set([
  '', 'text', 'email', 'search', 'tel', 'url', 'password', 'number', 'date', 'datetime-local', 'month', 'week', 'time', 'color',
]);

function checkedNow(el) {
  if (el.localName === 'input') return el.checked;
  return el.getAttribute('aria-checked') === 'true';
}

function radiosWith(el) {
  if (el.localName === 'input' && el.type === 'radio' && el.name) {
    const scope = el.form || el.getRootNode();
    return [...scope.querySelectorAll('input[type="radio"]')].filter((r) => r.name === el.name && (r.form || null) === (el.form || null));
  }
  const group = closestComposed(el, (n) => attr(n, 'role') === 'radiogroup');
  return group ? radiosIn(group) : [el];
}

function radiosIn(group) {
  return [...group.querySelectorAll('input[type="radio"], [role="radio"]')];
}

/// The radio of `radios` named `value` (exact, then ignoring case).
function pickRadio(radios, value, where) {
  const named = radios.map((r) => ({ el: r, role: 'radio', name: nameOf(r) }));
  const found = byName(named, value);
  if (found.length === 1) return found[0].el;
  const names = named.map((n) => `"${n.name}"`).join(', ');
  if (found.length === 0) throw new Refusal(`${where} has no option named "${value}"; its options are: ${names}`);
  throw new Refusal(`${where} has ${found.length} options named "${value}"`);
}

async function setChecked(el, want, who) {
  if (checkedNow(el) === want) return;
  const r = refuseUnreachable(el);
  press(el, r);
  await settle();
  if (checkedNow(el) !== want) throw new Refusal(`${who} is still ${want ? 'unchecked' : 'checked'} after clicking it`);
}

function idRefs(el, name) {
  const ids = (attr(el, name) || '').split(/\s+/).filter(Boolean);
  const root = el.getRootNode();
  return ids.map((id) => root.getElementById?.(id) || document.getElementById(id)).filter(Boolean);
}

/// The listbox a combobox controls (aria-controls / aria-owns, on it or on a combobox around
/// it), else the one visible listbox on the page.
function listboxOf(el) {
  const owners = [el, closestComposed(parentOf(el) || el, (n) => attr(n, 'role') === 'combobox')].filter(Boolean);
  for (const o of owners) {
    for (const link of ['aria-controls', 'aria-owns']) {
      for (const t of idRefs(o, link)) {
        if (attr(t, 'role') === 'listbox') return t;
        const inner = t.querySelector('[role="listbox"]');
        if (inner) return inner;
      }
    }
  }
  const open = [...document.querySelectorAll('[role="listbox"]')].filter((l) => !inAssistant(l) && l.checkVisibility?.() !== false);
  return open.length === 1 ? open[0] : null;
}

function optionsOf(listbox) {
  const owned = idRefs(listbox, 'aria-owns');
  const inside = (n) => (attr(n, 'role') === 'option' ? [n] : [...n.querySelectorAll('[role="option"]')]);
  const all = [...listbox.querySelectorAll('[role="option"]'), ...owned.flatMap(inside)];
  return all.filter((o) => o.checkVisibility?.() !== false).map((o) => ({ el: o, role: 'option', name: nameOf(o) }));
}

async function chooseOption(listbox, value, who) {
  const options = optionsOf(listbox);
  const found = byName(options, value);
  if (found.length > 1) throw new Refusal(`${who}: ${found.length} options are named "${value}"`);
  if (found.length === 0) return { options };
  const option = found[0].el;
  if (disabledOf(option)) throw new Refusal(`${who}: the option "${found[0].name}" is disabled`);
  option.scrollIntoView({ block: 'nearest', behavior: 'instant' });
  const r = reach(option);
  press(option, r.why ? {} : r);
  return { chosen: found[0].name, options };
}

async function fillCombobox(el, value, who) {
  const editable = el.localName === 'input' || el.localName === 'textarea' || el.isContentEditable;
  const r = refuseUnreachable(el);
  if (el.getAttribute('aria-expanded') !== 'true') press(el, r);
  if (editable) {
    if (el.isContentEditable) typeIntoEditable(el, value);
    else typeInto(el, value, { blur: false, change: false });
  }
  await settle({ max: 1500 });
  const listbox = listboxOf(el);
  const pick = listbox ? await chooseOption(listbox, value, who) : { options: [] };
  if (pick.chosen) return;
  if (editable) {
    // No such option: the typed value stands (a free-text combobox).
    if (!el.isContentEditable) fire(el, 'change');
    return;
  }
  const names = pick.options.slice(0, 20).map((o) => `"${o.name}"`).join(', ');
  throw new Refusal(`${who} has no option named "${value}"${names ? `; its options are: ${names}` : ' (no list of options opened)'}`);
}

function fillSelect(el, value, who) {
  const options = [...el.options].map((o) => ({ el: o, label: o.label || o.text, value: o.value }));
  const names = () => options.slice(0, 20).map((o) => `"${flat(o.label)}"`).join(', ');
  const wanted = el.multiple ? splitList(value) : [String(value ?? '')];
  const picked = [];
  for (const w of wanted) {
    const i = optionIndex(options, w);
    if (i < 0) throw new Refusal(`${who} has no option "${w}"; its options are: ${names()}`);
    if (options[i].el.disabled) throw new Refusal(`${who}: the option "${flat(options[i].label)}" is disabled`);
    picked.push(i);
  }
  el.focus({ preventScroll: true });
  if (el.multiple) {
    options.forEach((o, i) => {
      o.el.selected = picked.includes(i);
    });
  } else {
    setNative(el, 'selectedIndex', picked[0]);
  }
  fire(el, 'input');
  fire(el, 'change');
  el.blur();
}

async function fill(el, value) {
  const role = roleOf(el);
  const who = label(el);
  const tag = el.localName;
  const type = tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : '';
  const text = value === undefined || value === null ? '' : typeof value === 'string' ? value : String(value);

  if (type === 'checkbox' || role === 'checkbox' || role === 'switch' || role === 'menuitemcheckbox') {
    const want = parseBool(text);
    if (want === null) throw new Refusal(`${who} is a ${role || 'checkbox'}: fill it with "true" or "false"`);
    refuseUnreachable(el);
    await setChecked(el, want, who);
    return;
  }
  if (type === 'radio' || role === 'radio') {
    const yes = parseBool(text);
    refuseUnreachable(el);
    if (text === '' || yes === true || flat(text).toLowerCase() === nameOf(el).toLowerCase()) return setChecked(el, true, who);
    if (yes === false) throw new Refusal(`${who} is a radio: it is unselected by choosing another option of its group`);
    const target = pickRadio(radiosWith(el), text, `the group of ${who}`);
    refuseUnreachable(target);
    return setChecked(target, true, label(target));
  }
  if (role === 'radiogroup' || (role === 'group' && radiosIn(el).length)) {
    const target = pickRadio(radiosIn(el), text, who);
    refuseUnreachable(target);
    return setChecked(target, true, label(target));
  }
  if (tag === 'select') {
    refuseUnreachable(el);
    return fillSelect(el, text, who);
  }
  if (role === 'combobox' && !(tag === 'input' && el.hasAttribute('list'))) return fillCombobox(el, text, who);
  if (role === 'listbox') {
    refuseUnreachable(el);
    const want = el.getAttribute('aria-multiselectable') === 'true' ? splitList(text) : [text];
    for (const w of want) {
      const pick = await chooseOption(el, w, who);
      if (!pick.chosen) {
        const names = pick.options.slice(0, 20).map((o) => `"${o.name}"`).join(', ');
        throw new Refusal(`${who} has no option named "${w}"; its options are: ${names}`);
      }
      await settle({ max: 1000 });
    }
    return;
  }
  if (tag === 'textarea' || (tag === 'input' && (TEXT_TYPES.has(type) || !type))) {
    refuseUnreachable(el);
    if (el.readOnly) throw new Refusal(`${who} is read-only`);
    typeInto(el, text);
    if (type === 'number' && text.trim() !== '' && el.value === '') throw new Refusal(`${who} takes a number; "${text}" is not one`);
    return;
  }
  if (type === 'range') {
    refuseUnreachable(el);
    if (!Number.isFinite(Number(text)) || text.trim() === '') throw new Refusal(`${who} is a slider: fill it with a number`);
    typeInto(el, text);
    return;
  }
  if (el.isContentEditable) {
    refuseUnreachable(el);
    typeIntoEditable(el, text);
    return;
  }
  throw new Refusal(`${who} cannot be filled in${role === 'button' || role === 'link' ? '; click it instead' : ''}`);
}

// ---- settling, and what changed ------------------------------------------------------------

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
function watch() {
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

const where = () => `${location.pathname}${location.hash}`;

/// The plain-data view of the page that two snapshots are compared by.
function snapshotItems() {
  return collect(document.body).filter((i) => i.name || i.text);
}

// Actions run one at a time, each after the page settled from the one before.
let queue = Promise.resolve();

/// Run `fn` after every action queued before it has finished (and the page has settled).
export function serial(fn) {
  const run = queue.then(fn, fn);
  queue = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

async function act(args, perform, { signal } = {}) {
  return serial(async () => {
    if (signal?.aborted) return { ok: false, error: 'cancelled before it ran' };
    try {
      const before = snapshotItems();
      const url = where();
      const el = resolve(args || {});
      const watching = watch();
      let error = null;
      try {
        await perform(el);
      } catch (e) {
        error = e;
      }
      const settled_ms = await watching.done();
      if (error) throw error;
      const after = snapshotItems();
      const changed = diffSnapshots(before, after, { refOf: (i) => refOf(i.el) });
      if (where() !== url) changed.unshift(`the address changed: ${url} → ${where()}`);
      return { ok: true, changed, settled_ms };
    } catch (e) {
      return { ok: false, error: e instanceof Refusal ? e.message : `failed: ${e?.message || e}` };
    }
  });
}

/// Click the element named by `ref`, or by `role` + accessible name (`description`).
/// {ok: true, changed: [lines], settled_ms} or {ok: false, error}.
export function clickElement({ role, description, ref } = {}, options = {}) {
  return act({ role, description, ref }, (el) => press(el, refuseUnreachable(el)), options);
}

/// Fill the element named by `ref`, or by `role` + accessible name, with `value`: text fields,
/// textareas, contenteditable, checkboxes and switches ("true"/"false"), radios, selects
/// (several: a comma list), comboboxes, sliders and numbers. As clickElement answers.
export function fillFormElement({ role, description, value, ref } = {}, options = {}) {
  return act({ role, description, ref }, (el) => fill(el, value), options);
}

/// describeAppUi, after the actions queued before it have settled.
export function describeWhenSettled(root = document.body, options = {}) {
  return serial(() => describeAppUi(root, options));
}
