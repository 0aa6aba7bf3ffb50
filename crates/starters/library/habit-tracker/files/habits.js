// The habit tracker's logic: dates as "YYYY-MM-DD" keys, the days of a week, streaks, and the
// list of habits with the days each was done. Nothing here touches the page, so the tests can
// run it in Node. A habit looks like { id: 1, name: 'Drink water', done: ['2026-03-02'] }.

const MAX_HABITS = 20;
const MAX_NAME = 60;
const DAY_MS = 24 * 60 * 60 * 1000;

// The key of a day in local time: keyOf(new Date(2026, 2, 2)) -> "2026-03-02".
function keyOf(date) {
  const pad = (n) => String(n).padStart(2, '0');
  return date.getFullYear() + '-' + pad(date.getMonth() + 1) + '-' + pad(date.getDate());
}

// A key checked and turned into a day number (days since 1970), or null when it is not a date.
function dayNumber(key) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(key));
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const back = new Date(ms);
  if (back.getUTCMonth() !== Number(m[2]) - 1 || back.getUTCDate() !== Number(m[3])) return null;
  return Math.round(ms / DAY_MS);
}

function keyOfNumber(n) {
  return new Date(n * DAY_MS).toISOString().slice(0, 10);
}

// The key `days` days after (or before, when negative) `key`. Counted in whole days, so a
// change to or from summer time never skips or repeats one.
function addDays(key, days) {
  const n = dayNumber(key);
  return n === null ? null : keyOfNumber(n + days);
}

// The seven keys of the week that holds `key`, Monday first.
function weekOf(key) {
  const n = dayNumber(key);
  if (n === null) return [];
  const weekday = (new Date(n * DAY_MS).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return Array.from({ length: 7 }, (_, i) => keyOfNumber(n - weekday + i));
}

// How many days in a row the habit was done, ending today; when today is not ticked yet the
// streak ending yesterday still counts (the day is not over).
function streak(doneKeys, todayKey) {
  const done = new Set(doneKeys);
  let day = done.has(todayKey) ? todayKey : addDays(todayKey, -1);
  let count = 0;
  while (day !== null && done.has(day)) {
    count += 1;
    day = addDays(day, -1);
  }
  return count;
}

// How many of the given days the habit was done.
function countDone(doneKeys, keys) {
  const done = new Set(doneKeys);
  return keys.filter((k) => done.has(k)).length;
}

function cleanName(name) {
  if (typeof name !== 'string') return '';
  return name.trim().replace(/\s+/g, ' ').slice(0, MAX_NAME);
}

function nextId(habits) {
  return habits.reduce((max, h) => Math.max(max, h.id), 0) + 1;
}

// A new list with the habit added; the same list when the name is empty, already there
// (whatever its capitals) or the list is full.
function addHabit(habits, name) {
  const clean = cleanName(name);
  if (!clean || habits.length >= MAX_HABITS) return habits;
  if (habits.some((h) => h.name.toLowerCase() === clean.toLowerCase())) return habits;
  return [...habits, { id: nextId(habits), name: clean, done: [] }];
}

function removeHabit(habits, id) {
  return habits.filter((h) => h.id !== id);
}

// Tick the day, or untick it when it was ticked. A day after today cannot be ticked.
function toggleDay(habits, id, key, todayKey) {
  if (dayNumber(key) === null || (todayKey && key > todayKey)) return habits;
  return habits.map((h) => {
    if (h.id !== id) return h;
    const done = h.done.includes(key) ? h.done.filter((k) => k !== key) : [...h.done, key].sort();
    return { ...h, done };
  });
}

function fromNames(names) {
  let habits = [];
  for (const name of Array.isArray(names) ? names : []) habits = addHabit(habits, name);
  return habits;
}

// What was saved, checked piece by piece; null when it is not a list at all, so the page
// starts again from the example habits instead of breaking.
function parseSaved(json) {
  let data;
  try { data = JSON.parse(json); } catch (e) { return null; }
  if (!Array.isArray(data)) return null;
  const habits = [];
  for (const item of data) {
    if (!item || typeof item !== 'object' || !Number.isInteger(item.id)) continue;
    const name = cleanName(item.name);
    if (!name || habits.some((h) => h.id === item.id) || habits.length >= MAX_HABITS) continue;
    const done = Array.isArray(item.done) ? [...new Set(item.done.filter((k) => dayNumber(k) !== null))].sort() : [];
    habits.push({ id: item.id, name, done });
  }
  return habits;
}

if (typeof module !== 'undefined') {
  module.exports = {
    MAX_HABITS, MAX_NAME, keyOf, dayNumber, addDays, weekOf, streak, countDone, cleanName,
    addHabit, removeHabit, toggleDay, fromNames, parseSaved,
  };
}
