const test = require('node:test');
const assert = require('node:assert');
const {
  parseAmount, parsePercent, parsePeople, changePeople, roundMoney, calculate, check, formatMoney, MAX_PEOPLE,
} = require('../tip.js');

test('parseAmount reads dots and commas', () => {
  assert.strictEqual(parseAmount('42.50'), 42.5);
  assert.strictEqual(parseAmount('42,50'), 42.5);
  assert.strictEqual(parseAmount(' 100 '), 100);
  assert.strictEqual(parseAmount('1.234,56'), 1234.56);
  assert.strictEqual(parseAmount('1,234.56'), 1234.56);
  assert.strictEqual(parseAmount('0'), 0);
  assert.strictEqual(parseAmount('.5'), 0.5);
});

test('parseAmount gives null for empty, words and negative amounts', () => {
  assert.strictEqual(parseAmount(''), null);
  assert.strictEqual(parseAmount('   '), null);
  assert.strictEqual(parseAmount(undefined), null);
  assert.strictEqual(parseAmount('abc'), null);
  assert.strictEqual(parseAmount('12abc'), null);
  assert.strictEqual(parseAmount('-5'), null);
  assert.strictEqual(parseAmount('.'), null);
  assert.strictEqual(parseAmount('1.2.3'), null);
});

test('parsePercent accepts 0 to 100', () => {
  assert.strictEqual(parsePercent('15'), 15);
  assert.strictEqual(parsePercent('12,5'), 12.5);
  assert.strictEqual(parsePercent('0'), 0);
  assert.strictEqual(parsePercent('100'), 100);
  assert.strictEqual(parsePercent('101'), null);
  assert.strictEqual(parsePercent('-10'), null);
  assert.strictEqual(parsePercent(''), null);
});

test('parsePeople accepts whole numbers from 1', () => {
  assert.strictEqual(parsePeople('1'), 1);
  assert.strictEqual(parsePeople(' 4 '), 4);
  assert.strictEqual(parsePeople(String(MAX_PEOPLE)), MAX_PEOPLE);
});

test('parsePeople refuses zero, negative, decimal and empty', () => {
  assert.strictEqual(parsePeople('0'), null);
  assert.strictEqual(parsePeople('-2'), null);
  assert.strictEqual(parsePeople('2.5'), null);
  assert.strictEqual(parsePeople(''), null);
  assert.strictEqual(parsePeople('two'), null);
  assert.strictEqual(parsePeople(String(MAX_PEOPLE + 1)), null);
});

test('changePeople stays between 1 and the maximum', () => {
  assert.strictEqual(changePeople(2, 1), 3);
  assert.strictEqual(changePeople(2, -1), 1);
  assert.strictEqual(changePeople(1, -1), 1);
  assert.strictEqual(changePeople(MAX_PEOPLE, 1), MAX_PEOPLE);
  assert.strictEqual(changePeople(null, 1), 2);
});

test('roundMoney rounds to cents', () => {
  assert.strictEqual(roundMoney(1.005), 1.01);
  assert.strictEqual(roundMoney(2.344), 2.34);
  assert.strictEqual(roundMoney(0), 0);
});

test('calculate works out the tip and the total for one person', () => {
  assert.deepStrictEqual(calculate(100, 15, 1), { tip: 15, total: 115, tipPerPerson: 15, totalPerPerson: 115 });
});

test('calculate splits between people', () => {
  assert.deepStrictEqual(calculate(142.55, 15, 5), { tip: 21.38, total: 163.93, tipPerPerson: 4.28, totalPerPerson: 32.79 });
});

test('calculate with a 0% tip or a zero bill', () => {
  assert.deepStrictEqual(calculate(50, 0, 2), { tip: 0, total: 50, tipPerPerson: 0, totalPerPerson: 25 });
  assert.deepStrictEqual(calculate(0, 20, 3), { tip: 0, total: 0, tipPerPerson: 0, totalPerPerson: 0 });
});

test('calculate refuses zero people and bad numbers', () => {
  assert.strictEqual(calculate(100, 15, 0), null);
  assert.strictEqual(calculate(100, 15, -1), null);
  assert.strictEqual(calculate(100, 15, 1.5), null);
  assert.strictEqual(calculate(-100, 15, 1), null);
  assert.strictEqual(calculate(NaN, 15, 1), null);
  assert.strictEqual(calculate(null, 15, 1), null);
  assert.strictEqual(calculate(100, 150, 1), null);
});

test('check treats an empty bill as zero without an error', () => {
  assert.deepStrictEqual(check('', '15', '2'), { error: null, result: { tip: 0, total: 0, tipPerPerson: 0, totalPerPerson: 0 } });
});

test('check says which box is wrong', () => {
  assert.strictEqual(check('abc', '15', '2').error, 'bill');
  assert.strictEqual(check('-3', '15', '2').error, 'bill');
  assert.strictEqual(check('100', '', '2').error, 'tip');
  assert.strictEqual(check('100', '200', '2').error, 'tip');
  assert.strictEqual(check('100', '15', '0').error, 'people');
  assert.strictEqual(check('100', '15', '').error, 'people');
});

test('check gives the result when everything is fine', () => {
  const answer = check('80,00', '10', '4');
  assert.strictEqual(answer.error, null);
  assert.deepStrictEqual(answer.result, { tip: 8, total: 88, tipPerPerson: 2, totalPerPerson: 22 });
});

test('formatMoney shows the symbol, two decimals and thousands', () => {
  assert.strictEqual(formatMoney(12.5, '$', '.'), '$12.50');
  assert.strictEqual(formatMoney(1234.5, '$', '.'), '$1,234.50');
  assert.strictEqual(formatMoney(1234.5, 'R$', ','), 'R$ 1.234,50');
  assert.strictEqual(formatMoney(0, '€', ','), '€0,00');
  assert.strictEqual(formatMoney(1000000, '£', '.'), '£1,000,000.00');
});

test('formatMoney without a symbol, and with a negative amount', () => {
  assert.strictEqual(formatMoney(3, '', '.'), '3.00');
  assert.strictEqual(formatMoney(-3, '$', '.'), '-$3.00');
  assert.strictEqual(formatMoney(-0.001, '$', '.'), '$0.00');
});
