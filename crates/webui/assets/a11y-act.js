// The in-app assistant's hands on the page (a11y.js runs them one at a time and says what
// changed): find the element an action means, by a ref from the last description or by role +
// accessible name; refuse, with the reason, one a person could not use (hidden, disabled,
// inert, covered); click it as a person's pointer would; and fill a form field of any kind
// (text, checkbox, radio, select, combobox, listbox, slider, contenteditable), firing the
// events frameworks listen to. A refusal is thrown as a Refusal, its message the reason.

import { isInaccessible } from './vendor/dom-accessibility-api/index.mjs';
import {
  ambiguousError,
  byName,
  flat,
  notFoundError,
  optionIndex,
  parseBool,
  parseRef,
  readTarget,
  roleFits,
  splitList,
} from './a11y-text.js';
import {
  attr,
  closestComposed,
  collect,
  contextOf,
  disabledOf,
  hiddenAttr,
  inAssistant,
  inertAttr,
  label,
  modalDialog,
  nameOf,
  parentOf,
  refOf,
  refs,
  roleOf,
  settle,
} from './a11y-page.js';

// Roles looked for when none of the role asked for has the name.
const FALLBACK = { radio: ['radiogroup', 'group'], option: ['listbox', 'combobox'] };

// ---- finding the target --------------------------------------------------------------------

/// Why an action was not done, in words for the model.
export class Refusal extends Error {}

/// The element an action means: by ref (of the current snapshot), else by role + accessible
/// name, exactly one (a visible one preferred over hidden namesakes).
export function resolve(args) {
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

export function refuseUnreachable(el) {
  const r = reach(el);
  if (r.why) throw new Refusal(r.why);
  return r;
}

// ---- acting --------------------------------------------------------------------------------

/// A person's click at (x, y): pointer and mouse down, focus, up, click. On `target` (what is
/// under the point, inside the element) when given.
export function press(el, { x, y, hit } = {}) {
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

/// Fill `el` with `value` as its kind of field takes it; a Refusal when it cannot be.
export async function fill(el, value) {
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
