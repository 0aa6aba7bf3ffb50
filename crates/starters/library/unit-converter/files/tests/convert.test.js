const test = require('node:test');
const assert = require('node:assert');
const { CATEGORIES, unitsOf, categoryOf, convert, parseNumber, formatNumber } = require('../convert.js');

const close = (actual, expected, tolerance = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)), `${actual} is not close to ${expected}`);

test('length: known values', () => {
  close(convert(1, 'km', 'm'), 1000);
  close(convert(1, 'mi', 'km'), 1.609344);
  close(convert(12, 'in', 'ft'), 1);
  close(convert(3, 'ft', 'yd'), 1);
  close(convert(250, 'cm', 'm'), 2.5);
});

test('weight: known values', () => {
  close(convert(1, 'kg', 'g'), 1000);
  close(convert(1, 'lb', 'kg'), 0.45359237);
  close(convert(16, 'oz', 'lb'), 1);
  close(convert(2, 't', 'kg'), 2000);
});

test('temperature: the offsets are right', () => {
  close(convert(0, 'C', 'F'), 32);
  close(convert(100, 'C', 'F'), 212);
  close(convert(212, 'F', 'C'), 100);
  close(convert(-40, 'C', 'F'), -40);
  close(convert(0, 'C', 'K'), 273.15);
  close(convert(0, 'K', 'C'), -273.15);
  close(convert(0, 'K', 'F'), -459.67);
  close(convert(98.6, 'F', 'C'), 37);
});

test('the same unit gives the same value', () => {
  close(convert(42, 'm', 'm'), 42);
  close(convert(-5, 'C', 'C'), -5);
});

test('round trips come back to the start', () => {
  for (const category of CATEGORIES) {
    const units = unitsOf(category);
    for (const a of units) {
      for (const b of units) {
        for (const value of [0, 1, 37.5, 1234.5678]) {
          close(convert(convert(value, a, b), b, a), value);
        }
      }
    }
  }
});

test('zero and negative lengths are converted', () => {
  assert.strictEqual(convert(0, 'km', 'mi'), 0);
  close(convert(-2, 'm', 'cm'), -200);
});

test('invalid input gives null', () => {
  assert.strictEqual(convert(NaN, 'm', 'km'), null);
  assert.strictEqual(convert(Infinity, 'm', 'km'), null);
  assert.strictEqual(convert('5', 'm', 'km'), null);
  assert.strictEqual(convert(undefined, 'm', 'km'), null);
  assert.strictEqual(convert(1, 'm', 'parsec'), null);
  assert.strictEqual(convert(1, 'banana', 'm'), null);
  assert.strictEqual(convert(1, 'toString', 'm'), null);
});

test('different kinds of unit cannot be mixed', () => {
  assert.strictEqual(convert(1, 'm', 'kg'), null);
  assert.strictEqual(convert(1, 'C', 'm'), null);
});

test('nothing is colder than absolute zero', () => {
  assert.strictEqual(convert(-1, 'K', 'C'), null);
  assert.strictEqual(convert(-300, 'C', 'F'), null);
  assert.strictEqual(convert(-500, 'F', 'K'), null);
  close(convert(-273.15, 'C', 'K'), 0);
});

test('categoryOf and unitsOf', () => {
  assert.strictEqual(categoryOf('ft'), 'length');
  assert.strictEqual(categoryOf('oz'), 'weight');
  assert.strictEqual(categoryOf('K'), 'temperature');
  assert.strictEqual(categoryOf('x'), null);
  assert.deepStrictEqual(unitsOf('temperature'), ['C', 'F', 'K']);
  assert.deepStrictEqual(unitsOf('volume'), []);
});

test('parseNumber reads what people type', () => {
  assert.strictEqual(parseNumber('12'), 12);
  assert.strictEqual(parseNumber(' 1.5 '), 1.5);
  assert.strictEqual(parseNumber('1,5'), 1.5);
  assert.strictEqual(parseNumber('-40'), -40);
  assert.strictEqual(parseNumber('.5'), 0.5);
  assert.strictEqual(parseNumber(7), 7);
});

test('parseNumber rejects things that are not numbers', () => {
  for (const bad of ['', '   ', 'abc', '1.2.3', '12abc', '--1', null, undefined, NaN, {}]) {
    assert.strictEqual(parseNumber(bad), null, String(bad));
  }
});

test('formatNumber rounds and drops trailing zeros', () => {
  assert.strictEqual(formatNumber(3.28083989, 4), '3.2808');
  assert.strictEqual(formatNumber(2.5, 4), '2.5');
  assert.strictEqual(formatNumber(1000, 2), '1000');
  assert.strictEqual(formatNumber(0.1 + 0.2, 4), '0.3');
  assert.strictEqual(formatNumber(-0.00001, 0), '-1.00e-5');
  assert.strictEqual(formatNumber(0, 3), '0');
  assert.strictEqual(formatNumber(NaN, 2), '');
});
