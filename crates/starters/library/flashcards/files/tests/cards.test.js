const test = require('node:test');
const assert = require('node:assert');
const {
  cleanDeck, shuffled, newSession, currentCard, flip, isKnown, allKnown, move, toggleKnown, shuffle, studyAgain, progress,
} = require('../cards.js');

test('the deck keeps cards with both sides, trimmed, each term once', () => {
  const deck = cleanDeck([
    { term: ' Cell ', definition: ' The smallest unit of life. ' },
    { term: 'cell', definition: 'Again' },
    { term: 'Atom', definition: '' },
    { term: '', definition: 'No term' },
    null,
    { term: 'Gene', definition: 'A piece of DNA.' },
  ]);
  assert.deepStrictEqual(deck, [
    { term: 'Cell', definition: 'The smallest unit of life.' },
    { term: 'Gene', definition: 'A piece of DNA.' },
  ]);
  assert.deepStrictEqual(cleanDeck('nope'), []);
});

test('a session starts on the first card with its term showing', () => {
  const state = newSession(3);
  assert.deepStrictEqual(state, { order: [0, 1, 2], pos: 0, flipped: false, known: [] });
  assert.strictEqual(currentCard(state), 0);
  assert.deepStrictEqual(progress(state), { position: 1, total: 3, known: 0 });
});

test('flipping shows the definition and flipping again the term', () => {
  const once = flip(newSession(3));
  assert.strictEqual(once.flipped, true);
  assert.strictEqual(flip(once).flipped, false);
});

test('next and previous go round at the ends and show the term again', () => {
  let state = flip(newSession(3));
  state = move(state, 1);
  assert.strictEqual(currentCard(state), 1);
  assert.strictEqual(state.flipped, false);
  state = move(move(state, 1), 1);
  assert.strictEqual(currentCard(state), 0, 'after the last comes the first');
  assert.strictEqual(currentCard(move(state, -1)), 2, 'before the first comes the last');
});

test('marking a card as known and unmarking it', () => {
  const marked = toggleKnown(move(newSession(3), 1));
  assert.strictEqual(isKnown(marked, 1), true);
  assert.deepStrictEqual(progress(marked), { position: 2, total: 3, known: 1 });
  assert.strictEqual(isKnown(toggleKnown(marked), 1), false);
});

test('skipping known cards passes over them, both ways', () => {
  let state = toggleKnown(move(newSession(4), 1)); // card 1 known, on card 1
  state = move(state, -1); // back to card 0
  assert.strictEqual(currentCard(move(state, 1, true)), 2, 'card 1 is skipped');
  assert.strictEqual(currentCard(move(state, 1, false)), 1, 'not skipped when asked not to');
  state = move(state, 1, true); // card 2
  assert.strictEqual(currentCard(move(state, -1, true)), 0);
});

test('when every card is known, that is said and moving still works', () => {
  let state = newSession(2);
  state = toggleKnown(state);
  assert.strictEqual(allKnown(state), false);
  state = toggleKnown(move(state, 1, true));
  assert.strictEqual(allKnown(state), true);
  assert.strictEqual(currentCard(move(state, 1, true)), 0);
  const again = studyAgain(state);
  assert.deepStrictEqual(again.known, []);
  assert.strictEqual(again.pos, 0);
  assert.strictEqual(allKnown(again), false);
});

test('shuffling changes the order with the random source and keeps every card', () => {
  const state = toggleKnown(newSession(4));
  const mixed = shuffle(move(state, 1), () => 0);
  assert.deepStrictEqual(mixed.order, [1, 2, 3, 0]);
  assert.strictEqual(mixed.pos, 0);
  assert.deepStrictEqual(mixed.known, [0], 'the known marks stay');
  assert.deepStrictEqual([...shuffled([1, 2, 3, 4, 5])].sort(), [1, 2, 3, 4, 5]);
});

test('an empty deck does nothing', () => {
  const state = newSession(0);
  assert.strictEqual(currentCard(state), -1);
  assert.strictEqual(flip(state), state);
  assert.strictEqual(move(state, 1), state);
  assert.strictEqual(toggleKnown(state), state);
  assert.strictEqual(allKnown(state), false);
  assert.deepStrictEqual(progress(state), { position: 0, total: 0, known: 0 });
});
