// Connects the expense logic (expenses.js) to the page: the form, the totals and the list,
// saved in this browser.

const LANG = {{ lang|tojson }};
const CURRENCY_SYMBOL = {{ currency_symbol|tojson }};
const DECIMAL_SEPARATOR = {{ decimal_separator|tojson }};
const CATEGORIES = {{ categories|tojson }};
const TEXT = {
  deleteLabel: {{ delete_label|tojson }},
  amountError: {{ amount_error|tojson }},
  dateError: {{ date_error|tojson }},
};
// One saved list per page address, so two trackers on one site keep their own expenses.
const STORAGE_KEY = 'expense-tracker:' + location.pathname;

const form = document.getElementById('add-form');
const fields = {
  description: document.getElementById('description'),
  amount: document.getElementById('amount'),
  category: document.getElementById('category'),
  date: document.getElementById('date'),
};
const errors = { amount: document.getElementById('amount-error'), date: document.getElementById('date-error') };
const totalsList = document.getElementById('totals');
const grandTotalBox = document.getElementById('grand-total');
const list = document.getElementById('expenses');
const empty = document.getElementById('empty');

let expenses = load();

function load() {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved !== null) return parseSaved(saved) || [];
  } catch (e) { /* storage not available: start empty */ }
  return [];
}

function save() {
  try { localStorage.setItem(STORAGE_KEY, JSON.stringify(expenses)); } catch (e) { /* not saved, still works */ }
}

function money(cents) {
  return formatMoney(cents, CURRENCY_SYMBOL, DECIMAL_SEPARATOR);
}

function today() {
  const now = new Date();
  const pad = (n) => String(n).padStart(2, '0');
  return now.getFullYear() + '-' + pad(now.getMonth() + 1) + '-' + pad(now.getDate());
}

function showDate(key) {
  const [y, m, d] = key.split('-').map(Number);
  try {
    return new Date(y, m - 1, d).toLocaleDateString(LANG === 'pt' ? 'pt-BR' : 'en');
  } catch (e) {
    return key;
  }
}

function showError(name, message) {
  for (const key of Object.keys(errors)) {
    const wrong = key === name;
    errors[key].textContent = wrong ? message : '';
    fields[key].classList.toggle('invalid', wrong);
    fields[key].setAttribute('aria-invalid', String(wrong));
  }
}

function render() {
  const total = grandTotal(expenses);
  totalsList.textContent = '';
  for (const row of totalsByCategory(expenses, CATEGORIES)) {
    const li = document.createElement('li');
    const name = document.createElement('span');
    name.textContent = row.category;
    const amount = document.createElement('strong');
    amount.textContent = money(row.cents);
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.setAttribute('aria-hidden', 'true');
    bar.style.width = (total > 0 ? Math.round((row.cents / total) * 100) : 0) + '%';
    li.append(name, amount, bar);
    totalsList.append(li);
  }
  grandTotalBox.textContent = money(total);

  list.textContent = '';
  for (const expense of expenses) {
    const li = document.createElement('li');
    const what = document.createElement('span');
    what.className = 'what';
    what.textContent = expense.description || expense.category;
    const meta = document.createElement('span');
    meta.className = 'meta';
    meta.textContent = showDate(expense.date) + ' · ' + expense.category;
    const amount = document.createElement('span');
    amount.className = 'amount';
    amount.textContent = money(expense.cents);
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'remove';
    remove.textContent = '×';
    remove.setAttribute('aria-label', TEXT.deleteLabel + ' ' + what.textContent + ' ' + amount.textContent);
    remove.addEventListener('click', () => {
      expenses = removeExpense(expenses, expense.id);
      save();
      render();
    });
    const text = document.createElement('span');
    text.className = 'text';
    text.append(what, meta);
    li.append(text, amount, remove);
    list.append(li);
  }
  empty.hidden = expenses.length > 0;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const answer = checkEntry({
    description: fields.description.value,
    amount: fields.amount.value,
    category: fields.category.value,
    date: fields.date.value,
  }, CATEGORIES);
  if (answer.error) {
    showError(answer.error, answer.error === 'date' ? TEXT.dateError : TEXT.amountError);
    fields[answer.error].focus();
    return;
  }
  showError(null, '');
  expenses = addExpense(expenses, answer.expense);
  save();
  render();
  fields.description.value = '';
  fields.amount.value = '';
  fields.description.focus();
});

fields.date.value = today();
fields.amount.placeholder = formatMoney(0, '', DECIMAL_SEPARATOR);
render();
