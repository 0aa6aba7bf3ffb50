// The words of the assistant's page tools, from plain data: a describe tree's lines, the
// changes between two snapshots, matching by accessible name, and the error that lists the
// candidates. No DOM here (a11y-page.js reads the page; node's tests run these as they are).

export const NAME_MAX = 100; // characters of a name shown in a line (matching uses the whole name)
export const VALUE_MAX = 80; // characters of a field's value shown
export const TEXT_MAX = 200; // characters of a live region's text shown
export const CANDIDATES_MAX = 10;
export const CHANGES_MAX = 40;

/// Whitespace runs as one space, trimmed.
export const flat = (text) => String(text ?? '').replace(/\s+/g, ' ').trim();

/// `text` cut to `max` characters, an ellipsis marking the cut.
export function clip(text, max) {
  const s = String(text ?? '');
  if (s.length <= max) return s;
  return `${s.slice(0, Math.max(0, max - 1))}…`;
}

/// `text` in double quotes, its own quotes and line breaks escaped (a name is one line).
export const quote = (text) => `"${String(text).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, ' ')}"`;

/// The state words of an item, in a fixed order: [checked], [expanded], value="…", …
/// `states`: {checked: true|false|'mixed', pressed, expanded, selected, disabled, required,
/// invalid, level, value}.
export function stateWords(states = {}) {
  const out = [];
  if (states.level) out.push(`[level=${states.level}]`);
  if (states.checked === 'mixed') out.push('[mixed]');
  else if (states.checked === true) out.push('[checked]');
  else if (states.checked === false) out.push('[unchecked]');
  if (states.pressed === 'mixed') out.push('[pressed=mixed]');
  else if (states.pressed === true) out.push('[pressed]');
  if (states.expanded === true) out.push('[expanded]');
  else if (states.expanded === false) out.push('[collapsed]');
  if (states.selected) out.push('[selected]');
  if (states.disabled) out.push('[disabled]');
  if (states.required) out.push('[required]');
  if (states.invalid) out.push('[invalid]');
  if (states.value !== undefined && states.value !== null && states.value !== '') {
    out.push(`value=${quote(clip(flat(states.value), VALUE_MAX))}`);
  }
  return out;
}

/// One item as a line without its indent: `- button "Build" [disabled] [ref=s3e12]`. An item
/// is {role, name, states, text, ref}; `text` (a live region's words) follows a colon.
export function formatLine(item) {
  let line = `- ${item.role}`;
  if (item.name) line += ` ${quote(clip(flat(item.name), NAME_MAX))}`;
  const words = stateWords(item.states);
  if (words.length) line += ` ${words.join(' ')}`;
  if (item.ref) line += ` [ref=${item.ref}]`;
  if (item.text) line += `: ${clip(flat(item.text), TEXT_MAX)}`;
  return line;
}

/// The items (in document order, each with `depth`) as an indented tree of at most
/// `maxChars` characters; when they do not all fit, a last line says how many were left out.
/// `assignRef(item)` is called for each shown item before it is written (a11y.js hands out refs
/// only to what the model sees). {text, shown, truncated}.
export function formatTree(items, { maxChars = 48000, assignRef = null } = {}) {
  const lines = [];
  let size = 0;
  let shown = 0;
  const reserve = 90; // room for the closing line
  for (const item of items) {
    if (assignRef) assignRef(item);
    const line = '  '.repeat(item.depth || 0) + formatLine(item);
    if (size + line.length + 1 > maxChars - reserve) break;
    lines.push(line);
    size += line.length + 1;
    shown += 1;
  }
  const left = items.length - shown;
  if (left > 0) lines.push(`… ${left} more element${left === 1 ? '' : 's'} left out (the description is capped at ${maxChars} characters)`);
  return { text: lines.join('\n'), shown, truncated: left > 0 };
}

/// The items whose accessible name is `name`: those equal to it; else equal ignoring case;
/// else, when `name` ends in an ellipsis (a name the tree cut), those starting with the rest.
export function byName(items, name) {
  const want = flat(name);
  const exact = items.filter((i) => flat(i.name) === want);
  if (exact.length) return exact;
  const lower = want.toLowerCase();
  const folded = items.filter((i) => flat(i.name).toLowerCase() === lower);
  if (folded.length) return folded;
  const cut = lower.replace(/(…|\.\.\.)$/, '').trim();
  if (cut !== lower && cut) return items.filter((i) => flat(i.name).toLowerCase().startsWith(cut));
  return [];
}

