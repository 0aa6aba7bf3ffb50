// The loan calculator's logic: reading what was typed, the fixed monthly payment of a loan
// (the usual annuity formula, and a plain split at 0% interest) and the schedule of what each
// payment pays off. Money is counted in cents (whole numbers) so the schedule adds up exactly.
// Nothing here touches the page, so the tests can run it in Node.

const MAX_AMOUNT = 100000000;
const MAX_RATE = 100;
const MAX_YEARS = 50;

// Read a number like "10000", "10,000.50", "10.000,50" or "4,5"; null for empty, words or
// negatives. Marks that each have exactly three digits after them group thousands ("1.000",
// "10,000", "1.500.000"), except after a leading 0 ("0.125").
function parseNumber(text) {
  let cleaned = String(text === undefined || text === null ? '' : text).replace(/\s/g, '');
  if (cleaned === '') return null;
  const lastDot = cleaned.lastIndexOf('.');
  const lastComma = cleaned.lastIndexOf(',');
  if (lastDot !== -1 && lastComma !== -1) {
    cleaned = cleaned.split(lastDot > lastComma ? ',' : '.').join('');
  } else if (/^[1-9]\d{0,2}(\.\d{3})+$|^[1-9]\d{0,2}(,\d{3})+$/.test(cleaned)) {
    cleaned = cleaned.replace(/[.,]/g, '');
  }
  cleaned = cleaned.replace(',', '.');
  if (!/^\d*\.?\d*$/.test(cleaned) || cleaned === '.') return null;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : null;
}

// The monthly payment, unrounded: P·r / (1 − (1 + r)^−n) with r the monthly rate and n the
// number of months; P / n when there is no interest.
function monthlyPayment(principal, yearlyRate, years) {
  const months = years * 12;
  const r = yearlyRate / 100 / 12;
  if (r === 0) return principal / months;
  return (principal * r) / (1 - Math.pow(1 + r, -months));
}

// Month by month, in cents: each payment pays the month's interest first and the rest off the
// balance; the last payment is whatever is left, so the balance ends at exactly 0.
// Gives the payment, the totals and a summary per year.
function schedule(principal, yearlyRate, years) {
  const months = years * 12;
  const r = yearlyRate / 100 / 12;
  const payment = Math.round(monthlyPayment(principal, yearlyRate, years) * 100);
  let balance = Math.round(principal * 100);
  let totalPaid = 0;
  let totalInterest = 0;
  const perYear = [];
  for (let month = 1; month <= months; month += 1) {
    const interest = Math.round(balance * r);
    const paid = month === months ? balance + interest : Math.min(payment, balance + interest);
    balance -= paid - interest;
    totalPaid += paid;
    totalInterest += interest;
    const year = Math.ceil(month / 12);
    if (!perYear[year - 1]) perYear[year - 1] = { year, paid: 0, interest: 0, principal: 0, balance: 0 };
    const row = perYear[year - 1];
    row.paid += paid;
    row.interest += interest;
    row.principal += paid - interest;
    row.balance = balance;
  }
  return { payment, totalPaid, totalInterest, perYear };
}

// Read the three boxes: { error: 'amount' | 'rate' | 'years' } or { result } (a schedule).
function check(amountText, rateText, yearsText) {
  const amount = parseNumber(amountText);
  if (amount === null || amount <= 0 || amount > MAX_AMOUNT) return { error: 'amount' };
  const rate = parseNumber(rateText);
  if (rate === null || rate > MAX_RATE) return { error: 'rate' };
  const yearsClean = String(yearsText === undefined || yearsText === null ? '' : yearsText).trim();
  if (!/^\d+$/.test(yearsClean) || Number(yearsClean) < 1 || Number(yearsClean) > MAX_YEARS) return { error: 'years' };
  return { result: schedule(amount, rate, Number(yearsClean)) };
}

// Show cents as money: formatMoney(119910, '$', '.') -> "$1,199.10".
function formatMoney(cents, symbol, separator) {
  const decimalMark = separator === ',' ? ',' : '.';
  const groupMark = decimalMark === ',' ? '.' : ',';
  const abs = Math.abs(Math.round(cents));
  const whole = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, groupMark);
  const prefix = symbol ? (symbol.length > 1 ? symbol + ' ' : symbol) : '';
  return (cents < 0 && abs !== 0 ? '-' : '') + prefix + whole + decimalMark + String(abs % 100).padStart(2, '0');
}

if (typeof module !== 'undefined') {
  module.exports = { MAX_YEARS, parseNumber, monthlyPayment, schedule, check, formatMoney };
}
