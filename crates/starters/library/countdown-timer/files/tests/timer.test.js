const test = require('node:test');
const assert = require('node:assert');
const { clamp, parseNumber, parseInput, toParts, format, tick, isWarning, isDone } = require('../timer.js');

test('clamp keeps a number inside its limits', () => {
  assert.strictEqual(clamp(5, 0, 10), 5);
  assert.strictEqual(clamp(-3, 0, 10), 0);
  assert.strictEqual(clamp(42, 0, 10), 10);
  assert.strictEqual(clamp(NaN, 0, 10), 0);
});

test('parseNumber reads whole numbers and ignores the rest', () => {
  assert.strictEqual(parseNumber('7', 0, 59), 7);
  assert.strictEqual(parseNumber(' 12 ', 0, 59), 12);
  assert.strictEqual(parseNumber('2.9', 0, 59), 2);
  assert.strictEqual(parseNumber('2,5', 0, 59), 2);
  assert.strictEqual(parseNumber('', 0, 59), 0);
  assert.strictEqual(parseNumber('abc', 0, 59), 0);
  assert.strictEqual(parseNumber(undefined, 0, 59), 0);
  assert.strictEqual(parseNumber('-4', 0, 59), 0);
  assert.strictEqual(parseNumber('75', 0, 59), 59);
});

test('parseInput turns minutes and seconds into seconds', () => {
  assert.strictEqual(parseInput('3', '0'), 180);
  assert.strictEqual(parseInput('1', '30'), 90);
  assert.strictEqual(parseInput('0', '45'), 45);
});

test('parseInput treats empty or wrong boxes as zero', () => {
  assert.strictEqual(parseInput('', ''), 0);
  assert.strictEqual(parseInput('-2', 'x'), 0);
  assert.strictEqual(parseInput('', '20'), 20);
});

test('parseInput keeps minutes and seconds in range', () => {
  assert.strictEqual(parseInput('5000', '0'), 999 * 60);
  assert.strictEqual(parseInput('0', '99'), 59);
});

test('toParts splits seconds into minutes and seconds', () => {
  assert.deepStrictEqual(toParts(125), { minutes: 2, seconds: 5 });
  assert.deepStrictEqual(toParts(0), { minutes: 0, seconds: 0 });
  assert.deepStrictEqual(toParts(-10), { minutes: 0, seconds: 0 });
});

test('format shows mm:ss with leading zeros', () => {
  assert.strictEqual(format(0), '00:00');
  assert.strictEqual(format(5), '00:05');
  assert.strictEqual(format(65), '01:05');
  assert.strictEqual(format(600), '10:00');
  assert.strictEqual(format(3599), '59:59');
});

test('format keeps counting minutes past an hour', () => {
  assert.strictEqual(format(6000), '100:00');
});

test('format never shows a negative time', () => {
  assert.strictEqual(format(-5), '00:00');
});

test('tick takes one second away', () => {
  assert.strictEqual(tick(10), 9);
  assert.strictEqual(tick(1), 0);
});

test('tick stops at zero', () => {
  assert.strictEqual(tick(0), 0);
  assert.strictEqual(tick(-1), 0);
});

test('isWarning is true only in the last seconds', () => {
  assert.strictEqual(isWarning(11, 10), false);
  assert.strictEqual(isWarning(10, 10), true);
  assert.strictEqual(isWarning(1, 10), true);
  assert.strictEqual(isWarning(0, 10), false);
});

test('isDone is true at zero', () => {
  assert.strictEqual(isDone(0), true);
  assert.strictEqual(isDone(1), false);
});
