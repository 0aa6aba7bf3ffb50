const test = require('node:test');
const assert = require('node:assert');
const {
  MAX_TEXT, cleanText, nextId, addTodo, toggleTodo, deleteTodo, editTodo,
  filterTodos, countLeft, clearDone, fromTexts, parseSaved,
} = require('../todos.js');

const sample = () => [
  { id: 1, text: 'Buy milk', done: false },
  { id: 2, text: 'Call grandma', done: true },
  { id: 3, text: 'Water the plants', done: false },
];

test('addTodo adds a task that is not done', () => {
  const todos = addTodo([], 'Buy milk');
  assert.deepStrictEqual(todos, [{ id: 1, text: 'Buy milk', done: false }]);
});

test('addTodo trims the text and gives a new id', () => {
  const todos = addTodo(sample(), '   Read a book  ');
  assert.strictEqual(todos.length, 4);
  assert.deepStrictEqual(todos[3], { id: 4, text: 'Read a book', done: false });
});

test('addTodo ignores empty or blank text', () => {
  const start = sample();
  assert.strictEqual(addTodo(start, ''), start);
  assert.strictEqual(addTodo(start, '    '), start);
  assert.strictEqual(addTodo(start, undefined), start);
});

test('addTodo does not change the original list', () => {
  const start = sample();
  addTodo(start, 'New');
  assert.strictEqual(start.length, 3);
});

test('very long text is cut to the limit', () => {
  const todos = addTodo([], 'x'.repeat(MAX_TEXT + 50));
  assert.strictEqual(todos[0].text.length, MAX_TEXT);
});

test('cleanText squeezes spaces', () => {
  assert.strictEqual(cleanText('  a   b  '), 'a b');
  assert.strictEqual(cleanText(42), '');
});

test('nextId is one more than the biggest id', () => {
  assert.strictEqual(nextId([]), 1);
  assert.strictEqual(nextId([{ id: 7 }, { id: 3 }]), 8);
});

test('toggleTodo completes and un-completes a task', () => {
  const once = toggleTodo(sample(), 1);
  assert.strictEqual(once[0].done, true);
  const twice = toggleTodo(once, 1);
  assert.strictEqual(twice[0].done, false);
});

test('toggleTodo with an unknown id changes nothing', () => {
  assert.deepStrictEqual(toggleTodo(sample(), 99), sample());
});

test('deleteTodo removes only that task', () => {
  const todos = deleteTodo(sample(), 2);
  assert.deepStrictEqual(todos.map((t) => t.id), [1, 3]);
  assert.deepStrictEqual(deleteTodo(sample(), 99), sample());
});

test('editTodo changes the text', () => {
  const todos = editTodo(sample(), 3, '  Water the cactus ');
  assert.strictEqual(todos[2].text, 'Water the cactus');
  assert.strictEqual(todos[2].done, false);
});

test('editTodo with empty text keeps the old text', () => {
  const start = sample();
  assert.strictEqual(editTodo(start, 1, '   '), start);
});

test('filterTodos shows all, active or done tasks', () => {
  assert.strictEqual(filterTodos(sample(), 'all').length, 3);
  assert.deepStrictEqual(filterTodos(sample(), 'active').map((t) => t.id), [1, 3]);
  assert.deepStrictEqual(filterTodos(sample(), 'done').map((t) => t.id), [2]);
  assert.strictEqual(filterTodos(sample(), 'something else').length, 3);
});

test('countLeft counts tasks not done', () => {
  assert.strictEqual(countLeft(sample()), 2);
  assert.strictEqual(countLeft([]), 0);
});

test('clearDone removes finished tasks', () => {
  assert.deepStrictEqual(clearDone(sample()).map((t) => t.id), [1, 3]);
  assert.deepStrictEqual(clearDone([]), []);
});

test('fromTexts builds a list and skips blanks', () => {
  const todos = fromTexts(['One', '', '  Two ']);
  assert.deepStrictEqual(todos.map((t) => t.text), ['One', 'Two']);
  assert.deepStrictEqual(fromTexts(null), []);
});

test('parseSaved reads a saved list back', () => {
  const todos = sample();
  assert.deepStrictEqual(parseSaved(JSON.stringify(todos)), todos);
});

test('parseSaved gives null for broken data', () => {
  assert.strictEqual(parseSaved('not json'), null);
  assert.strictEqual(parseSaved('{"a":1}'), null);
});

test('parseSaved skips broken tasks', () => {
  const saved = JSON.stringify([{ id: 1, text: 'ok', done: true }, { id: 'x', text: 'bad' }, null, { id: 2, text: '' }, { id: 1, text: 'dup' }]);
  assert.deepStrictEqual(parseSaved(saved), [{ id: 1, text: 'ok', done: true }]);
});
