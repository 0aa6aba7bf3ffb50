// The shopping list's logic: items with a quantity and an optional price each, ticking them
// off, and the totals. Prices are kept in cents (whole numbers) so totals add up exactly.
// Nothing here touches the page, so the tests can run it in Node.
// An item looks like { id: 1, name: 'Milk', quantity: 2, cents: 129, checked: false };
// cents is null when no price was given.

const MAX_NAME = 60;
const MAX_QUANTITY = 999;
const MAX_ITEMS = 200;
const MAX_CENTS = 10000000;

// Read a price like "2.50", "2,5" or "1.299,90" into cents; null for words, negatives or more
// than two decimals.
function parseCents(text) {
  let cleaned = String(text === undefined || text === null ? '' : text).replace(/\s/g, '');
  if (cleaned === '') return null;
  const lastDot = cleaned.lastIndexOf('.');
  const lastComma = cleaned.lastIndexOf(',');
  if (lastDot !== -1 && lastComma !== -1) cleaned = cleaned.split(lastDot > lastComma ? ',' : '.').join('');
  cleaned = cleaned.replace(',', '.');
  const m = /^(\d*)(?:\.(\d{0,2}))?$/.exec(cleaned);
  if (!m || (m[1] === '' && !m[2])) return null;
  const cents = Number(m[1] || '0') * 100 + Number((m[2] || '').padEnd(2, '0'));
  return cents <= MAX_CENTS ? cents : null;
}

// A whole number from 1 to 999, or null.
function parseQuantity(text) {
  const cleaned = String(text === undefined || text === null ? '' : text).trim();
  if (!/^\d+$/.test(cleaned)) return null;
  const n = Number(cleaned);
  return n >= 1 && n <= MAX_QUANTITY ? n : null;
}

function formatMoney(cents, symbol, separator) {
  const decimalMark = separator === ',' ? ',' : '.';
  const groupMark = decimalMark === ',' ? '.' : ',';
  const abs = Math.abs(Math.round(cents));
  const whole = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, groupMark);
  const prefix = symbol ? (symbol.length > 1 ? symbol + ' ' : symbol) : '';
  return prefix + whole + decimalMark + String(abs % 100).padStart(2, '0');
}

function cleanName(name) {
  return typeof name === 'string' ? name.trim().replace(/\s+/g, ' ').slice(0, MAX_NAME) : '';
}

// Check what was typed: { error: 'name' | 'quantity' | 'price' } or { entry }. An empty price
// is no price at all.
function checkEntry(nameText, quantityText, priceText) {
  const name = cleanName(nameText);
  if (!name) return { error: 'name' };
  const quantity = parseQuantity(quantityText);
  if (quantity === null) return { error: 'quantity' };
  const priceEmpty = String(priceText === undefined || priceText === null ? '' : priceText).trim() === '';
  const cents = priceEmpty ? null : parseCents(priceText);
  if (!priceEmpty && cents === null) return { error: 'price' };
  return { entry: { name, quantity, cents } };
}

// Add an item. The same name again (whatever its capitals), still to buy, adds to its quantity
// (and takes the new price when one is given) instead of making a second line.
function addItem(items, entry) {
  const same = items.find((i) => !i.checked && i.name.toLowerCase() === entry.name.toLowerCase());
  if (same) {
    return items.map((i) => (i === same ? {
      ...i,
      quantity: Math.min(MAX_QUANTITY, i.quantity + entry.quantity),
      cents: entry.cents === null ? i.cents : entry.cents,
    } : i));
  }
  if (items.length >= MAX_ITEMS) return items;
  const id = items.reduce((max, i) => Math.max(max, i.id), 0) + 1;
  return [...items, { id, name: entry.name, quantity: entry.quantity, cents: entry.cents, checked: false }];
}

function toggleItem(items, id) {
  return items.map((i) => (i.id === id ? { ...i, checked: !i.checked } : i));
}

function removeItem(items, id) {
  return items.filter((i) => i.id !== id);
}

function clearChecked(items) {
  return items.filter((i) => !i.checked);
}

// One more or one fewer, between 1 and 999.
function changeQuantity(items, id, change) {
  return items.map((i) => (i.id === id
    ? { ...i, quantity: Math.min(MAX_QUANTITY, Math.max(1, i.quantity + change)) } : i));
}

// The price of a line: quantity × price each, or null without a price.
function lineCents(item) {
  return item.cents === null ? null : item.cents * item.quantity;
}

// The totals: of everything with a price, of what is ticked (in the cart), and how many lines
// are still to buy.
function totals(items) {
  let all = 0;
  let inCart = 0;
  for (const item of items) {
    const line = lineCents(item) || 0;
    all += line;
    if (item.checked) inCart += line;
  }
  return { all, inCart, left: items.filter((i) => !i.checked).length };
}

function fromNames(names) {
  let items = [];
  for (const name of Array.isArray(names) ? names : []) {
    const clean = cleanName(name);
    if (clean) items = addItem(items, { name: clean, quantity: 1, cents: null });
  }
  return items;
}

// What was saved, checked piece by piece; null when it is not a list, so the page starts again.
function parseSaved(json) {
  let data;
  try { data = JSON.parse(json); } catch (e) { return null; }
  if (!Array.isArray(data)) return null;
  const items = [];
  for (const item of data.slice(0, MAX_ITEMS)) {
    if (!item || typeof item !== 'object' || !Number.isInteger(item.id)) continue;
    const name = cleanName(item.name);
    if (!name || items.some((i) => i.id === item.id)) continue;
    const quantity = Number.isInteger(item.quantity) && item.quantity >= 1 && item.quantity <= MAX_QUANTITY ? item.quantity : 1;
    const cents = Number.isInteger(item.cents) && item.cents >= 0 && item.cents <= MAX_CENTS ? item.cents : null;
    items.push({ id: item.id, name, quantity, cents, checked: item.checked === true });
  }
  return items;
}

if (typeof module !== 'undefined') {
  module.exports = {
    MAX_QUANTITY, parseCents, parseQuantity, formatMoney, checkEntry, addItem, toggleItem, removeItem,
    clearChecked, changeQuantity, lineCents, totals, fromNames, parseSaved,
  };
}
