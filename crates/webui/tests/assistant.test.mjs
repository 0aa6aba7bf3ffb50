// The in-app assistant's page-free helpers under node's own test runner (run by
// `cargo test -p wright-webui`, tests/node.rs): the describe tree's lines from plain data,
// the diff of two snapshots, matching by name and the candidates' error, and the client's
// round of tool calls (order, timeouts, caps) and what a reload leaves to do.
import test from 'node:test';
import assert from 'node:assert/strict';

const text = await import('../assets/a11y-text.js');
const core = await import('../assets/assistant-core.js');

test('a line shows role, name, states, value and ref', () => {
  const { formatLine } = text;
  assert.equal(formatLine({ role: 'button', name: 'Build', ref: 's3e12' }), '- button "Build" [ref=s3e12]');
  assert.equal(
    formatLine({ role: 'checkbox', name: 'Remember me', states: { checked: true, required: true }, ref: 's1e2' }),
    '- checkbox "Remember me" [checked] [required] [ref=s1e2]',
  );
  assert.equal(formatLine({ role: 'checkbox', name: 'A', states: { checked: false } }), '- checkbox "A" [unchecked]');
  assert.equal(formatLine({ role: 'checkbox', name: 'All', states: { checked: 'mixed' } }), '- checkbox "All" [mixed]');
  assert.equal(
    formatLine({ role: 'combobox', name: 'Country', states: { expanded: false, value: 'Brazil' }, ref: 's1e4' }),
    '- combobox "Country" [collapsed] value="Brazil" [ref=s1e4]',
  );
  assert.equal(formatLine({ role: 'heading', name: 'Orders', states: { level: 2 } }), '- heading "Orders" [level=2]');
  assert.equal(formatLine({ role: 'button', name: 'Go', states: { disabled: true, expanded: true } }), '- button "Go" [expanded] [disabled]');
  assert.equal(formatLine({ role: 'tab', name: 'Two', states: { selected: true } }), '- tab "Two" [selected]');
  assert.equal(formatLine({ role: 'status', name: '', text: '  Saved\n 3 items ', ref: 's2e1' }), '- status [ref=s2e1]: Saved 3 items');
  // Long values and names are cut; quotes inside are escaped.
  const long = formatLine({ role: 'textbox', name: 'Say "hi"', states: { value: 'x'.repeat(200) } });
  assert.match(long, /^- textbox "Say \\"hi\\"" value="x{79}…"$/);
  assert.equal(formatLine({ role: 'link', name: 'n'.repeat(150) }).length, '- link ""'.length + 100);
  // An empty value says nothing.
  assert.equal(formatLine({ role: 'textbox', name: 'Email', states: { value: '' } }), '- textbox "Email"');
});

test('the tree is indented by depth, and capped with a line saying how much was left out', () => {
  const items = [
    { role: 'navigation', name: 'Main', depth: 0 },
    { role: 'link', name: 'Home', depth: 1 },
    { role: 'main', name: '', depth: 0 },
    { role: 'button', name: 'Build', depth: 1 },
  ];
  let n = 0;
  const out = text.formatTree(items, {
    assignRef: (i) => {
      if (i.name) i.ref = `s1e${++n}`;
    },
  });
  assert.equal(out.text, ['- navigation "Main" [ref=s1e1]', '  - link "Home" [ref=s1e2]', '- main', '  - button "Build" [ref=s1e3]'].join('\n'));
  assert.equal(out.shown, 4);
  assert.equal(out.truncated, false);

  const many = Array.from({ length: 500 }, (_, i) => ({ role: 'button', name: `Button number ${i}`, depth: 0 }));
  const cut = text.formatTree(many, { maxChars: 2000 });
  assert.ok(cut.text.length <= 2000, `${cut.text.length}`);
  assert.equal(cut.truncated, true);
  const last = cut.text.split('\n').at(-1);
  assert.equal(last, `… ${500 - cut.shown} more elements left out (the description is capped at 2000 characters)`);
  assert.ok(cut.shown > 20 && cut.shown < 100, `${cut.shown}`);
});

