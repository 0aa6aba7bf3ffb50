// The logic of the quiz: plain functions over the list of questions and the
// game state. They never touch the page, so they are easy to test.
// A question looks like { question: 'Two plus two?', choices: ['3', '4'], answer: 1 }.
// The state looks like { current: 0, score: 0, answered: false, lastChoice: null, finished: false }.

function isValidQuestion(q) {
  return Boolean(q) && typeof q === 'object'
    && typeof q.question === 'string' && q.question.trim() !== ''
    && Array.isArray(q.choices) && q.choices.length >= 2 && q.choices.length <= 4
    && q.choices.every((c) => typeof c === 'string' && c.trim() !== '')
    && Number.isInteger(q.answer) && q.answer >= 0 && q.answer < q.choices.length;
}

// Keeps only the questions the quiz can really ask.
function cleanQuestions(list) {
  return Array.isArray(list) ? list.filter(isValidQuestion) : [];
}

function isCorrect(question, choice) {
  return isValidQuestion(question) && Number.isInteger(choice) && choice === question.answer;
}

function newGame() {
  return { current: 0, score: 0, answered: false, lastChoice: null, finished: false };
}

function currentQuestion(state, questions) {
  return state.finished ? null : questions[state.current] || null;
}

// Answering a question: only once per question, and only with a real choice.
function answer(state, questions, choice) {
  const question = currentQuestion(state, questions);
  if (!question || state.answered) return state;
  if (!Number.isInteger(choice) || choice < 0 || choice >= question.choices.length) return state;
  const right = isCorrect(question, choice);
  return { ...state, answered: true, lastChoice: choice, score: state.score + (right ? 1 : 0) };
}

// Moving on: to the next question, or to the end after the last one.
function next(state, questions) {
  if (state.finished || !state.answered) return state;
  if (state.current + 1 >= questions.length) return { ...state, answered: false, lastChoice: null, finished: true };
  return { ...state, current: state.current + 1, answered: false, lastChoice: null };
}

function isLast(state, questions) {
  return state.current >= questions.length - 1;
}

function percent(score, total) {
  if (!total) return 0;
  return Math.round((score / total) * 100);
}

if (typeof module !== 'undefined') {
  module.exports = { isValidQuestion, cleanQuestions, isCorrect, newGame, currentQuestion, answer, next, isLast, percent };
}
