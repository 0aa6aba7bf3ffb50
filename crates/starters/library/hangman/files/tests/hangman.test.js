const test = require('node:test');
const assert = require('node:assert');
const {
  baseLetter, cleanWords, pickWord, newGame, isWon, isLost, status, guess, revealed, wrongLetters, partsShown,
} = require('../hangman.js');

function guessAll(state, letters) {
  return [...letters].reduce((s, l) => guess(s, l), state);
}

test('a new game hides every letter and has all its lives', () => {
  const state = newGame('cat', 6);
  assert.deepStrictEqual(revealed(state), ['_', '_', '_']);
  assert.strictEqual(state.lives, 6);
  assert.strictEqual(status(state), 'playing');
});

test('a right letter shows everywhere it appears and costs no life', () => {
  const state = guess(newGame('BANANA', 6), 'a');
  assert.deepStrictEqual(revealed(state), ['_', 'A', '_', 'A', '_', 'A']);
  assert.strictEqual(state.lives, 6);
  assert.deepStrictEqual(state.guessed, ['A']);
});

test('a wrong letter costs one life and is listed', () => {
  const state = guess(newGame('CAT', 6), 'z');
  assert.strictEqual(state.lives, 5);
  assert.deepStrictEqual(wrongLetters(state), ['Z']);
});

test('the same letter twice, or something that is not a letter, changes nothing', () => {
  const once = guess(newGame('CAT', 6), 'Z');
  assert.strictEqual(guess(once, 'z'), once);
  assert.strictEqual(guess(once, '1'), once);
  assert.strictEqual(guess(once, ''), once);
  assert.strictEqual(guess(once, 'AB'), once);
});

test('finding every letter wins', () => {
  const state = guessAll(newGame('CAT', 6), 'TQAC');
  assert.strictEqual(isWon(state), true);
  assert.strictEqual(status(state), 'won');
  assert.strictEqual(state.lives, 5);
  assert.strictEqual(guess(state, 'E'), state, 'no guesses after the end');
});

test('running out of lives loses, and the word can then be shown', () => {
  const state = guessAll(newGame('CAT', 3), 'XYZ');
  assert.strictEqual(isLost(state), true);
  assert.strictEqual(status(state), 'lost');
  assert.strictEqual(guess(state, 'C'), state);
  assert.deepStrictEqual(revealed(state, true), ['C', 'A', 'T']);
});

test('letters match without accents and keep them when shown', () => {
  assert.strictEqual(baseLetter('ç'), 'C');
  assert.strictEqual(baseLetter('Ã'), 'A');
  const state = guessAll(newGame('maçã', 6), 'AC');
  assert.deepStrictEqual(revealed(state), ['_', 'A', 'Ç', 'Ã']);
  assert.strictEqual(guess(state, 'M').lives, 6);
  assert.strictEqual(isWon(guess(state, 'm')), true);
});

test('spaces and hyphens are shown from the start and need no guess', () => {
  const state = newGame('ICE-CREAM CONE', 6);
  assert.deepStrictEqual(revealed(state).join(''), '___-_____ ____');
  assert.strictEqual(isWon(guessAll(state, 'ICERAMON')), true);
});

test('the word list is cleaned: capitals, no repeats, only letters', () => {
  assert.deepStrictEqual(
    cleanWords([' apple ', 'APPLE', 'pão de  queijo', 'r2d2', '', '---', 42, 'guarda-chuva']),
    ['APPLE', 'PÃO DE QUEIJO', 'GUARDA-CHUVA'],
  );
});

test('a new word is picked at random and not the same one twice in a row', () => {
  const words = ['ONE', 'TWO', 'THREE'];
  assert.strictEqual(pickWord(words, () => 0), 'ONE');
  assert.strictEqual(pickWord(words, () => 0.99), 'THREE');
  assert.strictEqual(pickWord(words, () => 0, 'ONE'), 'TWO');
  assert.strictEqual(pickWord(['ONLY'], () => 0, 'ONLY'), 'ONLY', 'one word can repeat');
  assert.strictEqual(pickWord([], () => 0), '');
});

test('the drawing fills up as lives are lost, whatever the number of lives', () => {
  assert.strictEqual(partsShown(newGame('CAT', 6)), 0);
  assert.strictEqual(partsShown(guessAll(newGame('CAT', 6), 'XY')), 2);
  assert.strictEqual(partsShown(guessAll(newGame('CAT', 3), 'X')), 2);
  assert.strictEqual(partsShown(guessAll(newGame('CAT', 3), 'XYZ')), 6);
  assert.strictEqual(partsShown(guessAll(newGame('CAT', 10), 'XYZ')), 2);
});
