const test = require('node:test');
const assert = require('node:assert');
const {
  uniqueSymbols, shuffle, buildDeck, newGame, canFlip, flip, needsHide, hideOpen, isFaceUp, pairsFound, isWon, columnsFor,
} = require('../memory.js');

// A random() that always gives the same numbers, so the deck is predictable.
function fakeRandom(values) {
  let i = 0;
  return () => values[i++ % values.length];
}
const noShuffle = () => 0.9999; // j === i every time: the order stays as built

// A game whose cards are in a known order: A A B B C C
function knownGame() {
  return newGame(['A', 'B', 'C'], noShuffle);
}

test('buildDeck makes two cards per symbol', () => {
  const deck = buildDeck(['A', 'B', 'C'], Math.random);
  assert.strictEqual(deck.length, 6);
  for (const s of ['A', 'B', 'C']) assert.strictEqual(deck.filter((c) => c.symbol === s).length, 2);
  assert.deepStrictEqual(deck.map((c) => c.id), [0, 1, 2, 3, 4, 5]);
  assert.ok(deck.every((c) => c.matched === false));
});

test('buildDeck uses the random function it is given', () => {
  const a = buildDeck(['A', 'B', 'C', 'D'], fakeRandom([0.1, 0.7, 0.3, 0.5]));
  const b = buildDeck(['A', 'B', 'C', 'D'], fakeRandom([0.1, 0.7, 0.3, 0.5]));
  assert.deepStrictEqual(a, b);
  assert.deepStrictEqual(buildDeck(['A', 'B'], noShuffle).map((c) => c.symbol), ['A', 'A', 'B', 'B']);
  assert.deepStrictEqual(buildDeck(['A', 'B'], () => 0).map((c) => c.symbol), ['A', 'B', 'B', 'A']);
});

test('buildDeck ignores repeated and empty symbols', () => {
  const deck = buildDeck(['A', 'A', ' ', 'B', 7], noShuffle);
  assert.deepStrictEqual(deck.map((c) => c.symbol), ['A', 'A', 'B', 'B']);
  assert.deepStrictEqual(buildDeck(null), []);
});

test('uniqueSymbols trims and removes repeats', () => {
  assert.deepStrictEqual(uniqueSymbols([' 🐶 ', '🐶', '🐱']), ['🐶', '🐱']);
});

test('shuffle keeps every item and does not change the original', () => {
  const list = [1, 2, 3, 4, 5];
  const mixed = shuffle(list, Math.random);
  assert.deepStrictEqual([...mixed].sort(), [1, 2, 3, 4, 5]);
  assert.deepStrictEqual(list, [1, 2, 3, 4, 5]);
});

test('a new game has no moves and no open cards', () => {
  const state = knownGame();
  assert.strictEqual(state.moves, 0);
  assert.deepStrictEqual(state.open, []);
  assert.strictEqual(pairsFound(state), 0);
  assert.strictEqual(isWon(state), false);
});

test('flipping one card opens it without counting a move', () => {
  const state = flip(knownGame(), 0);
  assert.deepStrictEqual(state.open, [0]);
  assert.strictEqual(state.moves, 0);
  assert.strictEqual(isFaceUp(state, 0), true);
  assert.strictEqual(isFaceUp(state, 1), false);
});

test('two matching cards stay up as a pair and count one move', () => {
  const state = flip(flip(knownGame(), 0), 1);
  assert.strictEqual(state.moves, 1);
  assert.deepStrictEqual(state.open, []);
  assert.strictEqual(state.cards[0].matched, true);
  assert.strictEqual(state.cards[1].matched, true);
  assert.strictEqual(pairsFound(state), 1);
});

test('two different cards count a move and must be hidden again', () => {
  const state = flip(flip(knownGame(), 0), 2);
  assert.strictEqual(state.moves, 1);
  assert.deepStrictEqual(state.open, [0, 2]);
  assert.strictEqual(needsHide(state), true);
  assert.strictEqual(state.cards[0].matched, false);
  const hidden = hideOpen(state);
  assert.deepStrictEqual(hidden.open, []);
  assert.strictEqual(needsHide(hidden), false);
  assert.strictEqual(hidden.moves, 1);
});

test('a third card cannot be flipped while two are open', () => {
  const two = flip(flip(knownGame(), 0), 2);
  assert.strictEqual(canFlip(two, 4), false);
  assert.strictEqual(flip(two, 4), two);
});

test('the same card cannot be flipped twice', () => {
  const one = flip(knownGame(), 0);
  assert.strictEqual(flip(one, 0), one);
});

test('matched cards and unknown ids cannot be flipped', () => {
  const matched = flip(flip(knownGame(), 0), 1);
  assert.strictEqual(flip(matched, 0), matched);
  assert.strictEqual(flip(matched, 99), matched);
  assert.strictEqual(flip(matched, -1), matched);
});

test('hideOpen does nothing when fewer than two cards are open', () => {
  const one = flip(knownGame(), 0);
  assert.strictEqual(hideOpen(one), one);
});

test('finding every pair wins the game', () => {
  let state = knownGame();
  state = flip(state, 0); state = flip(state, 2); state = hideOpen(state); // miss
  for (const [a, b] of [[0, 1], [2, 3], [4, 5]]) state = flip(flip(state, a), b);
  assert.strictEqual(isWon(state), true);
  assert.strictEqual(state.moves, 4);
  assert.strictEqual(pairsFound(state), 3);
});

test('an empty game is not won', () => {
  assert.strictEqual(isWon(newGame([])), false);
});

test('columnsFor gives a tidy grid', () => {
  assert.strictEqual(columnsFor(12), 4);
  assert.strictEqual(columnsFor(16), 4);
  assert.strictEqual(columnsFor(20), 5);
});
