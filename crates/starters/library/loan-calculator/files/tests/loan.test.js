const test = require('node:test');
const assert = require('node:assert');
const { MAX_YEARS, parseNumber, monthlyPayment, schedule, check, formatMoney } = require('../loan.js');

test('parseNumber reads amounts and rates written either way', () => {
  assert.strictEqual(parseNumber('10000'), 10000);
  assert.strictEqual(parseNumber('10,000'), 10000);
  assert.strictEqual(parseNumber('10.000'), 10000);
  assert.strictEqual(parseNumber('250.000,50'), 250000.5);
  assert.strictEqual(parseNumber('250,000.50'), 250000.5);
  assert.strictEqual(parseNumber('4,5'), 4.5);
  assert.strictEqual(parseNumber('4.75'), 4.75);
  assert.strictEqual(parseNumber('1,2'), 1.2);
  assert.strictEqual(parseNumber('1.000'), 1000, 'a thousand, as written in Portuguese');
  assert.strictEqual(parseNumber('1.500.000'), 1500000);
  assert.strictEqual(parseNumber('0.125'), 0.125);
  for (const bad of ['', 'lots', '-5', '5%', '.']) assert.strictEqual(parseNumber(bad), null, bad);
});

test('the monthly payment matches known loans', () => {
  // A 30-year mortgage of 200,000 at 6% is 1,199.10 a month; 10,000 over 5 years at 5% is 188.71.
  assert.strictEqual(Math.round(monthlyPayment(200000, 6, 30) * 100), 119910);
  assert.strictEqual(Math.round(monthlyPayment(10000, 5, 5) * 100), 18871);
  assert.strictEqual(Math.round(monthlyPayment(25000, 3.5, 10) * 100), 24721);
});

test('at 0% interest the amount is split evenly and nothing is paid on top', () => {
  assert.strictEqual(monthlyPayment(12000, 0, 1), 1000);
  const plan = schedule(12000, 0, 1);
  assert.strictEqual(plan.payment, 100000);
  assert.strictEqual(plan.totalInterest, 0);
  assert.strictEqual(plan.totalPaid, 1200000);
});

test('the last payment takes up the rounding, so the total is exact', () => {
  // 1,000 over 36 months is 27.78 a month; 35 × 27.78 = 972.30, the last is 27.70.
  const plan = schedule(1000, 0, 3);
  assert.strictEqual(plan.payment, 2778);
  assert.strictEqual(plan.totalPaid, 100000);
  assert.deepStrictEqual(plan.perYear.map((y) => y.paid), [33336, 33336, 33328]);
  assert.strictEqual(plan.perYear[2].balance, 0);
});

test('the schedule pays off the whole loan and the interest is the rest', () => {
  const plan = schedule(200000, 6, 30);
  assert.strictEqual(plan.perYear.length, 30);
  assert.strictEqual(plan.perYear[29].balance, 0);
  assert.strictEqual(plan.perYear.reduce((sum, y) => sum + y.principal, 0), 20000000);
  assert.strictEqual(plan.totalPaid - plan.totalInterest, 20000000);
  // Unrounded, 360 payments of 1,199.1011 are 431,676.38; cents rounding may move it by cents.
  assert.ok(Math.abs(plan.totalPaid - monthlyPayment(200000, 6, 30) * 360 * 100) < 100, String(plan.totalPaid));
  // Worked out without rounding, the first year's interest is 11,933.19: mostly interest.
  assert.ok(Math.abs(plan.perYear[0].interest - 1193319) <= 2, String(plan.perYear[0].interest));
  assert.strictEqual(plan.perYear[0].principal + plan.perYear[0].interest, 12 * 119910);
});

test('check names the box that is wrong', () => {
  assert.deepStrictEqual(check('', '5', '5'), { error: 'amount' });
  assert.deepStrictEqual(check('0', '5', '5'), { error: 'amount' });
  assert.deepStrictEqual(check('ten', '5', '5'), { error: 'amount' });
  assert.deepStrictEqual(check('10000', '', '5'), { error: 'rate' });
  assert.deepStrictEqual(check('10000', '150', '5'), { error: 'rate' });
  assert.deepStrictEqual(check('10000', '5', '0'), { error: 'years' });
  assert.deepStrictEqual(check('10000', '5', '2.5'), { error: 'years' });
  assert.deepStrictEqual(check('10000', '5', String(MAX_YEARS + 1)), { error: 'years' });
});

test('check with good values gives the schedule', () => {
  const { result } = check('10.000', '5', '5');
  assert.strictEqual(formatMoney(result.payment, '$', '.'), '$188.71');
  assert.strictEqual(formatMoney(result.totalInterest, 'R$', ','), 'R$ 1.322,74');
  assert.strictEqual(check('10000', '0', '5').result.payment, 16667);
});

test('formatMoney groups thousands in both styles', () => {
  assert.strictEqual(formatMoney(43167600, '$', '.'), '$431,676.00');
  assert.strictEqual(formatMoney(43167600, 'R$', ','), 'R$ 431.676,00');
  assert.strictEqual(formatMoney(5, '€', ','), '€0,05');
});
