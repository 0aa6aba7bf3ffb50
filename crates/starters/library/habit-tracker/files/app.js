// Connects the habit logic (habits.js) to the page: a row per habit, a checkbox per day of
// this week, the streak, and everything saved in this browser.

const STARTER_HABITS = {{ habits|tojson }};
const DAY_NAMES = {{ day_names|tojson }};
const TEXT = {
  streakLabel: {{ streak_label|tojson }},
  day: {{ day_word|tojson }},
  days: {{ days_word|tojson }},
  deleteLabel: {{ delete_label|tojson }},
  doneThisWeek: {{ done_this_week_label|tojson }},
};
// One saved list per page address, so two trackers on one site keep their own habits.
const STORAGE_KEY = 'habit-tracker:' + location.pathname;

const form = document.getElementById('add-form');
const input = document.getElementById('new-habit');
const body = document.getElementById('habits');
const empty = document.getElementById('empty');
const summary = document.getElementById('summary');

let habits = load();

function load() {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved !== null) {
      const parsed = parseSaved(saved);
      if (parsed) return parsed;
    }
  } catch (e) { /* storage not available: start from the example habits */ }
  return fromNames(STARTER_HABITS);
}

function save() {
  try { localStorage.setItem(STORAGE_KEY, JSON.stringify(habits)); } catch (e) { /* not saved, still works */ }
}

function update(next) {
  habits = next;
  save();
  render();
}

function render() {
  const today = keyOf(new Date());
  const week = weekOf(today);
  body.textContent = '';
  for (const habit of habits) {
    const row = document.createElement('tr');
    const name = document.createElement('th');
    name.scope = 'row';
    name.className = 'habit-col';
    name.textContent = habit.name;
    row.append(name);
    week.forEach((key, i) => {
      const cell = document.createElement('td');
      cell.className = key === today ? 'day-col today' : 'day-col';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = habit.done.includes(key);
      box.disabled = key > today;
      box.setAttribute('aria-label', habit.name + ', ' + DAY_NAMES[i]);
      box.addEventListener('change', () => update(toggleDay(habits, habit.id, key, today)));
      cell.append(box);
      row.append(cell);
    });
    const days = streak(habit.done, today);
    const streakCell = document.createElement('td');
    streakCell.className = days > 0 ? 'streak on' : 'streak';
    streakCell.textContent = days + ' ' + (days === 1 ? TEXT.day : TEXT.days);
    streakCell.title = TEXT.streakLabel;
    row.append(streakCell);
    const actions = document.createElement('td');
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'remove';
    remove.textContent = '×';
    remove.setAttribute('aria-label', TEXT.deleteLabel + ' ' + habit.name);
    remove.addEventListener('click', () => update(removeHabit(habits, habit.id)));
    actions.append(remove);
    row.append(actions);
    body.append(row);
  }
  const todayIndex = week.indexOf(today);
  for (const th of document.querySelectorAll('th[data-day]')) {
    th.classList.toggle('today', Number(th.dataset.day) === todayIndex);
  }
  empty.hidden = habits.length > 0;
  const ticked = habits.reduce((sum, h) => sum + countDone(h.done, week), 0);
  summary.textContent = habits.length > 0 ? TEXT.doneThisWeek + ' ' + ticked + ' / ' + habits.length * 7 : '';
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  update(addHabit(habits, input.value));
  input.value = '';
  input.focus();
});

render();
