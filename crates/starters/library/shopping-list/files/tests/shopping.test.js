const test = require('node:test');
const assert = require('node:assert');
const {
  MAX_QUANTITY, parseCents, parseQuantity, formatMoney, checkEntry, addItem, toggleItem, removeItem,
  clearChecked, changeQuantity, lineCents, totals, fromNames, parseSaved,
} = require('../shopping.js');

test('parseCents reads prices with a dot or a comma', () => {
  assert.strictEqual(parseCents('2.50'), 250);
  assert.strictEqual(parseCents('2,5'), 250);
  assert.strictEqual(parseCents('1.299,90'), 129990);
  assert.strictEqual(parseCents('0'), 0);
  for (const bad of ['two', '-1', '1,999', '.', '']) assert.strictEqual(parseCents(bad), null, bad);
});

test('parseQuantity takes whole numbers from 1 to the maximum', () => {
  assert.strictEqual(parseQuantity(' 3 '), 3);
  assert.strictEqual(parseQuantity(String(MAX_QUANTITY)), MAX_QUANTITY);
  for (const bad of ['0', '-1', '1.5', 'a', '', String(MAX_QUANTITY + 1)]) assert.strictEqual(parseQuantity(bad), null, bad);
});

test('checkEntry names the wrong field and treats an empty price as none', () => {
  assert.deepStrictEqual(checkEntry(' Milk ', '2', ''), { entry: { name: 'Milk', quantity: 2, cents: null } });
  assert.deepStrictEqual(checkEntry('Milk', '2', '1,29'), { entry: { name: 'Milk', quantity: 2, cents: 129 } });
  assert.deepStrictEqual(checkEntry('  ', '2', ''), { error: 'name' });
  assert.deepStrictEqual(checkEntry('Milk', '0', ''), { error: 'quantity' });
  assert.deepStrictEqual(checkEntry('Milk', '2', 'cheap'), { error: 'price' });
});

test('adding the same item again adds to its quantity instead of a second line', () => {
  let items = addItem([], { name: 'Apples', quantity: 3, cents: null });
  items = addItem(items, { name: 'apples', quantity: 2, cents: 45 });
  assert.deepStrictEqual(items, [{ id: 1, name: 'Apples', quantity: 5, cents: 45, checked: false }]);
  items = toggleItem(items, 1);
  items = addItem(items, { name: 'Apples', quantity: 1, cents: null });
  assert.strictEqual(items.length, 2, 'one already in the cart is a line of its own');
  assert.deepStrictEqual(items[1], { id: 2, name: 'Apples', quantity: 1, cents: null, checked: false });
});

test('tick, untick, clear the ticked ones and remove', () => {
  let items = fromNames(['Milk', 'Bread', 'Eggs']);
  items = toggleItem(toggleItem(items, 1), 3);
  assert.deepStrictEqual(items.map((i) => i.checked), [true, false, true]);
  items = toggleItem(items, 3);
  assert.deepStrictEqual(clearChecked(items).map((i) => i.name), ['Bread', 'Eggs']);
  assert.deepStrictEqual(removeItem(items, 2).map((i) => i.id), [1, 3]);
});

test('changeQuantity stays between 1 and the maximum', () => {
  let items = fromNames(['Milk']);
  items = changeQuantity(items, 1, 1);
  assert.strictEqual(items[0].quantity, 2);
  items = changeQuantity(changeQuantity(changeQuantity(items, 1, -1), 1, -1), 1, -1);
  assert.strictEqual(items[0].quantity, 1);
  assert.strictEqual(changeQuantity([{ ...items[0], quantity: MAX_QUANTITY }], 1, 1)[0].quantity, MAX_QUANTITY);
});

test('totals multiply quantity by price, skip items without one, and count the cart', () => {
  let items = [];
  items = addItem(items, { name: 'Milk', quantity: 3, cents: 129 });
  items = addItem(items, { name: 'Bread', quantity: 1, cents: 350 });
  items = addItem(items, { name: 'Salt', quantity: 1, cents: null });
  items = addItem(items, { name: 'Gum', quantity: 3, cents: 10 });
  assert.strictEqual(lineCents(items[0]), 387);
  assert.strictEqual(lineCents(items[2]), null);
  items = toggleItem(items, 1);
  assert.deepStrictEqual(totals(items), { all: 767, inCart: 387, left: 3 });
  assert.strictEqual(formatMoney(totals(items).all, 'R$', ','), 'R$ 7,67');
  assert.deepStrictEqual(totals([]), { all: 0, inCart: 0, left: 0 });
});

test('parseSaved mends what it can and skips the rest', () => {
  const saved = JSON.stringify([
    { id: 1, name: 'Milk', quantity: 2, cents: 129, checked: true },
    { id: 2, name: 'Bread', quantity: -4, cents: 'free' },
    { id: 2, name: 'Same id' },
    { name: 'No id' },
    'Eggs',
  ]);
  assert.deepStrictEqual(parseSaved(saved), [
    { id: 1, name: 'Milk', quantity: 2, cents: 129, checked: true },
    { id: 2, name: 'Bread', quantity: 1, cents: null, checked: false },
  ]);
  assert.strictEqual(parseSaved('not json'), null);
  assert.strictEqual(parseSaved('{"items": []}'), null);
});
