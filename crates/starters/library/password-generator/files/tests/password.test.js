const test = require('node:test');
const assert = require('node:assert');
const {
  MIN_LENGTH, MAX_LENGTH, SETS, clampLength, secureRandom, generate, kindsIn, entropyBits, strength,
} = require('../password.js');

const ALL = { lower: true, upper: true, digits: true, symbols: true };

// A random() that gives these numbers in turn.
function fakeRandom(values) {
  let i = 0;
  return () => values[i++ % values.length];
}

test('a password has the length asked for', () => {
  for (const length of [4, 8, 16, 33, 64]) assert.strictEqual(generate(length, ALL).length, length);
});

test('the length stays between the smallest and the largest', () => {
  assert.strictEqual(clampLength(1), MIN_LENGTH);
  assert.strictEqual(clampLength(500), MAX_LENGTH);
  assert.strictEqual(clampLength('12'), 12);
  assert.strictEqual(clampLength('abc'), MIN_LENGTH);
  assert.strictEqual(generate(2, ALL).length, MIN_LENGTH);
});

test('only the chosen kinds of characters are used', () => {
  for (let i = 0; i < 50; i++) {
    assert.match(generate(20, { digits: true }), /^[0-9]{20}$/);
    assert.match(generate(20, { lower: true, upper: true }), /^[a-zA-Z]{20}$/);
  }
  const symbols = generate(30, { symbols: true });
  assert.ok([...symbols].every((c) => SETS.symbols.includes(c)), symbols);
});

test('every chosen kind appears at least once, even in a short password', () => {
  for (let i = 0; i < 200; i++) {
    const password = generate(4, ALL);
    assert.deepStrictEqual(kindsIn(password), ['lower', 'upper', 'digits', 'symbols'], password);
  }
});

test('no kind chosen gives no password', () => {
  assert.strictEqual(generate(16, {}), '');
  assert.strictEqual(generate(16, { lower: false, digits: false }), '');
  assert.strictEqual(generate(16, null), '');
});

test('the same random numbers give the same password', () => {
  const values = [0.1, 0.9, 0.35, 0.6, 0.02, 0.77];
  const a = generate(12, ALL, fakeRandom(values));
  assert.strictEqual(a, generate(12, ALL, fakeRandom(values)));
  assert.strictEqual(generate(4, { digits: true }, () => 0), '0000');
  assert.strictEqual(generate(4, { lower: true }, () => 0.9999), 'zzzz');
});

test('the secure random source gives numbers from 0 up to 1', () => {
  for (let i = 0; i < 100; i++) {
    const n = secureRandom();
    assert.ok(n >= 0 && n < 1, String(n));
  }
});

test('entropy counts the length and the kinds of characters', () => {
  assert.strictEqual(entropyBits(''), 0);
  assert.strictEqual(entropyBits('0000'), Math.round(4 * Math.log2(10)));
  assert.strictEqual(entropyBits('abcdefgh'), Math.round(8 * Math.log2(26)));
  assert.strictEqual(entropyBits('aB3!'), Math.round(4 * Math.log2(26 + 26 + 10 + SETS.symbols.length)));
});

test('strength grows with length and variety', () => {
  assert.strictEqual(strength(''), 0);
  assert.strictEqual(strength('1234'), 0);
  assert.strictEqual(strength('aB3!xY'), 1, 'short passwords are weak whatever they contain');
  assert.strictEqual(strength('abcdefgh'), 2);
  assert.strictEqual(strength('abcdefghijklmn'), 3);
  assert.strictEqual(strength(generate(16, ALL)), 4);
  assert.ok(strength('password') < strength('pA5s!w0rD#x9'));
});
