// The password generator's logic: plain functions, so the tests can run them in Node with a
// predictable random() instead of the browser's secure one.

const MIN_LENGTH = 4;
const MAX_LENGTH = 64;

// The kinds of characters a password can use.
const SETS = {
  lower: 'abcdefghijklmnopqrstuvwxyz',
  upper: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  digits: '0123456789',
  symbols: '!@#$%^&*()-_=+[]{};:,.?/',
};
const KINDS = Object.keys(SETS);

function clampLength(value) {
  const n = Math.round(Number(value));
  if (!Number.isFinite(n)) return MIN_LENGTH;
  return Math.min(MAX_LENGTH, Math.max(MIN_LENGTH, n));
}

// A number in [0, 1) from the browser's (or Node's) secure random source: unlike
// Math.random, nobody can guess what comes next.
function secureRandom() {
  const buffer = new Uint32Array(1);
  globalThis.crypto.getRandomValues(buffer);
  return buffer[0] / 4294967296;
}

function pickChar(set, random) {
  return set[Math.min(set.length - 1, Math.floor(random() * set.length))];
}

// A password of `length` characters using the kinds switched on in `kinds`
// ({ lower: true, digits: true, ... }), with at least one character of each of them.
// No kind switched on gives ''.
function generate(length, kinds, random = secureRandom) {
  const chosen = KINDS.filter((k) => kinds && kinds[k]);
  if (chosen.length === 0) return '';
  const size = clampLength(length);
  const pool = chosen.map((k) => SETS[k]).join('');
  const chars = chosen.map((k) => pickChar(SETS[k], random));
  while (chars.length < size) chars.push(pickChar(pool, random));
  // Mix them, so the guaranteed characters are not always at the start (Fisher–Yates).
  for (let i = chars.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  return chars.join('');
}

// The kinds of characters a password has.
function kindsIn(password) {
  return KINDS.filter((k) => [...password].some((c) => SETS[k].includes(c)));
}

// How hard the password is to guess, in bits: length × log2(how many characters it could use).
function entropyBits(password) {
  const poolSize = kindsIn(password).reduce((n, k) => n + SETS[k].length, 0);
  if (poolSize === 0) return 0;
  return Math.round(password.length * Math.log2(poolSize));
}

// 0 (very weak) to 4 (very strong). Short passwords are weak whatever they contain.
function strength(password) {
  const bits = entropyBits(password);
  let level = 0;
  if (bits >= 28) level = 1;
  if (bits >= 36) level = 2;
  if (bits >= 60) level = 3;
  if (bits >= 90) level = 4;
  if (password.length < 8) level = Math.min(level, 1);
  return level;
}

if (typeof module !== 'undefined') {
  module.exports = { MIN_LENGTH, MAX_LENGTH, SETS, KINDS, clampLength, secureRandom, generate, kindsIn, entropyBits, strength };
}
