// The logic of hangman: plain functions over the game state, so the tests can run them in Node.
// The state looks like { word: 'MAÇÃ', guessed: ['A'], lives: 6, maxLives: 6 }.
// Letters are compared without accents, so guessing A also finds Ã and guessing C finds Ç.

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');

// 'ã' -> 'A', 'ç' -> 'C'; anything that is not a single letter gives ''.
function baseLetter(char) {
  const plain = String(char || '').normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase();
  return /^[A-Z]$/.test(plain) ? plain : '';
}

function isLetter(char) {
  return baseLetter(char) !== '';
}

// The words that can be played: trimmed, in capitals, made of letters (spaces and hyphens
// allowed between them), each once.
function cleanWords(words) {
  const out = [];
  for (const w of Array.isArray(words) ? words : []) {
    const word = typeof w === 'string' ? w.trim().replace(/\s+/g, ' ').toUpperCase() : '';
    const ok = [...word].some(isLetter) && [...word].every((c) => isLetter(c) || c === ' ' || c === '-');
    if (ok && !out.includes(word)) out.push(word);
  }
  return out;
}

// A word at random, not the same as the last one when there is a choice.
// random() gives a number in [0, 1), like Math.random.
function pickWord(words, random = Math.random, previous = '') {
  const list = cleanWords(words);
  const choices = list.length > 1 ? list.filter((w) => w !== previous) : list;
  if (choices.length === 0) return '';
  return choices[Math.min(choices.length - 1, Math.floor(random() * choices.length))];
}

function newGame(word, lives = 6) {
  return { word: String(word).toUpperCase(), guessed: [], lives, maxLives: lives };
}

// The letters still to find, without accents.
function missingLetters(state) {
  const missing = new Set();
  for (const c of state.word) {
    const base = baseLetter(c);
    if (base && !state.guessed.includes(base)) missing.add(base);
  }
  return [...missing];
}

function isWon(state) {
  return state.word.length > 0 && missingLetters(state).length === 0;
}

function isLost(state) {
  return state.lives <= 0 && !isWon(state);
}

// 'playing', 'won' or 'lost'.
function status(state) {
  if (isWon(state)) return 'won';
  if (isLost(state)) return 'lost';
  return 'playing';
}

// Guess a letter. A wrong letter costs a life. A letter already tried, something that is not
// a letter, or a finished game changes nothing.
function guess(state, letter) {
  const base = baseLetter(letter);
  if (!base || state.guessed.includes(base) || status(state) !== 'playing') return state;
  const found = [...state.word].some((c) => baseLetter(c) === base);
  return { ...state, guessed: [...state.guessed, base], lives: found ? state.lives : state.lives - 1 };
}

// The word as shown: found letters (with their accents), '_' for the others; spaces and
// hyphens are shown from the start. E.g. ['M', '_', 'Ç', '_'].
function revealed(state, showAll = false) {
  return [...state.word].map((c) => {
    const base = baseLetter(c);
    if (!base) return c;
    return showAll || state.guessed.includes(base) ? c : '_';
  });
}

function wrongLetters(state) {
  return state.guessed.filter((l) => ![...state.word].some((c) => baseLetter(c) === l));
}

// How many of the drawing's parts to show (0 to `parts`), so any number of lives fills the drawing.
function partsShown(state, parts = 6) {
  if (state.maxLives <= 0) return 0;
  return Math.ceil(((state.maxLives - state.lives) / state.maxLives) * parts);
}

if (typeof module !== 'undefined') {
  module.exports = {
    LETTERS, baseLetter, isLetter, cleanWords, pickWord, newGame, missingLetters, isWon, isLost, status, guess,
    revealed, wrongLetters, partsShown,
  };
}
