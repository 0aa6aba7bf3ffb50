const test = require('node:test');
const assert = require('node:assert');
const {
  initialState, compute, numberToText, press, pressAll, keyFromKeyboard, displayText, expression, MAX_DIGITS,
} = require('../calculator.js');

// Press the keys of a string one by one, e.g. keys('12+3=').
function keys(text) {
  return pressAll(text.split('').map((k) => (k === 'B' ? 'Backspace' : k)));
}

test('starts at zero', () => {
  assert.strictEqual(initialState().current, '0');
  assert.strictEqual(initialState().error, null);
});

test('typing digits builds a number without a leading zero', () => {
  assert.strictEqual(keys('0012').current, '12');
  assert.strictEqual(keys('705').current, '705');
});

test('adds, subtracts, multiplies and divides', () => {
  assert.strictEqual(keys('12+3=').current, '15');
  assert.strictEqual(keys('12-30=').current, '-18');
  assert.strictEqual(keys('6*7=').current, '42');
  assert.strictEqual(keys('9/4=').current, '2.25');
});

test('compute works out each operator', () => {
  assert.strictEqual(compute(2, '+', 3), 5);
  assert.strictEqual(compute(2, '-', 3), -1);
  assert.strictEqual(compute(2, '*', 3), 6);
  assert.strictEqual(compute(3, '/', 2), 1.5);
  assert.strictEqual(compute(3, '/', 0), null);
});

test('the decimal point works once per number', () => {
  assert.strictEqual(keys('1.5.2').current, '1.52');
  assert.strictEqual(keys('.5').current, '0.5');
  assert.strictEqual(keys('1.5+.5=').current, '2');
});

test('hides rounding errors: 0.1 + 0.2 = 0.3', () => {
  assert.strictEqual(keys('.1+.2=').current, '0.3');
  assert.strictEqual(numberToText(0.1 * 3), '0.3');
  assert.strictEqual(numberToText(-0), '0');
});

test('dividing by zero gives an error, and the next digit starts again', () => {
  const broken = keys('5/0=');
  assert.strictEqual(broken.error, 'divide-by-zero');
  const after = press(broken, '7');
  assert.strictEqual(after.error, null);
  assert.strictEqual(after.current, '7');
});

test('operators do nothing while an error is shown, clear does', () => {
  const broken = keys('5/0=');
  assert.strictEqual(press(broken, '+').error, 'divide-by-zero');
  assert.deepStrictEqual(press(broken, 'C'), initialState());
});

test('a result too big to show gives an error', () => {
  let state = keys('999999999999999');
  const timesBig = ['*'].concat('999999999999999'.split(''), ['=']);
  for (let i = 0; i < 25 && !state.error; i++) state = pressAll(timesBig, state);
  assert.strictEqual(state.error, 'too-big');
  assert.strictEqual(state.current, '0');
});

test('chaining works out each step: 2 + 3 × 4 = 20', () => {
  const state = keys('2+3*');
  assert.strictEqual(state.current, '5');
  assert.strictEqual(press(pressAll(['4'], state), '=').current, '20');
});

test('pressing another operator changes your mind', () => {
  assert.strictEqual(keys('8+-3=').current, '5');
  assert.strictEqual(keys('8*/2=').current, '4');
});

test('equals with no operator keeps the number', () => {
  assert.strictEqual(keys('42=').current, '42');
  assert.strictEqual(keys('=').current, '0');
});

test('a digit after equals starts a new number', () => {
  assert.strictEqual(keys('2+2=7').current, '7');
});

test('an operator after equals keeps going from the result', () => {
  assert.strictEqual(keys('2+2=*10=').current, '40');
});

test('starting with minus makes a negative number', () => {
  assert.strictEqual(keys('-5=').current, '-5');
});

test('clear goes back to zero', () => {
  assert.deepStrictEqual(keys('12+3C'), initialState());
});

test('backspace removes the last digit', () => {
  assert.strictEqual(keys('123B').current, '12');
  assert.strictEqual(keys('5B').current, '0');
  assert.strictEqual(keys('B').current, '0');
  assert.strictEqual(keys('1.5B').current, '1.');
});

test('backspace does not change a result', () => {
  assert.strictEqual(keys('12+3=B').current, '15');
});

test('backspace on a negative result digit by digit ends at zero', () => {
  const state = press(keys('3-5='), '9');
  assert.strictEqual(state.current, '9');
  assert.strictEqual(press(state, 'Backspace').current, '0');
});

test('numbers stop growing at the digit limit', () => {
  const state = keys('1'.repeat(MAX_DIGITS + 5));
  assert.strictEqual(state.current.length, MAX_DIGITS);
});

test('unknown keys change nothing', () => {
  const state = keys('12');
  assert.strictEqual(press(state, 'a'), state);
});

test('keyboard keys map to calculator keys', () => {
  assert.strictEqual(keyFromKeyboard('7'), '7');
  assert.strictEqual(keyFromKeyboard(','), '.');
  assert.strictEqual(keyFromKeyboard('x'), '*');
  assert.strictEqual(keyFromKeyboard('Enter'), '=');
  assert.strictEqual(keyFromKeyboard('Escape'), 'C');
  assert.strictEqual(keyFromKeyboard('Backspace'), 'Backspace');
  assert.strictEqual(keyFromKeyboard('q'), null);
});

test('displayText uses the chosen decimal mark', () => {
  assert.strictEqual(displayText('3.14', ','), '3,14');
  assert.strictEqual(displayText('3.14', '.'), '3.14');
  assert.strictEqual(displayText('42', ','), '42');
});

test('expression shows the number and the operator waiting', () => {
  assert.strictEqual(expression(keys('12*')), '12 ×');
  assert.strictEqual(expression(keys('1.5/'), ','), '1,5 ÷');
  assert.strictEqual(expression(keys('12')), '');
  assert.strictEqual(expression(keys('1+2=')), '');
});