test('names match exactly, then ignoring case, then by a cut name', () => {
  const items = [
    { role: 'button', name: 'Save' },
    { role: 'button', name: 'save draft' },
    { role: 'button', name: 'SAVE' },
    { role: 'link', name: 'A very long name that the tree cut short' },
  ];
  assert.deepEqual(text.byName(items, 'Save').map((i) => i.name), ['Save']);
  assert.deepEqual(text.byName(items, 'save').map((i) => i.name), ['Save', 'SAVE']);
  assert.deepEqual(text.byName(items, '  Save   Draft ').map((i) => i.name), ['save draft']);
  assert.deepEqual(text.byName(items, 'A very long name…').map((i) => i.role), ['link']);
  assert.deepEqual(text.byName(items, 'Delete'), []);
  assert.ok(text.roleFits('searchbox', 'textbox') && text.roleFits('button', undefined) && !text.roleFits('link', 'button'));
  assert.ok(text.roleFits('button', ' Button '));
});

test('an ambiguous name lists its candidates (ten at most) and chooses none', () => {
  const candidates = Array.from({ length: 12 }, (_, i) => ({ role: 'button', name: 'Delete', ref: `s2e${i + 1}`, context: `row "User ${i}"` }));
  candidates[1].hidden = true;
  candidates[1].ref = null;
  const err = text.ambiguousError('button', 'Delete', candidates);
  const lines = err.split('\n');
  assert.equal(lines[0], '12 elements match button "Delete"; none was chosen. Pass the ref of the one you mean:');
  assert.equal(lines[1], '- button "Delete" [ref=s2e1] (in row "User 0")');
  assert.equal(lines[2], '- button "Delete" (hidden) (in row "User 1")');
  assert.equal(lines.length, 1 + 10 + 1);
  assert.equal(lines.at(-1), '- … and 2 more');

  const none = text.notFoundError('button', 'Publish', [{ role: 'button', name: 'Build' }, { role: 'button', name: 'Cancel' }], [
    { role: 'link', name: 'Publish', ref: 's2e9' },
  ]);
  assert.equal(none, 'No button "Publish" is on the page. The button elements are: "Build", "Cancel". Named so: link "Publish" [ref=s2e9].');
  assert.equal(text.notFoundError(undefined, 'X', [], []), 'No "X" is on the page. Describe the page again to see what is there.');
});

test('a diff says what appeared, went and changed; a re-made element with the same name is the same', () => {
  const a = { key: 1, role: 'checkbox', name: 'Remember me', states: { checked: false } };
  const b = { key: 2, role: 'button', name: 'Build', states: {} };
  const c = { key: 3, role: 'textbox', name: 'Email', states: { value: '' } };
  const d = { key: 4, role: 'listitem', name: 'Old row', states: {} };
  const before = [a, b, c, d];
  const after = [
    { ...a, states: { checked: true } },
    { key: 22, role: 'button', name: 'Build', states: {} }, // re-rendered: a new node
    { ...c, states: { value: 'ana@example.org' } },
    { key: 5, role: 'dialog', name: 'Confirm', states: {} },
    { key: 6, role: 'button', name: 'Building…', states: { disabled: true } },
  ];
  const refOf = (i) => `s1e${i.key}`;
  assert.deepEqual(text.diffSnapshots(before, after, { refOf }), [
    'checkbox "Remember me": unchecked → checked [ref=s1e1]',
    'textbox "Email": value "" → "ana@example.org" [ref=s1e3]',
    'appeared: dialog "Confirm" [ref=s1e5]',
    'appeared: button "Building…" [disabled] [ref=s1e6]',
    'gone: listitem "Old row"',
  ]);
  assert.deepEqual(text.diffSnapshots(before, before), []);
  // A renamed element (same node) says both names.
  assert.deepEqual(text.diffSnapshots([b], [{ ...b, name: 'Rebuild' }], { refOf }), ['button "Build" → button "Rebuild" [ref=s1e2]']);
  // Many changes are capped.
  const lots = Array.from({ length: 60 }, (_, i) => ({ key: i, role: 'button', name: `B${i}`, states: {} }));
  const capped = text.diffSnapshots([], lots, { max: 40 });
  assert.equal(capped.length, 41);
  assert.equal(capped.at(-1), '… and 20 more changes (describe the page to see it all)');
});

test('a target is read as a model writes it: role and name, a pasted line, a quoted name, a ref', () => {
  const { readTarget } = text;
  assert.deepEqual(readTarget({ role: 'Button', description: ' Save  draft ' }), { role: 'button', name: 'Save draft', ref: null });
  assert.deepEqual(readTarget({ description: '- button "Save" [ref=s2e5]' }), { role: 'button', name: 'Save', ref: 's2e5' });
  assert.deepEqual(readTarget({ role: 'button', description: 'button "Say \\"hi\\""' }), { role: 'button', name: 'Say "hi"', ref: null });
  assert.deepEqual(readTarget({ role: 'link', description: '"Home"' }), { role: 'link', name: 'Home', ref: null });
  assert.deepEqual(readTarget({ role: 'button', description: 'copy "x"' }), { role: 'button', name: 'copy "x"', ref: null });
  assert.deepEqual(readTarget({ ref: ' s1e2 ', description: 'ignored' }), { role: undefined, name: 'ignored', ref: 's1e2' });
  assert.deepEqual(readTarget(undefined), { role: undefined, name: '', ref: null });
});

