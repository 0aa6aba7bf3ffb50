// Connects the stopwatch's logic (stopwatch.js) to the page.

const START_LABEL = {{ start_label|tojson }};
const STOP_LABEL = {{ stop_label|tojson }};
const LAP_WORD = {{ lap_word|tojson }};

const display = document.getElementById('display');
const startButton = document.getElementById('start');
const lapButton = document.getElementById('lap');
const resetButton = document.getElementById('reset');
const lapsList = document.getElementById('laps-list');
const noLaps = document.getElementById('no-laps');

let watch = createStopwatch();
let frame = null;

// The current time in milliseconds (a clock that never jumps back).
function now() {
  return performance.now();
}

// Show the time on the big display.
function showTime() {
  display.textContent = format(elapsedAt(watch, now()));
}

// Show the buttons as they should be right now.
function showButtons() {
  startButton.textContent = watch.running ? STOP_LABEL : START_LABEL;
  startButton.classList.toggle('running', watch.running);
  lapButton.disabled = !watch.running;
  resetButton.disabled = watch.running || (watch.elapsed === 0 && watch.laps.length === 0);
}

// Show the list of laps, newest first, marking the fastest and the slowest.
function showLaps() {
  lapsList.textContent = '';
  noLaps.hidden = watch.laps.length > 0;
  const marks = fastestAndSlowest(watch.laps);
  for (let i = watch.laps.length - 1; i >= 0; i--) {
    const item = watch.laps[i];
    const row = document.createElement('li');
    if (item.number === marks.fastest) row.classList.add('fastest');
    if (item.number === marks.slowest) row.classList.add('slowest');

    const name = document.createElement('span');
    name.className = 'lap-name';
    name.textContent = LAP_WORD + ' ' + item.number;

    const lapTime = document.createElement('span');
    lapTime.className = 'lap-time';
    lapTime.textContent = format(item.lap);

    const total = document.createElement('span');
    total.className = 'lap-total';
    total.textContent = format(item.total);

    row.append(name, lapTime, total);
    lapsList.appendChild(row);
  }
}

function show() {
  showTime();
  showButtons();
  showLaps();
}

// While running, update the display on every screen refresh.
function keepShowingTime() {
  showTime();
  frame = requestAnimationFrame(keepShowingTime);
}

startButton.addEventListener('click', () => {
  if (watch.running) {
    watch = stop(watch, now());
    cancelAnimationFrame(frame);
    frame = null;
  } else {
    watch = start(watch, now());
    keepShowingTime();
  }
  show();
});

lapButton.addEventListener('click', () => {
  watch = lap(watch, now());
  showLaps();
});

resetButton.addEventListener('click', () => {
  watch = reset(watch);
  show();
});

// Keyboard: space starts and stops, L adds a lap, R resets.
document.addEventListener('keydown', (event) => {
  if (event.target.tagName === 'BUTTON' && event.key === ' ') return;
  if (event.key === ' ') {
    event.preventDefault();
    startButton.click();
  } else if (event.key === 'l' || event.key === 'L') {
    if (!lapButton.disabled) lapButton.click();
  } else if (event.key === 'r' || event.key === 'R') {
    if (!resetButton.disabled) resetButton.click();
  }
});

show();
