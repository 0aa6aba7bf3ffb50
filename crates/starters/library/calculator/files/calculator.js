// The calculator's logic, as a "state machine": the calculator is a plain object,
// and press(state, key) gives back the new object after a key is pressed.
// No eval: every sum is worked out by compute().
//
// The state:
//   current   the number on the display, as text ('0', '12.5', '-3')
//   previous  the number before the operator (or null)
//   operator  '+', '-', '*', '/' (or null)
//   startNew  true when the next digit starts a new number (after an operator or =)
//   error     null, 'divide-by-zero' or 'too-big'
//
// Keys: '0'..'9', '.', '+', '-', '*', '/', '=', 'C' (clear), 'Backspace'.

const MAX_DIGITS = 15;
const OPERATORS = ['+', '-', '*', '/'];
const SYMBOLS = { '+': '+', '-': '−', '*': '×', '/': '÷' };

function initialState() {
  return { current: '0', previous: null, operator: null, startNew: false, error: null };
}

// Work out a op b. Gives null when dividing by zero.
function compute(a, operator, b) {
  if (operator === '+') return a + b;
  if (operator === '-') return a - b;
  if (operator === '*') return a * b;
  if (operator === '/') return b === 0 ? null : a / b;
  return b;
}

// Turn a result into display text, hiding tiny rounding errors (0.1 + 0.2 shows 0.3).
function numberToText(n) {
  const rounded = parseFloat(n.toPrecision(12));
  if (rounded === 0) return '0';
  return String(rounded);
}

// How many digits a number's text has (not counting '-' and '.').
function digitCount(text) {
  return text.replace(/[^0-9]/g, '').length;
}

// Work out the pending sum; gives the new state with the result or the error.
function finish(state) {
  const a = state.previous;
  const b = Number(state.current);
  const result = compute(a, state.operator, b);
  if (result === null) {
    return { current: '0', previous: null, operator: null, startNew: true, error: 'divide-by-zero' };
  }
  if (!Number.isFinite(result)) {
    return { current: '0', previous: null, operator: null, startNew: true, error: 'too-big' };
  }
  return { current: numberToText(result), previous: null, operator: null, startNew: true, error: null };
}

function inputDigit(state, digit) {
  if (state.error) state = initialState();
  if (state.startNew) return Object.assign({}, state, { current: digit, startNew: false });
  if (state.current === '0') return Object.assign({}, state, { current: digit });
  if (state.current === '-0') return Object.assign({}, state, { current: '-' + digit });
  if (digitCount(state.current) >= MAX_DIGITS) return state;
  return Object.assign({}, state, { current: state.current + digit });
}

function inputDecimal(state) {
  if (state.error) state = initialState();
  if (state.startNew) return Object.assign({}, state, { current: '0.', startNew: false });
  if (state.current.includes('.')) return state;
  return Object.assign({}, state, { current: state.current + '.' });
}

function chooseOperator(state, operator) {
  if (state.error) return state;
  // Changing your mind: 5 + then × means 5 ×.
  if (state.operator && state.startNew) return Object.assign({}, state, { operator: operator });
  // Chaining: 2 + 3 + works out 2 + 3 first.
  if (state.operator) {
    const done = finish(state);
    if (done.error) return done;
    return { current: done.current, previous: Number(done.current), operator: operator, startNew: true, error: null };
  }
  return { current: state.current, previous: Number(state.current), operator: operator, startNew: true, error: null };
}

function equals(state) {
  if (state.error || !state.operator) return Object.assign({}, state, { startNew: true });
  return finish(state);
}

function backspace(state) {
  if (state.error) return initialState();
  if (state.startNew) return state;
  let text = state.current.slice(0, -1);
  if (text === '' || text === '-') text = '0';
  return Object.assign({}, state, { current: text });
}

function clear() {
  return initialState();
}

// Press one key; unknown keys change nothing.
function press(state, key) {
  if (/^[0-9]$/.test(key)) return inputDigit(state, key);
  if (key === '.') return inputDecimal(state);
  if (OPERATORS.includes(key)) return chooseOperator(state, key);
  if (key === '=') return equals(state);
  if (key === 'C') return clear();
  if (key === 'Backspace') return backspace(state);
  return state;
}

// Press several keys in a row, e.g. pressAll(['1', '+', '2', '=']).
function pressAll(keys, state) {
  return keys.reduce(press, state || initialState());
}

// Which calculator key a keyboard key means (or null).
function keyFromKeyboard(key) {
  if (/^[0-9]$/.test(key)) return key;
  if (key === '.' || key === ',') return '.';
  if (key === '+' || key === '-' || key === '*' || key === '/') return key;
  if (key === 'x' || key === 'X') return '*';
  if (key === '=' || key === 'Enter') return '=';
  if (key === 'Escape' || key === 'Delete' || key === 'c' || key === 'C') return 'C';
  if (key === 'Backspace') return 'Backspace';
  return null;
}

// The number as it should be shown, with the chosen decimal mark.
function displayText(text, separator) {
  return text.replace('.', separator || '.');
}

// The small line above the display, e.g. "12 ×".
function expression(state, separator) {
  if (state.operator === null || state.previous === null) return '';
  return displayText(numberToText(state.previous), separator) + ' ' + SYMBOLS[state.operator];
}

if (typeof module !== 'undefined') {
  module.exports = {
    initialState, compute, numberToText, press, pressAll, keyFromKeyboard, displayText, expression,
    inputDigit, inputDecimal, chooseOperator, equals, backspace, clear, MAX_DIGITS,
  };
}
