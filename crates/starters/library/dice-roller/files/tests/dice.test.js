const test = require('node:test');
const assert = require('node:assert');
const {
  MAX_DICE, MAX_HISTORY, clampDice, clampSides, rollDie, rollDice, addToHistory, describeRoll, totalRange, faceFor,
} = require('../dice.js');

// A random() that gives these numbers in turn, so the rolls are predictable.
function fakeRandom(values) {
  let i = 0;
  return () => values[i++ % values.length];
}

test('a die gives 1 at the bottom of the random range and its sides at the top', () => {
  assert.strictEqual(rollDie(6, () => 0), 1);
  assert.strictEqual(rollDie(6, () => 0.9999), 6);
  assert.strictEqual(rollDie(20, () => 0.5), 11);
  assert.strictEqual(rollDie(6, () => 1), 6, 'never more than its sides');
});

test('every face of a die can come up and nothing else', () => {
  const seen = new Set();
  for (let i = 0; i < 600; i++) seen.add(rollDie(6, () => i / 600));
  assert.deepStrictEqual([...seen].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6]);
});

test('rolling several dice adds them up', () => {
  const roll = rollDice(3, 6, fakeRandom([0, 0.5, 0.9999]));
  assert.deepStrictEqual(roll, { count: 3, sides: 6, dice: [1, 4, 6], total: 11 });
});

test('a total stays inside the possible range', () => {
  const range = totalRange(4, 8);
  assert.deepStrictEqual(range, { min: 4, max: 32 });
  for (let i = 0; i < 200; i++) {
    const roll = rollDice(4, 8);
    assert.ok(roll.total >= range.min && roll.total <= range.max, String(roll.total));
    assert.ok(roll.dice.every((d) => Number.isInteger(d) && d >= 1 && d <= 8));
  }
});

test('the number of dice and sides are kept within limits', () => {
  assert.strictEqual(clampDice(0), 1);
  assert.strictEqual(clampDice(99), MAX_DICE);
  assert.strictEqual(clampDice('3'), 3);
  assert.strictEqual(clampDice('lots'), 1);
  assert.strictEqual(clampSides(1), 2);
  assert.strictEqual(clampSides(1000), 100);
  assert.strictEqual(clampSides(''), 6, 'an empty box keeps the usual die');
  assert.strictEqual(clampSides(undefined), 6);
  assert.strictEqual(clampSides(7.4), 7);
  assert.strictEqual(rollDice(50, 6, () => 0).dice.length, MAX_DICE);
});

test('the history keeps the newest roll first and only the last 20', () => {
  let history = [];
  for (let i = 1; i <= 25; i++) history = addToHistory(history, { count: 1, sides: 6, dice: [1], total: i });
  assert.strictEqual(history.length, MAX_HISTORY);
  assert.strictEqual(history[0].total, 25);
  assert.strictEqual(history[MAX_HISTORY - 1].total, 6);
  assert.deepStrictEqual(addToHistory([], { total: 1 }, 2).length, 1);
});

test('a roll is described in dice notation', () => {
  assert.strictEqual(describeRoll({ count: 2, sides: 6, dice: [3, 5], total: 8 }), '2d6: 3 + 5 = 8');
  assert.strictEqual(describeRoll({ count: 1, sides: 20, dice: [17], total: 17 }), '1d20: 17');
});

test('six-sided dice show dots, others show numbers', () => {
  assert.strictEqual(faceFor(1, 6), '⚀');
  assert.strictEqual(faceFor(6, 6), '⚅');
  assert.strictEqual(faceFor(6, 8), '6');
  assert.strictEqual(faceFor(12, 20), '12');
});
