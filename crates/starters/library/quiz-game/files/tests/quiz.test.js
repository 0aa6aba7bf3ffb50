const test = require('node:test');
const assert = require('node:assert');
const {
  isValidQuestion, cleanQuestions, isCorrect, newGame, currentQuestion, answer, next, isLast, percent,
} = require('../quiz.js');

const QUESTIONS = [
  { question: 'Two plus two?', choices: ['3', '4', '5'], answer: 1 },
  { question: 'The sky is blue.', choices: ['True', 'False'], answer: 0 },
  { question: 'Which is a fruit?', choices: ['Carrot', 'Potato', 'Apple', 'Onion'], answer: 2 },
];

test('a new game starts at the first question with no points', () => {
  const state = newGame();
  assert.deepStrictEqual(state, { current: 0, score: 0, answered: false, lastChoice: null, finished: false });
  assert.strictEqual(currentQuestion(state, QUESTIONS), QUESTIONS[0]);
});

test('isCorrect checks the chosen index', () => {
  assert.strictEqual(isCorrect(QUESTIONS[0], 1), true);
  assert.strictEqual(isCorrect(QUESTIONS[0], 0), false);
});

test('isCorrect is false for an invalid index', () => {
  assert.strictEqual(isCorrect(QUESTIONS[0], -1), false);
  assert.strictEqual(isCorrect(QUESTIONS[0], 9), false);
  assert.strictEqual(isCorrect(QUESTIONS[0], '1'), false);
  assert.strictEqual(isCorrect(QUESTIONS[0], 1.5), false);
  assert.strictEqual(isCorrect(QUESTIONS[0], undefined), false);
});

test('a right answer scores a point', () => {
  const state = answer(newGame(), QUESTIONS, 1);
  assert.strictEqual(state.score, 1);
  assert.strictEqual(state.answered, true);
  assert.strictEqual(state.lastChoice, 1);
});

test('a wrong answer scores nothing', () => {
  const state = answer(newGame(), QUESTIONS, 2);
  assert.strictEqual(state.score, 0);
  assert.strictEqual(state.answered, true);
});

test('a question can only be answered once', () => {
  const once = answer(newGame(), QUESTIONS, 1);
  const twice = answer(once, QUESTIONS, 1);
  assert.strictEqual(twice.score, 1);
  assert.strictEqual(twice, once);
});

test('an invalid index is ignored', () => {
  const start = newGame();
  assert.strictEqual(answer(start, QUESTIONS, -1), start);
  assert.strictEqual(answer(start, QUESTIONS, 3), start);
  assert.strictEqual(answer(start, QUESTIONS, 'a'), start);
  assert.strictEqual(answer(start, QUESTIONS, null), start);
});

test('next waits for an answer', () => {
  const start = newGame();
  assert.strictEqual(next(start, QUESTIONS), start);
});

test('next moves to the following question', () => {
  const state = next(answer(newGame(), QUESTIONS, 1), QUESTIONS);
  assert.strictEqual(state.current, 1);
  assert.strictEqual(state.answered, false);
  assert.strictEqual(state.lastChoice, null);
  assert.strictEqual(currentQuestion(state, QUESTIONS), QUESTIONS[1]);
});

test('the quiz ends after the last question with the right score', () => {
  let state = newGame();
  state = next(answer(state, QUESTIONS, 1), QUESTIONS); // right
  state = next(answer(state, QUESTIONS, 1), QUESTIONS); // wrong
  assert.strictEqual(isLast(state, QUESTIONS), true);
  state = answer(state, QUESTIONS, 2); // right
  state = next(state, QUESTIONS);
  assert.strictEqual(state.finished, true);
  assert.strictEqual(state.score, 2);
  assert.strictEqual(currentQuestion(state, QUESTIONS), null);
  assert.strictEqual(answer(state, QUESTIONS, 0), state);
  assert.strictEqual(next(state, QUESTIONS), state);
});

test('all right gives full marks', () => {
  let state = newGame();
  for (const q of QUESTIONS) state = next(answer(state, QUESTIONS, q.answer), QUESTIONS);
  assert.strictEqual(state.finished, true);
  assert.strictEqual(state.score, QUESTIONS.length);
  assert.strictEqual(percent(state.score, QUESTIONS.length), 100);
});

test('percent rounds and handles zero questions', () => {
  assert.strictEqual(percent(2, 3), 67);
  assert.strictEqual(percent(0, 5), 0);
  assert.strictEqual(percent(0, 0), 0);
});

test('isValidQuestion rejects broken questions', () => {
  assert.strictEqual(isValidQuestion(QUESTIONS[0]), true);
  assert.strictEqual(isValidQuestion({ question: 'Q', choices: ['a'], answer: 0 }), false);
  assert.strictEqual(isValidQuestion({ question: 'Q', choices: ['a', 'b'], answer: 2 }), false);
  assert.strictEqual(isValidQuestion({ question: '', choices: ['a', 'b'], answer: 0 }), false);
  assert.strictEqual(isValidQuestion({ question: 'Q', choices: ['a', 'b', 'c', 'd', 'e'], answer: 0 }), false);
  assert.strictEqual(isValidQuestion(null), false);
});

test('cleanQuestions keeps only questions that can be asked', () => {
  const mixed = [QUESTIONS[0], { question: 'Bad', choices: ['a', 'b'], answer: 5 }, QUESTIONS[1]];
  assert.deepStrictEqual(cleanQuestions(mixed), [QUESTIONS[0], QUESTIONS[1]]);
  assert.deepStrictEqual(cleanQuestions('nope'), []);
});

test('app.js has questions the quiz can ask', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const source = fs.readFileSync(path.join(__dirname, '..', 'app.js'), 'utf8');
  const match = source.match(/cleanQuestions\(([\s\S]*?)\);\n/);
  assert.ok(match, 'app.js passes its questions to cleanQuestions');
  const list = JSON.parse(match[1]);
  assert.ok(cleanQuestions(list).length > 0, 'at least one question has 2 to 4 choices and a right answer among them');
});
