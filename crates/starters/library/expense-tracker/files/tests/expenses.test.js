const test = require('node:test');
const assert = require('node:assert');
const {
  parseCents, formatMoney, isDate, checkEntry, addExpense, removeExpense, totalsByCategory, grandTotal, parseSaved,
} = require('../expenses.js');

const CATEGORIES = ['Food', 'Transport', 'Home'];

test('parseCents reads dots, commas and thousands', () => {
  assert.strictEqual(parseCents('12.50'), 1250);
  assert.strictEqual(parseCents('12,5'), 1250);
  assert.strictEqual(parseCents(' 7 '), 700);
  assert.strictEqual(parseCents('1.234,56'), 123456);
  assert.strictEqual(parseCents('1,234.56'), 123456);
  assert.strictEqual(parseCents(',99'), 99);
  assert.strictEqual(parseCents('0.07'), 7);
});

test('parseCents refuses empty, words, negatives and fractions of a cent', () => {
  for (const bad of ['', '  ', 'ten', '12abc', '-5', '.', '1.2.3', '3.999', null, undefined]) {
    assert.strictEqual(parseCents(bad), null, String(bad));
  }
});

test('formatMoney shows symbol, thousands and two decimals in both styles', () => {
  assert.strictEqual(formatMoney(123450, '$', '.'), '$1,234.50');
  assert.strictEqual(formatMoney(123450, 'R$', ','), 'R$ 1.234,50');
  assert.strictEqual(formatMoney(5, '€', ','), '€0,05');
  assert.strictEqual(formatMoney(0, '', '.'), '0.00');
});

test('checkEntry says which field is wrong', () => {
  const ok = { description: ' Lunch ', amount: '12,50', category: 'Food', date: '2026-03-02' };
  assert.deepStrictEqual(checkEntry(ok, CATEGORIES), {
    expense: { description: 'Lunch', cents: 1250, category: 'Food', date: '2026-03-02' },
  });
  assert.deepStrictEqual(checkEntry({ ...ok, amount: 'abc' }, CATEGORIES), { error: 'amount' });
  assert.deepStrictEqual(checkEntry({ ...ok, amount: '0' }, CATEGORIES), { error: 'amount' }, 'nothing spent');
  assert.deepStrictEqual(checkEntry({ ...ok, category: 'Cars' }, CATEGORIES), { error: 'category' });
  assert.deepStrictEqual(checkEntry({ ...ok, date: '' }, CATEGORIES), { error: 'date' });
  assert.deepStrictEqual(checkEntry({ ...ok, date: '2026-02-30' }, CATEGORIES), { error: 'date' });
  assert.strictEqual(isDate('2024-02-29'), true);
});

test('addExpense gives ids and keeps the newest date first', () => {
  let list = [];
  list = addExpense(list, { description: 'Bus', cents: 300, category: 'Transport', date: '2026-03-01' });
  list = addExpense(list, { description: 'Rent', cents: 90000, category: 'Home', date: '2026-03-05' });
  list = addExpense(list, { description: 'Lunch', cents: 1250, category: 'Food', date: '2026-03-01' });
  assert.deepStrictEqual(list.map((e) => [e.id, e.description]), [[2, 'Rent'], [3, 'Lunch'], [1, 'Bus']]);
  list = removeExpense(list, 2);
  assert.deepStrictEqual(list.map((e) => e.id), [3, 1]);
  assert.strictEqual(addExpense(list, { description: 'x', cents: 1, category: 'Food', date: '2026-03-01' })[0].id, 4);
});

test('totals per category and overall add up exactly', () => {
  let list = [];
  for (const [cents, category] of [[10, 'Food'], [20, 'Food'], [300, 'Transport'], [1999, 'Food']]) {
    list = addExpense(list, { description: '', cents, category, date: '2026-03-02' });
  }
  assert.deepStrictEqual(totalsByCategory(list, CATEGORIES), [
    { category: 'Food', cents: 2029 },
    { category: 'Transport', cents: 300 },
  ], 'Home spent nothing and is left out');
  assert.strictEqual(grandTotal(list), 2329);
  assert.strictEqual(formatMoney(totalsByCategory(list.filter((e) => e.cents < 100), CATEGORIES)[0].cents, '$', '.'), '$0.30');
  assert.strictEqual(grandTotal([]), 0);
});

test('a saved expense of a category no longer listed still counts, after the others', () => {
  const list = [
    { id: 1, description: '', cents: 500, category: 'Pets', date: '2026-03-02' },
    { id: 2, description: '', cents: 700, category: 'Home', date: '2026-03-02' },
  ];
  assert.deepStrictEqual(totalsByCategory(list, CATEGORIES), [
    { category: 'Home', cents: 700 },
    { category: 'Pets', cents: 500 },
  ]);
});

test('parseSaved keeps good expenses and skips broken ones', () => {
  const saved = JSON.stringify([
    { id: 1, description: 'Lunch', cents: 1250, category: 'Food', date: '2026-03-01' },
    { id: 2, description: 'Bad amount', cents: '12', category: 'Food', date: '2026-03-01' },
    { id: 3, description: 'Bad date', cents: 100, category: 'Food', date: 'yesterday' },
    { id: 1, description: 'Same id', cents: 100, category: 'Food', date: '2026-03-01' },
    { id: 4, description: 'Negative', cents: -100, category: 'Food', date: '2026-03-01' },
    null,
    { id: 5, cents: 300, category: 'Transport', date: '2026-03-04' },
  ]);
  assert.deepStrictEqual(parseSaved(saved), [
    { id: 5, description: '', cents: 300, category: 'Transport', date: '2026-03-04' },
    { id: 1, description: 'Lunch', cents: 1250, category: 'Food', date: '2026-03-01' },
  ]);
});

test('parseSaved gives null for garbage so the page starts empty', () => {
  assert.strictEqual(parseSaved('{oops'), null);
  assert.strictEqual(parseSaved('{"a": 1}'), null);
  assert.strictEqual(parseSaved('null'), null);
});
