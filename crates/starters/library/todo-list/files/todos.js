// The logic of the to-do list: small functions that take the list of tasks
// and give back a new list. They never touch the page, so they are easy to test.
// A task looks like { id: 1, text: 'Buy milk', done: false }.

const MAX_TEXT = 200;
const FILTERS = ['all', 'active', 'done'];

function cleanText(text) {
  if (typeof text !== 'string') return '';
  return text.trim().replace(/\s+/g, ' ').slice(0, MAX_TEXT);
}

function nextId(todos) {
  let max = 0;
  for (const todo of todos) if (todo.id > max) max = todo.id;
  return max + 1;
}

function addTodo(todos, text) {
  const clean = cleanText(text);
  if (!clean) return todos;
  return [...todos, { id: nextId(todos), text: clean, done: false }];
}

function toggleTodo(todos, id) {
  return todos.map((todo) => (todo.id === id ? { ...todo, done: !todo.done } : todo));
}

function deleteTodo(todos, id) {
  return todos.filter((todo) => todo.id !== id);
}

function editTodo(todos, id, text) {
  const clean = cleanText(text);
  if (!clean) return todos;
  return todos.map((todo) => (todo.id === id ? { ...todo, text: clean } : todo));
}

function filterTodos(todos, filter) {
  if (filter === 'active') return todos.filter((todo) => !todo.done);
  if (filter === 'done') return todos.filter((todo) => todo.done);
  return todos;
}

function countLeft(todos) {
  return todos.filter((todo) => !todo.done).length;
}

function clearDone(todos) {
  return todos.filter((todo) => !todo.done);
}

function fromTexts(texts) {
  let todos = [];
  for (const text of Array.isArray(texts) ? texts : []) todos = addTodo(todos, text);
  return todos;
}

// Reads what was saved; anything broken gives null so the page can start fresh.
function parseSaved(json) {
  let data;
  try { data = JSON.parse(json); } catch (e) { return null; }
  if (!Array.isArray(data)) return null;
  const todos = [];
  for (const item of data) {
    if (!item || typeof item !== 'object') continue;
    const text = cleanText(item.text);
    if (!text || !Number.isInteger(item.id) || todos.some((t) => t.id === item.id)) continue;
    todos.push({ id: item.id, text, done: item.done === true });
  }
  return todos;
}

if (typeof module !== 'undefined') {
  module.exports = { MAX_TEXT, FILTERS, cleanText, nextId, addTodo, toggleTodo, deleteTodo, editTodo, filterTodos, countLeft, clearDone, fromTexts, parseSaved };
}