/// Roles a model may name for one another (a search field is a textbox to most people).
const ROLE_KIN = { textbox: ['searchbox'], searchbox: ['textbox'], switch: ['checkbox'], checkbox: ['switch'] };

/// The item's role is `role` (or a kin of it); any role when none is asked for.
export function roleFits(itemRole, role) {
  if (!role) return true;
  const want = String(role).trim().toLowerCase();
  return itemRole === want || (ROLE_KIN[want] || []).includes(itemRole);
}

/// What a target is called in a message: `button "Build"`, or `the element s3e4`.
export function what(role, name) {
  if (role && name) return `${role} ${quote(clip(flat(name), NAME_MAX))}`;
  if (name) return quote(clip(flat(name), NAME_MAX));
  return role || 'the element';
}

/// One candidate as a short line: `button "Delete" [ref=s3e4] (in row "Alice")`.
export function candidateLine(c) {
  let line = what(c.role, c.name);
  if (c.ref) line += ` [ref=${c.ref}]`;
  if (c.hidden) line += ' (hidden)';
  if (c.context) line += ` (in ${c.context})`;
  return line;
}

/// The error when `role` + `name` names more than one element: the candidates (at most
/// CANDIDATES_MAX) and how to pick one.
export function ambiguousError(role, name, candidates) {
  const list = candidates.slice(0, CANDIDATES_MAX).map((c) => `- ${candidateLine(c)}`);
  const more = candidates.length > CANDIDATES_MAX ? [`- … and ${candidates.length - CANDIDATES_MAX} more`] : [];
  return [
    `${candidates.length} elements match ${what(role, name)}; none was chosen. Pass the ref of the one you mean:`,
    ...list,
    ...more,
  ].join('\n');
}

/// The error when nothing matches: what there is of that role, or of that name, instead.
export function notFoundError(role, name, sameRole, sameName) {
  const lines = [`No ${what(role, name)} is on the page.`];
  const names = [...new Set(sameRole.map((c) => c.name).filter(Boolean))];
  if (role && names.length) {
    const shown = names.slice(0, CANDIDATES_MAX).map((n) => quote(clip(flat(n), NAME_MAX)));
    lines.push(`The ${role} elements are: ${shown.join(', ')}${names.length > CANDIDATES_MAX ? ', …' : ''}.`);
  }
  if (sameName.length) {
    lines.push(`Named so: ${sameName.slice(0, CANDIDATES_MAX).map(candidateLine).join(', ')}.`);
  }
  if (lines.length === 1) lines.push('Describe the page again to see what is there.');
  return lines.join(' ');
}

/// What an action's arguments name: {role, name, ref}. A model may paste a whole line of the
/// description (`- button "Save" [ref=s2e5]`) or quote the name; both are read as meant.
export function readTarget({ role, description, ref } = {}) {
  let r = role === undefined || role === null ? '' : String(role).trim().toLowerCase();
  let name = flat(description);
  let target = ref === undefined || ref === null || String(ref).trim() === '' ? null : String(ref).trim();
  const pasted = /\[ref=(s\d+e\d+)\]/.exec(name);
  if (!target && pasted) target = pasted[1];
  const line = /^(?:-\s*)?([a-z]+)\s+"((?:[^"\\]|\\.)*)"/.exec(name);
  if (line && (!r || r === line[1])) {
    r = line[1];
    name = line[2].replace(/\\(.)/g, '$1');
  } else {
    const quoted = /^["“'](.*)["”']$/.exec(name);
    if (quoted) name = quoted[1];
  }
  return { role: r || undefined, name, ref: target };
}

/// A ref's parts, or null: `s3e12` → {snapshot: 3, n: 12}.
export function parseRef(ref) {
  const m = /^s(\d+)e(\d+)$/.exec(String(ref ?? '').trim());
  return m ? { snapshot: Number(m[1]), n: Number(m[2]) } : null;
}

/// "true"/"false" (and yes/no, on/off, checked/unchecked, 1/0) as a boolean; null otherwise.
export function parseBool(value) {
  if (typeof value === 'boolean') return value;
  const v = String(value ?? '').trim().toLowerCase();
  if (['true', 'yes', 'on', '1', 'checked', 'check', 'sim'].includes(v)) return true;
  if (['false', 'no', 'off', '0', 'unchecked', 'uncheck', 'não', 'nao'].includes(v)) return false;
  return null;
}

/// A comma-separated list (for selects that take several), each part trimmed, none empty.
export function splitList(value) {
  if (Array.isArray(value)) return value.map((v) => flat(v)).filter(Boolean);
  return String(value ?? '')
    .split(',')
    .map((v) => flat(v))
    .filter(Boolean);
}

