const test = require('node:test');
const assert = require('node:assert');
const {
  CATEGORIES, parseNumber, bmi, roundBmi, categoryOf, rangeText, healthyRange, check, formatOne, kgToLb,
} = require('../bmi.js');

test('parseNumber reads dots and commas and refuses the rest', () => {
  assert.strictEqual(parseNumber('70'), 70);
  assert.strictEqual(parseNumber(' 70,5 '), 70.5);
  assert.strictEqual(parseNumber('1.75'), 1.75);
  for (const bad of ['', 'seventy', '-70', '70kg', '7,0,0', null]) assert.strictEqual(parseNumber(bad), null, String(bad));
});

test('bmi of known people', () => {
  assert.strictEqual(roundBmi(bmi(70, 175)), 22.9);
  assert.strictEqual(roundBmi(bmi(90, 180)), 27.8);
  assert.strictEqual(roundBmi(bmi(50, 170)), 17.3);
  assert.strictEqual(roundBmi(bmi(120, 165)), 44.1);
});

test('the WHO categories at their boundaries', () => {
  const at = (value) => categoryOf(value).key;
  assert.strictEqual(at(18.4), 'underweight');
  assert.strictEqual(at(18.5), 'normal');
  assert.strictEqual(at(24.9), 'normal');
  assert.strictEqual(at(25), 'overweight');
  assert.strictEqual(at(29.9), 'overweight');
  assert.strictEqual(at(30), 'obese1');
  assert.strictEqual(at(34.9), 'obese1');
  assert.strictEqual(at(35), 'obese2');
  assert.strictEqual(at(39.9), 'obese2');
  assert.strictEqual(at(40), 'obese3');
  assert.strictEqual(at(12), 'underweight');
  assert.strictEqual(at(70), 'obese3');
});

test('a value is sorted as it is shown, with one decimal', () => {
  assert.strictEqual(categoryOf(24.96).key, 'overweight', 'shown as 25.0');
  assert.strictEqual(categoryOf(24.94).key, 'normal', 'shown as 24.9');
  assert.strictEqual(categoryOf(18.45).key, 'normal', 'shown as 18.5');
});

test('rangeText shows each category\'s range in the page\'s decimal style', () => {
  assert.deepStrictEqual(CATEGORIES.map((c) => rangeText(c, '.')), [
    '< 18.5', '18.5 – 24.9', '25.0 – 29.9', '30.0 – 34.9', '35.0 – 39.9', '≥ 40.0',
  ]);
  assert.strictEqual(rangeText(CATEGORIES[1], ','), '18,5 – 24,9');
});

test('check in metric gives the BMI, its category and the healthy weights for the height', () => {
  const { result } = check('metric', { weight: '70', height: '175' });
  assert.strictEqual(result.bmi, 22.9);
  assert.strictEqual(result.category, 'normal');
  assert.strictEqual(formatOne(result.healthyKg.low, '.'), '56.7');
  assert.strictEqual(formatOne(result.healthyKg.high, ','), '76,3');
  assert.strictEqual(check('metric', { weight: '95,5', height: '170' }).result.category, 'obese1');
});

test('check in imperial agrees with metric', () => {
  // 154 lb, 5 ft 9 in is 69.85 kg, 175.26 cm: BMI 22.7.
  const { result } = check('imperial', { weight: '154', feet: '5', inches: '9' });
  assert.strictEqual(result.bmi, 22.7);
  assert.strictEqual(result.category, 'normal');
  assert.strictEqual(check('imperial', { weight: '200', feet: '6', inches: '' }).result.bmi, 27.1, 'empty inches are 0');
  assert.strictEqual(Math.round(kgToLb(healthyRange(175.26).low)), 125);
});

test('check names the box that is wrong', () => {
  assert.deepStrictEqual(check('metric', { weight: '', height: '175' }), { error: 'weight' });
  assert.deepStrictEqual(check('metric', { weight: 'abc', height: '175' }), { error: 'weight' });
  assert.deepStrictEqual(check('metric', { weight: '0', height: '175' }), { error: 'weight' });
  assert.deepStrictEqual(check('metric', { weight: '70', height: '1.75' }), { error: 'height' }, 'metres, not centimetres');
  assert.deepStrictEqual(check('metric', { weight: '70', height: '-175' }), { error: 'height' });
  assert.deepStrictEqual(check('imperial', { weight: '154', feet: '5', inches: '12' }), { error: 'height' });
  assert.deepStrictEqual(check('imperial', { weight: '154', feet: '', inches: '9' }), { error: 'height' });
  assert.deepStrictEqual(check('imperial', { weight: '5', feet: '5', inches: '9' }), { error: 'weight' });
});