test('refs, booleans, lists and options are read as a model writes them', () => {
  assert.deepEqual(text.parseRef('s3e12'), { snapshot: 3, n: 12 });
  assert.deepEqual(text.parseRef(' s10e1 '), { snapshot: 10, n: 1 });
  assert.equal(text.parseRef('e12'), null);
  assert.equal(text.parseRef(undefined), null);
  for (const v of ['true', 'TRUE', 'yes', 'on', '1', true, 'checked']) assert.equal(text.parseBool(v), true, String(v));
  for (const v of ['false', 'no', 'off', '0', false, 'unchecked']) assert.equal(text.parseBool(v), false, String(v));
  assert.equal(text.parseBool('maybe'), null);
  assert.deepEqual(text.splitList(' red, green ,,blue '), ['red', 'green', 'blue']);
  assert.deepEqual(text.splitList(['a', ' b ']), ['a', 'b']);
  const options = [
    { label: 'Brazil', value: 'br' },
    { label: 'Portugal', value: 'pt' },
    { label: 'brazil nut', value: 'nut' },
  ];
  assert.equal(text.optionIndex(options, 'Portugal'), 1);
  assert.equal(text.optionIndex(options, 'br'), 0);
  assert.equal(text.optionIndex(options, 'PORTUGAL'), 1);
  assert.equal(text.optionIndex(options, 'Spain'), -1);
});

test('outputs are capped at 48,000 characters; JSON stays JSON when it fits', () => {
  const { capOutput, OUTPUT_MAX } = core;
  assert.equal(OUTPUT_MAX, 48000);
  assert.equal(capOutput('short'), 'short');
  assert.equal(capOutput(undefined), '');
  const obj = { changed: ['a'], settled_ms: 12 };
  assert.equal(capOutput(obj), obj);
  const big = capOutput('y'.repeat(100000));
  assert.equal(big.length, 48000);
  assert.match(big, /\n… \(cut: \d+ more characters\)$/);
  const n = Number(/cut: (\d+)/.exec(big)[1]);
  assert.equal(big.indexOf('\n…') + n, 100000, 'what is kept plus what is cut is the whole');
  const hugeObj = { list: Array.from({ length: 10000 }, (_, i) => `item ${i}`) };
  const capped = capOutput(hugeObj);
  assert.equal(typeof capped, 'string');
  assert.ok(capped.length <= 48000 && capped.startsWith('{"list":["item 0"'));
});

test('a round runs all calls at once and answers in the calls\' order, with timeouts and errors', async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const seen = [];
  const tools = {
    slow: async (args) => {
      await sleep(120);
      return `slow ${args.n}`;
    },
    fast: async (args) => ({ n: args.n }),
    broken: async () => {
      throw new Error('button "Delete" is disabled');
    },
    stuck: (args, { signal }) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => seen.push('aborted'));
        setTimeout(resolve, 5000).unref?.();
      }),
    huge: async () => 'z'.repeat(60000),
  };
  const calls = [
    { id: 'c1', name: 'slow', arguments: '{"n":1}' },
    { id: 'c2', name: 'fast', arguments: { n: 2 } },
    { id: 'c3', name: 'nope', arguments: {} },
    { id: 'c4', name: 'broken', arguments: '' },
    { id: 'c5', name: 'stuck', arguments: {} },
    { id: 'c6', name: 'huge', arguments: 'not json' },
    { id: 'c7', name: 'hasOwnProperty', arguments: {} },
  ];
  const started = Date.now();
  const results = await core.runRound(calls, tools, {
    timeoutMs: 300,
    onStart: (c) => seen.push(`start ${c.id}`),
    onEnd: (c, r) => seen.push(`end ${c.id} ${r.error ? 'error' : 'ok'}`),
  });
  const took = Date.now() - started;
  assert.ok(took < 1000, `all at once (${took} ms)`);
  assert.deepEqual(results.map((r) => r.id), ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
  assert.deepEqual(results[0], { id: 'c1', output: 'slow 1' });
  assert.deepEqual(results[1], { id: 'c2', output: { n: 2 } });
  assert.deepEqual(results[2], { id: 'c3', error: 'unknown tool "nope": this page does not offer it' });
  assert.deepEqual(results[3], { id: 'c4', error: 'button "Delete" is disabled' });
  assert.deepEqual(results[4], { id: 'c5', error: 'timed out' });
  assert.equal(results[5].output.length, 48000);
  assert.match(results[6].error, /unknown tool/);
  assert.ok(seen.includes('aborted'), 'a timed-out tool is told to stop');
  assert.ok(seen.indexOf('start c1') < seen.indexOf('end c2 ok'), 'the fast one ends while the slow one runs');
  assert.equal(core.TOOL_TIMEOUT_MS, 15000);
});

