// The in-app assistant's hands on the page, through its accessibility tree: describe what is
// there (roles and accessible names as dom-accessibility-api computes them, with states), and
// click or fill an element named by role + accessible name or by a ref from the last
// description. Every action refuses, with the reason, an element a person could not use
// (hidden, disabled, inert, covered), fires the events frameworks listen to, waits for the
// page to settle and says what changed. Errors come back as {ok: false, error}, never thrown.
//
// a11y-page.js reads the page (roles, names, states, refs, settling) and a11y-act.js acts on
// it (finding the target, refusing, clicking, filling); this module is what the assistant
// imports: the description, and the actions run one at a time.

import { diffSnapshots, formatTree } from './a11y-text.js';
import { ASSISTANT_ATTR, collect, newSnapshot, refOf, refs, settle, watch } from './a11y-page.js';
import { Refusal, fill, press, refuseUnreachable, resolve } from './a11y-act.js';

export { ASSISTANT_ATTR, settle };

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

// ---- what changed, one action at a time ----------------------------------------------------

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
