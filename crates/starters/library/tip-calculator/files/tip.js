// The tip calculator's logic: functions that read what was typed and work out the money.
// They know nothing about the page, so the tests can run them in Node.

const MAX_PEOPLE = 100;

// Read an amount like "42.50", "42,50" or "1.234,56". Gives null for empty,
// words or negative amounts.
function parseAmount(text) {
  let cleaned = String(text === undefined || text === null ? '' : text).replace(/\s/g, '');
  if (cleaned === '') return null;
  const lastDot = cleaned.lastIndexOf('.');
  const lastComma = cleaned.lastIndexOf(',');
  if (lastDot !== -1 && lastComma !== -1) {
    // Both marks: the last one is the decimal mark, the other groups thousands.
    const thousands = lastDot > lastComma ? ',' : '.';
    cleaned = cleaned.split(thousands).join('');
  }
  cleaned = cleaned.replace(',', '.');
  if (!/^\d*\.?\d*$/.test(cleaned) || cleaned === '.') return null;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : null;
}

// Read a tip percentage: a number from 0 to 100, or null.
function parsePercent(text) {
  const value = parseAmount(text);
  if (value === null || value > 100) return null;
  return value;
}

// Read the number of people: a whole number from 1 to 100, or null (0 people is not allowed).
function parsePeople(text) {
  const cleaned = String(text === undefined || text === null ? '' : text).trim();
  if (!/^\d+$/.test(cleaned)) return null;
  const value = Number(cleaned);
  if (value < 1 || value > MAX_PEOPLE) return null;
  return value;
}

// One person more or fewer, staying between 1 and 100.
function changePeople(people, change) {
  const start = Number.isInteger(people) ? people : 1;
  return Math.min(MAX_PEOPLE, Math.max(1, start + change));
}

// Round to cents: 1.005 -> 1.01.
function roundMoney(amount) {
  return Math.round((amount + Number.EPSILON) * 100) / 100;
}

// Work out the tip and the total, for everybody and for each person.
// Gives null when the bill, the percentage or the people are not valid.
function calculate(bill, percent, people) {
  if (typeof bill !== 'number' || !Number.isFinite(bill) || bill < 0) return null;
  if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0 || percent > 100) return null;
  if (!Number.isInteger(people) || people < 1) return null;
  const tip = bill * percent / 100;
  const total = bill + tip;
  return {
    tip: roundMoney(tip),
    total: roundMoney(total),
    tipPerPerson: roundMoney(tip / people),
    totalPerPerson: roundMoney(total / people),
  };
}

// Read the three boxes and say what is wrong, or give the result.
// error is null, 'bill', 'tip' or 'people'. An empty bill counts as 0, with no error.
function check(billText, percentText, peopleText) {
  const billIsEmpty = String(billText === undefined || billText === null ? '' : billText).trim() === '';
  const bill = billIsEmpty ? 0 : parseAmount(billText);
  if (bill === null) return { error: 'bill', result: null };
  const percent = parsePercent(percentText);
  if (percent === null) return { error: 'tip', result: null };
  const people = parsePeople(peopleText);
  if (people === null) return { error: 'people', result: null };
  return { error: null, result: calculate(bill, percent, people) };
}

// Show an amount of money, e.g. formatMoney(1234.5, '$', '.') -> "$1,234.50"
// and formatMoney(1234.5, 'R$', ',') -> "R$ 1.234,50".
function formatMoney(amount, symbol, separator) {
  const decimalMark = separator === ',' ? ',' : '.';
  const groupMark = decimalMark === ',' ? '.' : ',';
  const fixed = roundMoney(Math.abs(amount)).toFixed(2);
  const whole = fixed.slice(0, -3).replace(/\B(?=(\d{3})+(?!\d))/g, groupMark);
  const cents = fixed.slice(-2);
  const sign = amount < 0 && roundMoney(Math.abs(amount)) !== 0 ? '-' : '';
  const prefix = symbol ? (symbol.length > 1 ? symbol + ' ' : symbol) : '';
  return sign + prefix + whole + decimalMark + cents;
}

if (typeof module !== 'undefined') {
  module.exports = {
    parseAmount, parsePercent, parsePeople, changePeople, roundMoney, calculate, check, formatMoney, MAX_PEOPLE,
  };
}
