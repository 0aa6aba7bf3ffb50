// The BMI calculator's logic: reading what was typed, the body mass index (weight in kg divided
// by the height in metres squared), the WHO category it falls in and the healthy weight range
// for a height. Nothing here touches the page, so the tests can run it in Node.

const KG_PER_LB = 0.45359237;
const CM_PER_IN = 2.54;

// What is believed: anything outside is a typo (or not an adult's measure).
const LIMITS = {
  kg: [10, 500],
  cm: [50, 250],
  lb: [22, 1100],
  totalInches: [20, 98],
};

// The WHO categories for adults, by BMI: each holds values from `min` up to, not including, `max`.
const CATEGORIES = [
  { key: 'underweight', min: null, max: 18.5 },
  { key: 'normal', min: 18.5, max: 25 },
  { key: 'overweight', min: 25, max: 30 },
  { key: 'obese1', min: 30, max: 35 },
  { key: 'obese2', min: 35, max: 40 },
  { key: 'obese3', min: 40, max: null },
];

// Read a number like "70", "70.5" or "70,5"; null for empty, words or negatives.
function parseNumber(text) {
  const cleaned = String(text === undefined || text === null ? '' : text).trim().replace(',', '.');
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(cleaned)) return null;
  return Number(cleaned);
}

function within(value, [low, high]) {
  return value !== null && value >= low && value <= high;
}

// The BMI of a weight in kg and a height in cm.
function bmi(kg, cm) {
  const metres = cm / 100;
  return kg / (metres * metres);
}

// BMIs are shown, and sorted into categories, with one decimal: 24.96 is 25.0, overweight.
function roundBmi(value) {
  return Math.round(value * 10) / 10;
}

function categoryOf(value) {
  const rounded = roundBmi(value);
  return CATEGORIES.find((c) => c.max === null || rounded < c.max);
}

// A category's BMI range as shown: "< 18.5", "18.5 – 24.9", "≥ 40.0" (or with a comma).
function rangeText(category, separator) {
  const show = (n) => n.toFixed(1).replace('.', separator === ',' ? ',' : '.');
  if (category.min === null) return '< ' + show(category.max);
  if (category.max === null) return '≥ ' + show(category.min);
  return show(category.min) + ' – ' + show(category.max - 0.1);
}

// The weights (in kg) with a healthy BMI, 18.5 to 24.9, for a height in cm.
function healthyRange(cm) {
  const metres = cm / 100;
  return { low: 18.5 * metres * metres, high: 24.9 * metres * metres };
}

// Read the boxes and give { error: 'weight' | 'height' } or { result }. `system` is 'metric'
// (weight in kg, height in cm) or 'imperial' (weight in lb, height in feet and inches; empty
// inches count as 0).
function check(system, fields) {
  let kg;
  let cm;
  if (system === 'imperial') {
    const lb = parseNumber(fields.weight);
    if (!within(lb, LIMITS.lb)) return { error: 'weight' };
    const feet = parseNumber(fields.feet);
    const inchesText = String(fields.inches === undefined || fields.inches === null ? '' : fields.inches).trim();
    const inches = inchesText === '' ? 0 : parseNumber(inchesText);
    if (feet === null || inches === null || inches >= 12 || !within(feet * 12 + inches, LIMITS.totalInches)) {
      return { error: 'height' };
    }
    kg = lb * KG_PER_LB;
    cm = (feet * 12 + inches) * CM_PER_IN;
  } else {
    kg = parseNumber(fields.weight);
    if (!within(kg, LIMITS.kg)) return { error: 'weight' };
    cm = parseNumber(fields.height);
    if (!within(cm, LIMITS.cm)) return { error: 'height' };
  }
  const value = bmi(kg, cm);
  return { result: { bmi: roundBmi(value), category: categoryOf(value).key, healthyKg: healthyRange(cm) } };
}

// A number with one decimal in the page's style: formatOne(22.86, ',') -> "22,9".
function formatOne(value, separator) {
  return (Math.round(value * 10) / 10).toFixed(1).replace('.', separator === ',' ? ',' : '.');
}

function kgToLb(kg) {
  return kg / KG_PER_LB;
}

if (typeof module !== 'undefined') {
  module.exports = {
    CATEGORIES, LIMITS, parseNumber, bmi, roundBmi, categoryOf, rangeText, healthyRange, check, formatOne, kgToLb,
  };
}
