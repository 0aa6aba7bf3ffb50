const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// Each test run uses its own notes file in a temporary folder (not created yet).
const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-test-'));
process.env.NOTES_FILE = path.join(tempDir, 'data', 'notes.json');

const { server, validateNote, MAX_LENGTH } = require('../server/server.js');

let base;

test.before(async () => {
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${server.address().port}`;
});

test.after(() => {
  server.closeAllConnections();
  server.close();
  fs.rmSync(tempDir, { recursive: true, force: true });
});

function post(body) {
  return fetch(base + '/api/notes', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

test('GET / serves the page', async () => {
  const res = await fetch(base + '/');
  assert.strictEqual(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/html/);
  assert.match(await res.text(), /<html/);
});

test('the styles and script are served too', async () => {
  assert.strictEqual((await fetch(base + '/styles.css')).status, 200);
  assert.strictEqual((await fetch(base + '/app.js')).status, 200);
  assert.strictEqual((await fetch(base + '/nope.txt')).status, 404);
});

test('GET /api/notes starts empty', async () => {
  const res = await fetch(base + '/api/notes');
  assert.strictEqual(res.status, 200);
  assert.deepStrictEqual(await res.json(), []);
});

test('POST /api/notes adds a note and saves it to the file', async () => {
  const res = await post({ text: '  Hello there!  ', name: 'Ana' });
  assert.strictEqual(res.status, 201);
  const note = await res.json();
  assert.strictEqual(note.text, 'Hello there!');
  assert.strictEqual(note.name, 'Ana');
  assert.ok(note.id);
  assert.ok(!isNaN(Date.parse(note.createdAt)));

  const list = await (await fetch(base + '/api/notes')).json();
  assert.strictEqual(list[0].id, note.id);
  const saved = JSON.parse(fs.readFileSync(process.env.NOTES_FILE, 'utf8'));
  assert.strictEqual(saved[0].text, 'Hello there!');
});

test('the name is optional and newest notes come first', async () => {
  const res = await post({ text: 'Second note' });
  assert.strictEqual(res.status, 201);
  assert.strictEqual((await res.json()).name, '');
  const list = await (await fetch(base + '/api/notes')).json();
  assert.strictEqual(list[0].text, 'Second note');
  assert.strictEqual(list[1].text, 'Hello there!');
});

test('bad input is refused with 400', async () => {
  const bad = [
    {},
    { text: '' },
    { text: '    ' },
    { text: 42 },
    { text: 'x'.repeat(MAX_LENGTH + 1) },
    { text: 'ok', name: 123 },
    { text: 'ok', name: 'n'.repeat(41) },
    [],
    'not json at all',
    'null',
  ];
  for (const body of bad) {
    const res = await post(body);
    assert.strictEqual(res.status, 400, 'should refuse ' + JSON.stringify(body).slice(0, 40));
    assert.ok((await res.json()).error);
  }
  const list = await (await fetch(base + '/api/notes')).json();
  assert.strictEqual(list.length, 2, 'nothing bad was saved');
});

test('a note of exactly the limit is accepted', async () => {
  const res = await post({ text: 'y'.repeat(MAX_LENGTH) });
  assert.strictEqual(res.status, 201);
  const note = await res.json();
  assert.strictEqual((await fetch(base + '/api/notes/' + note.id, { method: 'DELETE' })).status, 204);
});

test('a huge body is refused', async () => {
  const res = await post({ text: 'z'.repeat(20000) });
  assert.strictEqual(res.status, 413);
  assert.ok((await res.json()).error);
});

test('DELETE /api/notes/:id removes a note', async () => {
  const list = await (await fetch(base + '/api/notes')).json();
  const id = list[0].id;
  const res = await fetch(base + '/api/notes/' + id, { method: 'DELETE' });
  assert.strictEqual(res.status, 204);
  const after = await (await fetch(base + '/api/notes')).json();
  assert.ok(!after.some((n) => n.id === id));
  assert.strictEqual(after.length, list.length - 1);
});

test('DELETE of an unknown id answers 404', async () => {
  const res = await fetch(base + '/api/notes/does-not-exist', { method: 'DELETE' });
  assert.strictEqual(res.status, 404);
});

test('other methods and unknown API paths are refused', async () => {
  assert.strictEqual((await fetch(base + '/api/notes', { method: 'PUT' })).status, 405);
  assert.strictEqual((await fetch(base + '/api/other')).status, 404);
});

test('validateNote checks text and name', () => {
  assert.deepStrictEqual(validateNote({ text: ' hi ', name: ' Bo ' }), { text: 'hi', name: 'Bo' });
  assert.deepStrictEqual(validateNote({ text: 'hi', name: null }), { text: 'hi', name: '' });
  assert.ok(validateNote(null).error);
  assert.ok(validateNote({ text: 'x'.repeat(MAX_LENGTH + 1) }).error);
});
