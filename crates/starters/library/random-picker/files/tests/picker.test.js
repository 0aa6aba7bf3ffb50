const test = require('node:test');
const assert = require('node:assert');
const { MAX_HISTORY, parseOptions, newState, remaining, pick } = require('../picker.js');

const NAMES = ['Ana', 'Bruno', 'Carla', 'Davi'];

// Picks `times` times in a row.
function pickTimes(times, options, noRepeat, random = Math.random) {
  let state = newState();
  for (let i = 0; i < times; i++) state = pick(state, options, noRepeat, random);
  return state;
}

test('options are read one per line, trimmed, without blanks or repeats', () => {
  assert.deepStrictEqual(parseOptions(' Ana \n\nBruno\nana\n  \nCarla'), ['Ana', 'Bruno', 'Carla']);
  assert.deepStrictEqual(parseOptions(''), []);
  assert.deepStrictEqual(parseOptions(undefined), []);
  assert.deepStrictEqual(parseOptions('Pizza\r\nSushi'), ['Pizza', 'Sushi']);
});

test('the random source decides which option comes out', () => {
  assert.strictEqual(pick(newState(), NAMES, false, () => 0).last, 'Ana');
  assert.strictEqual(pick(newState(), NAMES, false, () => 0.5).last, 'Carla');
  assert.strictEqual(pick(newState(), NAMES, false, () => 0.9999).last, 'Davi');
  assert.strictEqual(pick(newState(), NAMES, false, () => 1).last, 'Davi', 'never past the end');
});

test('without repeats, every option comes out once before the list runs out', () => {
  const state = pickTimes(NAMES.length, NAMES, true, () => 0);
  assert.deepStrictEqual(state.history, ['Davi', 'Carla', 'Bruno', 'Ana']);
  assert.deepStrictEqual([...state.picked].sort(), [...NAMES].sort());
  assert.deepStrictEqual(remaining(NAMES, state.picked), []);
});

test('without repeats, a random order still never repeats', () => {
  for (let round = 0; round < 20; round++) {
    const state = pickTimes(NAMES.length, NAMES, true);
    assert.strictEqual(new Set(state.history).size, NAMES.length, state.history.join());
  }
});

test('when everyone has come out, the next pick says so and changes nothing else', () => {
  const done = pickTimes(NAMES.length, NAMES, true, () => 0);
  const next = pick(done, NAMES, true, () => 0);
  assert.strictEqual(next.problem, 'all-picked');
  assert.strictEqual(next.last, null);
  assert.deepStrictEqual(next.history, done.history);
  assert.strictEqual(pick(newState(), NAMES, true, () => 0).problem, null, 'starting over picks again');
});

test('with repeats allowed, the same option can come out again', () => {
  const state = pickTimes(3, NAMES, false, () => 0);
  assert.deepStrictEqual(state.history, ['Ana', 'Ana', 'Ana']);
  assert.deepStrictEqual(state.picked, ['Ana']);
  assert.strictEqual(state.problem, null);
});

test('an empty list cannot be picked from', () => {
  const state = pick(newState(), [], false, () => 0);
  assert.strictEqual(state.problem, 'empty');
  assert.strictEqual(state.last, null);
});

test('options added later can still come out without repeats', () => {
  const first = pickTimes(2, ['Ana', 'Bruno'], true, () => 0);
  const more = pick(first, ['Ana', 'Bruno', 'Carla'], true, () => 0);
  assert.strictEqual(more.last, 'Carla');
  assert.deepStrictEqual(remaining(['Ana', 'Bruno', 'Carla', 'Davi'], more.picked), ['Davi']);
});

test('the history keeps the newest first and at most 50', () => {
  const state = pickTimes(60, NAMES, false);
  assert.strictEqual(state.history.length, MAX_HISTORY);
  assert.strictEqual(state.history[0], state.last);
});
