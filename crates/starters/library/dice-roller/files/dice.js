// The dice roller's logic: plain functions, so the tests can run them in Node with a
// predictable random() instead of Math.random.
// A roll looks like { count: 2, sides: 6, dice: [3, 5], total: 8 }.

const MIN_DICE = 1;
const MAX_DICE = 10;
const MIN_SIDES = 2;
const MAX_SIDES = 100;
const MAX_HISTORY = 20;

// A whole number kept between min and max; anything that is not a number gives the fallback.
function clampWhole(value, min, max, fallback) {
  if (value === '' || value === null || value === undefined) return fallback;
  const n = Math.round(Number(value));
  if (!Number.isFinite(n)) return fallback;
  return Math.min(max, Math.max(min, n));
}

function clampDice(value) {
  return clampWhole(value, MIN_DICE, MAX_DICE, MIN_DICE);
}

function clampSides(value) {
  return clampWhole(value, MIN_SIDES, MAX_SIDES, 6);
}

// One die: a whole number from 1 to sides. random() gives a number in [0, 1).
function rollDie(sides, random = Math.random) {
  const n = Math.floor(random() * sides) + 1;
  return Math.min(sides, Math.max(1, n));
}

// Roll `count` dice with `sides` sides each, and add them up.
function rollDice(count, sides, random = Math.random) {
  const c = clampDice(count);
  const s = clampSides(sides);
  const dice = [];
  for (let i = 0; i < c; i++) dice.push(rollDie(s, random));
  return { count: c, sides: s, dice, total: dice.reduce((sum, d) => sum + d, 0) };
}

// The newest roll first; only the last MAX_HISTORY rolls are kept.
function addToHistory(history, roll, max = MAX_HISTORY) {
  return [roll, ...history].slice(0, max);
}

// A roll in dice notation, e.g. "2d6: 3 + 5 = 8".
function describeRoll(roll) {
  const name = roll.count + 'd' + roll.sides;
  if (roll.dice.length === 1) return name + ': ' + roll.total;
  return name + ': ' + roll.dice.join(' + ') + ' = ' + roll.total;
}

// The smallest and largest total possible, e.g. 2d6 gives 2 to 12.
function totalRange(count, sides) {
  const c = clampDice(count);
  return { min: c, max: c * clampSides(sides) };
}

// What a die shows: the dot face (⚀–⚅) for a six-sided die, the number otherwise.
function faceFor(value, sides) {
  if (sides === 6 && value >= 1 && value <= 6) return String.fromCodePoint(0x267f + value);
  return String(value);
}

if (typeof module !== 'undefined') {
  module.exports = {
    MIN_DICE, MAX_DICE, MIN_SIDES, MAX_SIDES, MAX_HISTORY,
    clampDice, clampSides, rollDie, rollDice, addToHistory, describeRoll, totalRange, faceFor,
  };
}