/// The option of `options` ({label, value}) meant by `wanted`: same label, same value, then
/// the same label ignoring case. Its index, or -1.
export function optionIndex(options, wanted) {
  const w = flat(wanted);
  let i = options.findIndex((o) => flat(o.label) === w);
  if (i < 0) i = options.findIndex((o) => String(o.value) === String(wanted));
  if (i < 0) i = options.findIndex((o) => flat(o.label).toLowerCase() === w.toLowerCase());
  return i;
}

const STATE_ORDER = ['checked', 'pressed', 'expanded', 'selected', 'disabled', 'required', 'invalid', 'value', 'level'];

function stateName(key, v) {
  if (key === 'checked') return v === 'mixed' ? 'mixed' : v === true ? 'checked' : v === false ? 'unchecked' : 'no state';
  if (key === 'expanded') return v === true ? 'expanded' : v === false ? 'collapsed' : 'no state';
  if (key === 'value') return quote(clip(flat(v ?? ''), VALUE_MAX));
  if (v === true) return key;
  if (v === 'mixed') return `${key}=mixed`;
  return `not ${key}`;
}

/// How `b` differs from `a` (same element): `unchecked → checked`, `value "" → "x"`, …
function stateChanges(a, b) {
  const out = [];
  const sa = a.states || {};
  const sb = b.states || {};
  for (const key of STATE_ORDER) {
    const va = sa[key] ?? (key === 'value' ? '' : undefined);
    const vb = sb[key] ?? (key === 'value' ? '' : undefined);
    if (key === 'value' ? flat(va) === flat(vb) : va === vb) continue;
    if (key === 'value') out.push(`value ${stateName(key, va)} → ${stateName(key, vb)}`);
    else out.push(`${stateName(key, va)} → ${stateName(key, vb)}`);
  }
  if (flat(a.text) !== flat(b.text)) out.push(`text → ${quote(clip(flat(b.text), TEXT_MAX))}`);
  return out;
}

const pairKey = (i) => `${i.role}\u0000${flat(i.name)}`;

/// What changed between two snapshots (items with a `key` that stays the same for the same
/// element): short lines, at most `max`. Elements re-made with the same role and name count
/// as the same. `refOf(item)` gives an appeared item its ref (so it can be acted on at once).
export function diffSnapshots(before, after, { max = CHANGES_MAX, refOf = (i) => i.ref } = {}) {
  const was = new Map(before.map((i) => [i.key, i]));
  const is = new Map(after.map((i) => [i.key, i]));
  const pairs = [];
  const gone = [];
  const appeared = [];
  for (const b of after) {
    const a = was.get(b.key);
    if (a) pairs.push([a, b]);
    else appeared.push(b);
  }
  for (const a of before) if (!is.has(a.key)) gone.push(a);
  // A re-rendered element (a new node, same role and name) is the same one to the reader.
  const goneByName = new Map();
  for (const a of gone) {
    const k = pairKey(a);
    if (!goneByName.has(k)) goneByName.set(k, []);
    goneByName.get(k).push(a);
  }
  const reallyAppeared = [];
  for (const b of appeared) {
    const same = goneByName.get(pairKey(b));
    if (same && same.length) pairs.push([same.shift(), b]);
    else reallyAppeared.push(b);
  }
  const reallyGone = [...goneByName.values()].flat();
  const lines = [];
  for (const [a, b] of pairs) {
    const changes = stateChanges(a, b);
    const renamed = flat(a.name) !== flat(b.name) || a.role !== b.role;
    if (!renamed && changes.length === 0) continue;
    let line = what(a.role, a.name);
    if (renamed) line += ` → ${what(b.role, b.name)}`;
    if (changes.length) line += `: ${changes.join('; ')}`;
    const ref = refOf(b);
    if (ref) line += ` [ref=${ref}]`;
    lines.push(line);
  }
  // In document order, what appeared reads as the new part of the page.
  for (const b of reallyAppeared) lines.push(`appeared: ${formatLine({ ...b, ref: refOf(b) }).slice(2)}`);
  for (const a of reallyGone) lines.push(`gone: ${formatLine({ ...a, ref: null }).slice(2)}`);
  if (lines.length > max) {
    const left = lines.length - max;
    return [...lines.slice(0, max), `… and ${left} more change${left === 1 ? '' : 's'} (describe the page to see it all)`];
  }
  return lines;
}
