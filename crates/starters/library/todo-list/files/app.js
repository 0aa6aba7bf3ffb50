// Connects the to-do logic (todos.js) to the page.
const STORAGE_KEY = {{ storage_key|tojson }};
const STARTER_TASKS = {{ starter_tasks|tojson }};
const LANGUAGE = {{ language|tojson }};

const TEXT = {
  en: {
    left: (n) => (n === 1 ? '1 task left' : n + ' tasks left'),
    edit: 'Edit', delete: 'Delete', save: 'Save',
    empty: { all: 'Nothing here yet. Add your first task above!', active: 'All done. Nice work!', done: 'No finished tasks yet.' },
  },
  pt: {
    left: (n) => (n === 1 ? '1 tarefa pendente' : n + ' tarefas pendentes'),
    edit: 'Editar', delete: 'Apagar', save: 'Salvar',
    empty: { all: 'Nada por aqui ainda. Adicione sua primeira tarefa!', active: 'Tudo feito. Muito bem!', done: 'Nenhuma tarefa concluída ainda.' },
  },
}[LANGUAGE === 'pt' ? 'pt' : 'en'];

let todos = load();
let filter = 'all';
let editingId = null;

const form = document.getElementById('add-form');
const input = document.getElementById('new-task');
const list = document.getElementById('list');
const empty = document.getElementById('empty');
const left = document.getElementById('left');
const clearButton = document.getElementById('clear-done');

function load() {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved !== null) {
      const parsed = parseSaved(saved);
      if (parsed) return parsed;
    }
  } catch (e) { /* storage not available: start from the starter tasks */ }
  return fromTexts(STARTER_TASKS);
}

function save() {
  try { localStorage.setItem(STORAGE_KEY, JSON.stringify(todos)); } catch (e) { /* not saved, still works */ }
}

function update(newTodos) {
  todos = newTodos;
  save();
  render();
}

function button(label, className, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = className;
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}

function renderEditing(li, todo) {
  const field = document.createElement('input');
  field.type = 'text';
  field.className = 'edit-field';
  field.maxLength = 200;
  field.value = todo.text;
  let finished = false;
  const finish = (keep) => {
    if (finished) return;
    finished = true;
    editingId = null;
    if (keep) update(editTodo(todos, todo.id, field.value));
    else render();
  };
  field.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') finish(true);
    if (event.key === 'Escape') finish(false);
  });
  field.addEventListener('blur', () => finish(true));
  li.append(field, button(TEXT.save, 'small', () => finish(true)));
  setTimeout(() => field.focus(), 0);
}

function render() {
  list.innerHTML = '';
  const shown = filterTodos(todos, filter);
  for (const todo of shown) {
    const li = document.createElement('li');
    li.className = todo.done ? 'item done' : 'item';
    if (todo.id === editingId) {
      renderEditing(li, todo);
    } else {
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = todo.done;
      box.addEventListener('change', () => update(toggleTodo(todos, todo.id)));
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = todo.text;
      text.addEventListener('dblclick', (event) => { event.preventDefault(); editingId = todo.id; render(); });
      label.append(box, text);
      li.append(
        label,
        button(TEXT.edit, 'small', () => { editingId = todo.id; render(); }),
        button(TEXT.delete, 'small danger', () => update(deleteTodo(todos, todo.id))),
      );
    }
    list.append(li);
  }
  empty.hidden = shown.length > 0;
  empty.textContent = TEXT.empty[filter];
  left.textContent = TEXT.left(countLeft(todos));
  clearButton.hidden = todos.length === countLeft(todos);
  for (const b of document.querySelectorAll('.filter')) {
    b.classList.toggle('active', b.dataset.filter === filter);
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  update(addTodo(todos, input.value));
  input.value = '';
  input.focus();
});

for (const b of document.querySelectorAll('.filter')) {
  b.addEventListener('click', () => { filter = b.dataset.filter; render(); });
}

clearButton.addEventListener('click', () => update(clearDone(todos)));

render();
