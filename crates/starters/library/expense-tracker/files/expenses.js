// The expense tracker's logic: reading amounts as people type them, the list of expenses and
// the totals. Amounts are kept in cents (whole numbers), so 0.10 + 0.20 is exactly 0.30.
// Nothing here touches the page, so the tests can run it in Node.
// An expense looks like { id: 1, description: 'Lunch', cents: 1250, category: 'Food', date: '2026-03-02' }.

const MAX_CENTS = 100000000000; // a billion, in cents: anything bigger is a typo
const MAX_DESCRIPTION = 80;
const MAX_EXPENSES = 1000;

// Read an amount like "12.50", "12,50", "1.234,56" or "1,234.56" into cents. Gives null for
// empty, words, negative amounts and more than two decimals.
function parseCents(text) {
  let cleaned = String(text === undefined || text === null ? '' : text).replace(/\s/g, '');
  if (cleaned === '') return null;
  const lastDot = cleaned.lastIndexOf('.');
  const lastComma = cleaned.lastIndexOf(',');
  if (lastDot !== -1 && lastComma !== -1) {
    // Both marks: the last one is the decimal mark, the other groups thousands.
    cleaned = cleaned.split(lastDot > lastComma ? ',' : '.').join('');
  }
  cleaned = cleaned.replace(',', '.');
  const m = /^(\d*)(?:\.(\d{0,2}))?$/.exec(cleaned);
  if (!m || (m[1] === '' && !m[2])) return null;
  const cents = Number(m[1] || '0') * 100 + Number((m[2] || '').padEnd(2, '0'));
  return cents <= MAX_CENTS ? cents : null;
}

// Show cents as money: formatMoney(123450, '$', '.') -> "$1,234.50";
// formatMoney(123450, 'R$', ',') -> "R$ 1.234,50".
function formatMoney(cents, symbol, separator) {
  const decimalMark = separator === ',' ? ',' : '.';
  const groupMark = decimalMark === ',' ? '.' : ',';
  const abs = Math.abs(Math.round(cents));
  const whole = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, groupMark);
  const fraction = String(abs % 100).padStart(2, '0');
  const prefix = symbol ? (symbol.length > 1 ? symbol + ' ' : symbol) : '';
  return (cents < 0 && abs !== 0 ? '-' : '') + prefix + whole + decimalMark + fraction;
}

function isDate(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(text));
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

function cleanText(text) {
  return typeof text === 'string' ? text.trim().replace(/\s+/g, ' ').slice(0, MAX_DESCRIPTION) : '';
}

// Check what was typed into the form. Gives { error: 'amount' | 'category' | 'date' } or
// { expense } (without its id yet).
function checkEntry(entry, categories) {
  const cents = parseCents(entry.amount);
  if (cents === null || cents === 0) return { error: 'amount' };
  if (!categories.includes(entry.category)) return { error: 'category' };
  if (!isDate(entry.date)) return { error: 'date' };
  return { expense: { description: cleanText(entry.description), cents, category: entry.category, date: entry.date } };
}

// A new list with the expense added (newest date first; same dates keep the order they were added).
function addExpense(expenses, expense) {
  if (expenses.length >= MAX_EXPENSES) return expenses;
  const id = expenses.reduce((max, e) => Math.max(max, e.id), 0) + 1;
  return sortExpenses([...expenses, { ...expense, id }]);
}

function sortExpenses(expenses) {
  return [...expenses].sort((a, b) => (a.date === b.date ? b.id - a.id : a.date < b.date ? 1 : -1));
}

function removeExpense(expenses, id) {
  return expenses.filter((e) => e.id !== id);
}

// The total of each category, in the order of `categories`; a category of a saved expense
// that is no longer in the list comes after them. Categories with nothing spent are left out.
function totalsByCategory(expenses, categories) {
  const totals = new Map(categories.map((c) => [c, 0]));
  for (const e of expenses) totals.set(e.category, (totals.get(e.category) || 0) + e.cents);
  return [...totals].filter(([, cents]) => cents > 0).map(([category, cents]) => ({ category, cents }));
}

function grandTotal(expenses) {
  return expenses.reduce((sum, e) => sum + e.cents, 0);
}

// What was saved, checked piece by piece; null when it is not a list at all, so the page
// starts empty instead of breaking.
function parseSaved(json) {
  let data;
  try { data = JSON.parse(json); } catch (e) { return null; }
  if (!Array.isArray(data)) return null;
  const expenses = [];
  for (const item of data.slice(0, MAX_EXPENSES)) {
    if (!item || typeof item !== 'object' || !Number.isInteger(item.id)) continue;
    if (!Number.isInteger(item.cents) || item.cents <= 0 || item.cents > MAX_CENTS) continue;
    if (typeof item.category !== 'string' || !item.category.trim() || !isDate(item.date)) continue;
    if (expenses.some((e) => e.id === item.id)) continue;
    expenses.push({
      id: item.id, description: cleanText(item.description), cents: item.cents,
      category: item.category.trim().slice(0, 40), date: item.date,
    });
  }
  return sortExpenses(expenses);
}

if (typeof module !== 'undefined') {
  module.exports = {
    parseCents, formatMoney, isDate, checkEntry, addExpense, removeExpense, totalsByCategory, grandTotal, parseSaved,
  };
}
