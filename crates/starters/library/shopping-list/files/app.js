// Connects the shopping list's logic (shopping.js) to the page, saved in this browser.

const CURRENCY_SYMBOL = {{ currency_symbol|tojson }};
const DECIMAL_SEPARATOR = {{ decimal_separator|tojson }};
const STARTER_ITEMS = {{ starter_items|tojson }};
const TEXT = {
  remove: {{ delete_label|tojson }},
  fewer: {{ fewer_label|tojson }},
  more: {{ more_label|tojson }},
  errors: {
    name: {{ name_error|tojson }},
    quantity: {{ quantity_error|tojson }},
    price: {{ price_error|tojson }},
  },
};
// One saved list per page address, so two lists on one site keep their own items.
const STORAGE_KEY = 'shopping-list:' + location.pathname;

const form = document.getElementById('add-form');
const fields = {
  name: document.getElementById('name'),
  quantity: document.getElementById('quantity'),
  price: document.getElementById('price'),
};
const errorLines = {
  name: document.getElementById('name-error'),
  quantity: document.getElementById('quantity-error'),
  price: document.getElementById('price-error'),
};
const list = document.getElementById('items');
const empty = document.getElementById('empty');
const clearButton = document.getElementById('clear-checked');

let items = load();

function load() {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved !== null) {
      const parsed = parseSaved(saved);
      if (parsed) return parsed;
    }
  } catch (e) { /* storage not available: start from the example items */ }
  return fromNames(STARTER_ITEMS);
}

function update(next) {
  items = next;
  try { localStorage.setItem(STORAGE_KEY, JSON.stringify(items)); } catch (e) { /* not saved, still works */ }
  render();
}

function money(cents) {
  return formatMoney(cents, CURRENCY_SYMBOL, DECIMAL_SEPARATOR);
}

function button(text, label, className, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = className;
  b.textContent = text;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

function render() {
  list.textContent = '';
  for (const item of items) {
    const li = document.createElement('li');
    li.className = item.checked ? 'item checked' : 'item';
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = item.checked;
    box.addEventListener('change', () => update(toggleItem(items, item.id)));
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = item.name;
    label.append(box, name);
    const quantity = document.createElement('span');
    quantity.className = 'quantity';
    const count = document.createElement('span');
    count.className = 'count';
    count.textContent = item.quantity;
    quantity.append(
      button('−', TEXT.fewer + ' ' + item.name, 'step', () => update(changeQuantity(items, item.id, -1))),
      count,
      button('+', TEXT.more + ' ' + item.name, 'step', () => update(changeQuantity(items, item.id, 1))),
    );
    const price = document.createElement('span');
    price.className = 'price';
    const line = lineCents(item);
    price.textContent = line === null ? '' : money(line);
    li.append(label, quantity, price, button('×', TEXT.remove + ' ' + item.name, 'remove', () => update(removeItem(items, item.id))));
    list.append(li);
  }
  const sums = totals(items);
  document.getElementById('left').textContent = sums.left;
  document.getElementById('in-cart').textContent = money(sums.inCart);
  document.getElementById('total').textContent = money(sums.all);
  empty.hidden = items.length > 0;
  clearButton.hidden = !items.some((i) => i.checked);
}

function showError(name) {
  for (const key of Object.keys(errorLines)) {
    const wrong = key === name;
    errorLines[key].textContent = wrong ? TEXT.errors[key] : '';
    fields[key].classList.toggle('invalid', wrong);
    fields[key].setAttribute('aria-invalid', String(wrong));
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const answer = checkEntry(fields.name.value, fields.quantity.value, fields.price.value);
  showError(answer.error || null);
  if (answer.error) {
    fields[answer.error].focus();
    return;
  }
  update(addItem(items, answer.entry));
  fields.name.value = '';
  fields.quantity.value = '1';
  fields.price.value = '';
  fields.name.focus();
});

clearButton.addEventListener('click', () => update(clearChecked(items)));

fields.price.placeholder = formatMoney(0, '', DECIMAL_SEPARATOR);
render();
