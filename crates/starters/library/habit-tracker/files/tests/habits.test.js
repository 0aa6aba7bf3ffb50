const test = require('node:test');
const assert = require('node:assert');
const {
  MAX_HABITS, keyOf, dayNumber, addDays, weekOf, streak, countDone,
  addHabit, removeHabit, toggleDay, fromNames, parseSaved,
} = require('../habits.js');

test('keyOf writes a local date as YYYY-MM-DD', () => {
  assert.strictEqual(keyOf(new Date(2026, 2, 2, 23, 59)), '2026-03-02');
  assert.strictEqual(keyOf(new Date(2026, 11, 31, 0, 1)), '2026-12-31');
});

test('addDays crosses months, years and leap days', () => {
  assert.strictEqual(addDays('2026-02-28', 1), '2026-03-01');
  assert.strictEqual(addDays('2024-02-28', 1), '2024-02-29');
  assert.strictEqual(addDays('2026-01-01', -1), '2025-12-31');
  assert.strictEqual(addDays('2026-03-29', 1), '2026-03-30', 'a summer time change is still one day');
  assert.strictEqual(addDays('2026-02-30', 1), null, 'not a date');
  assert.strictEqual(dayNumber('yesterday'), null);
});

test('weekOf gives Monday to Sunday of the week that holds the day', () => {
  const week = ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08'];
  assert.deepStrictEqual(weekOf('2026-03-02'), week, 'a Monday starts its own week');
  assert.deepStrictEqual(weekOf('2026-03-05'), week);
  assert.deepStrictEqual(weekOf('2026-03-08'), week, 'a Sunday ends it');
  assert.deepStrictEqual(weekOf('2025-12-31').slice(0, 1).concat(weekOf('2025-12-31').slice(6)), ['2025-12-29', '2026-01-04']);
});

test('streak counts the days in a row up to today', () => {
  const done = ['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02'];
  assert.strictEqual(streak(done, '2026-03-02'), 4, 'across the end of February');
  assert.strictEqual(streak(['2026-03-02'], '2026-03-02'), 1);
  assert.strictEqual(streak([], '2026-03-02'), 0);
});

test('streak keeps yesterday\'s run while today is not ticked, and a gap ends it', () => {
  assert.strictEqual(streak(['2026-02-28', '2026-03-01'], '2026-03-02'), 2, 'today still to do');
  assert.strictEqual(streak(['2026-02-27', '2026-02-28'], '2026-03-02'), 0, 'missed yesterday');
  assert.strictEqual(streak(['2026-02-25', '2026-02-26', '2026-02-28', '2026-03-01', '2026-03-02'], '2026-03-02'), 3);
  assert.strictEqual(streak(['2025-12-31', '2026-01-01'], '2026-01-01'), 2, 'across the new year');
});

test('countDone counts the ticked days of a week', () => {
  const week = weekOf('2026-03-04');
  assert.strictEqual(countDone(['2026-03-01', '2026-03-02', '2026-03-04'], week), 2, 'Sunday before is another week');
});

test('addHabit adds trimmed names once, and refuses empty ones', () => {
  let habits = fromNames(['Drink water', '  Read   10 pages ']);
  assert.deepStrictEqual(habits.map((h) => [h.id, h.name]), [[1, 'Drink water'], [2, 'Read 10 pages']]);
  assert.strictEqual(addHabit(habits, '   '), habits);
  assert.strictEqual(addHabit(habits, 'drink WATER'), habits, 'already there');
  habits = addHabit(removeHabit(habits, 1), 'Walk');
  assert.deepStrictEqual(habits.map((h) => [h.id, h.name]), [[2, 'Read 10 pages'], [3, 'Walk']]);
  let many = [];
  for (let i = 0; i < MAX_HABITS + 5; i += 1) many = addHabit(many, 'Habit ' + i);
  assert.strictEqual(many.length, MAX_HABITS);
});

test('toggleDay ticks and unticks a day, never a day after today', () => {
  const today = '2026-03-04';
  let habits = fromNames(['Walk']);
  habits = toggleDay(habits, 1, '2026-03-03', today);
  habits = toggleDay(habits, 1, '2026-03-02', today);
  assert.deepStrictEqual(habits[0].done, ['2026-03-02', '2026-03-03'], 'kept in order');
  assert.strictEqual(streak(habits[0].done, today), 2);
  habits = toggleDay(habits, 1, '2026-03-03', today);
  assert.deepStrictEqual(habits[0].done, ['2026-03-02']);
  assert.strictEqual(toggleDay(habits, 1, '2026-03-05', today), habits, 'tomorrow');
  assert.strictEqual(toggleDay(habits, 1, 'not a day', today), habits);
});

test('parseSaved reads good data and skips broken pieces', () => {
  const saved = JSON.stringify([
    { id: 1, name: 'Walk', done: ['2026-03-02', 'garbage', '2026-03-02', '2026-03-01'] },
    { id: 1, name: 'Same id', done: [] },
    { id: 'x', name: 'Bad id' },
    null,
    { id: 2, name: '   ' },
    { id: 3, name: 'Read', done: 'not a list' },
  ]);
  assert.deepStrictEqual(parseSaved(saved), [
    { id: 1, name: 'Walk', done: ['2026-03-01', '2026-03-02'] },
    { id: 3, name: 'Read', done: [] },
  ]);
});

test('parseSaved gives null for garbage so the page starts fresh', () => {
  assert.strictEqual(parseSaved('{not json'), null);
  assert.strictEqual(parseSaved('{"habits": 1}'), null);
  assert.strictEqual(parseSaved('42'), null);
  assert.deepStrictEqual(parseSaved('[]'), []);
});
