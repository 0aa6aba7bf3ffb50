// The logic of the converter: plain functions, no page, easy to test.
// Length and weight units are stored as "how many metres / kilograms is one of it".
// Temperatures need an offset too, so they go through kelvin.

const FACTORS = {
  length: { mm: 0.001, cm: 0.01, m: 1, km: 1000, in: 0.0254, ft: 0.3048, yd: 0.9144, mi: 1609.344 },
  weight: { mg: 0.000001, g: 0.001, kg: 1, t: 1000, oz: 0.028349523125, lb: 0.45359237 },
};
const TEMPERATURES = ['C', 'F', 'K'];
const CATEGORIES = ['length', 'weight', 'temperature'];

function unitsOf(category) {
  if (category === 'temperature') return TEMPERATURES.slice();
  return FACTORS[category] ? Object.keys(FACTORS[category]) : [];
}

function categoryOf(unit) {
  if (TEMPERATURES.includes(unit)) return 'temperature';
  for (const category of Object.keys(FACTORS)) {
    if (Object.prototype.hasOwnProperty.call(FACTORS[category], unit)) return category;
  }
  return null;
}

function toKelvin(value, unit) {
  if (unit === 'C') return value + 273.15;
  if (unit === 'F') return (value - 32) * 5 / 9 + 273.15;
  return value;
}

function fromKelvin(kelvin, unit) {
  if (unit === 'C') return kelvin - 273.15;
  if (unit === 'F') return (kelvin - 273.15) * 9 / 5 + 32;
  return kelvin;
}

// Converts value from one unit to another of the same kind.
// Gives null when that makes no sense: not a number, unknown units,
// different kinds (metres to kilograms), or colder than absolute zero.
function convert(value, from, to) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  const category = categoryOf(from);
  if (!category || categoryOf(to) !== category) return null;
  if (category === 'temperature') {
    const kelvin = toKelvin(value, from);
    if (kelvin < -1e-9) return null;
    return fromKelvin(Math.max(kelvin, 0), to);
  }
  return value * FACTORS[category][from] / FACTORS[category][to];
}

// Reads what the person typed: "12", "1.5", "1,5", " -40 ". Anything else gives null.
function parseNumber(text) {
  if (typeof text === 'number') return Number.isFinite(text) ? text : null;
  if (typeof text !== 'string') return null;
  const clean = text.trim().replace(',', '.');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(clean)) return null;
  const n = Number(clean);
  return Number.isFinite(n) ? n : null;
}

// Shows a number with at most `decimals` digits after the point, without trailing zeros.
function formatNumber(n, decimals) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  const d = Math.min(Math.max(Math.trunc(decimals) || 0, 0), 10);
  if (n !== 0 && Math.abs(n) < Math.pow(10, -d) / 2) return n.toExponential(2);
  if (Math.abs(n) >= 1e15) return n.toExponential(4);
  const fixed = Number(n.toFixed(d));
  return String(Object.is(fixed, -0) ? 0 : fixed);
}

if (typeof module !== 'undefined') {
  module.exports = { FACTORS, TEMPERATURES, CATEGORIES, unitsOf, categoryOf, toKelvin, fromKelvin, convert, parseNumber, formatNumber };
}