test('after a reload, read-only calls run again and the others are answered, never re-run', () => {
  const calls = [
    { id: 'a', name: 'describe_app_ui', arguments: {}, read_only: true },
    { id: 'b', name: 'click_element', arguments: { description: 'Delete' }, read_only: false },
    { id: 'c', name: 'fill_form_element', arguments: {}, read_only: false },
  ];
  const plan = core.planPending(calls, { started: new Set(['c']) });
  assert.deepEqual(
    plan.map((p) => [p.call.id, p.rerun, p.result?.error ?? null]),
    [
      ['a', true, null],
      ['b', false, 'cancelled: the page was reloaded before this action ran'],
      ['c', false, core.RELOADED_WHILE],
    ],
  );
  assert.deepEqual(core.planPending([]), []);
});

test('words in English and Portuguese, the tools on offer and the status lines', () => {
  assert.equal(core.pickLang('pt-BR'), 'pt');
  assert.equal(core.pickLang('PT'), 'pt');
  assert.equal(core.pickLang('en-GB'), 'en');
  assert.equal(core.pickLang('ptx'), 'en');
  assert.equal(core.pickLang(undefined), 'en');
  const en = core.translator('en');
  const pt = core.translator('pt');
  assert.equal(en('launcher'), 'Assistant');
  assert.equal(pt('launcher'), 'Assistente');
  assert.equal(en('clicking', { name: 'Build' }), 'Clicking "Build"…');
  assert.equal(pt('clicking', { name: 'Build' }), 'Clicando em "Build"…');
  assert.equal(en('no.such.key'), 'no.such.key');
  for (const k of Object.keys(core.WORDS.en)) assert.ok(core.WORDS.pt[k], `pt lacks ${k}`);
  assert.equal(core.toolStatus('describe_app_ui', {}, en), 'Reading the page…');
  assert.equal(core.toolStatus('click_element', '{"role":"button","description":"Build"}', en), 'Clicking "Build"…');
  assert.equal(core.toolStatus('click_element', { ref: 's2e4' }, en), 'Clicking "s2e4"…');
  assert.equal(core.toolStatus('search_documents', {}, en), 'Searching the docs…');
  assert.equal(core.toolStatus('my_tool', {}, pt), 'Rodando my_tool…');
  assert.equal(core.toolDone('click_element', { description: 'Build' }, { id: 1, output: {} }, en), 'Clicked "Build"');
  assert.equal(core.toolDone('click_element', { description: 'Build' }, { id: 1, error: 'button "Build" is disabled\nmore' }, en), 'Clicking "Build" failed: button "Build" is disabled');
  assert.equal(core.toolDone('describe_app_ui', {}, { id: 1, error: 'timed out' }, pt), 'Falhou — Lendo a página: timed out');
  const server = [{ name: 'describe_app_ui' }, { name: 'click_element' }, { name: 'export_csv' }, { name: 'search_documents' }];
  assert.deepEqual(core.activeTools(server, { describe_app_ui() {}, click_element() {}, fill_form_element() {} }), ['describe_app_ui', 'click_element']);
  assert.deepEqual(core.storageKeys('ek_1'), { token: 'wright-assistant:ek_1', open: 'wright-assistant:open:ek_1', started: 'wright-assistant:started:ek_1' });
  assert.equal(core.sourceLine({ source: 'guide.md', heading: 'Install' }), 'guide.md › Install');
  assert.equal(core.sourceLine({ source: 'guide.md', heading: '' }), 'guide.md');
  assert.equal(core.partText({ type: 'chart', title: 'x' }), '{"type":"chart","title":"x"}');
  assert.deepEqual(core.parseArgs('{"a":1}'), { a: 1 });
  assert.deepEqual(core.parseArgs('[1]'), [1]);
  assert.deepEqual(core.parseArgs('nope'), {});
});
