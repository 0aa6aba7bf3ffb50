// Connects the timer's logic (timer.js) to the page.

const TITLE = {{ title|tojson }};
const DONE_MESSAGE = {{ done_message|tojson }};
const START_LABEL = {{ start_label|tojson }};
const PAUSE_LABEL = {{ pause_label|tojson }};
const WARNING_SECONDS = {{ warning_seconds|tojson }};

const display = document.getElementById('display');
const message = document.getElementById('message');
const minutesBox = document.getElementById('minutes');
const secondsBox = document.getElementById('seconds');
const startButton = document.getElementById('start');
const resetButton = document.getElementById('reset');

let remaining = parseInput(minutesBox.value, secondsBox.value);
let intervalId = null;
let sound = null;

function isRunning() {
  return intervalId !== null;
}

// Show the time left, the colours and the button text.
function show() {
  const text = format(remaining);
  display.textContent = text;
  display.classList.toggle('warning', isWarning(remaining, WARNING_SECONDS));
  display.classList.toggle('done', isDone(remaining) && message.textContent !== '');
  startButton.textContent = isRunning() ? PAUSE_LABEL : START_LABEL;
  minutesBox.disabled = isRunning();
  secondsBox.disabled = isRunning();
  document.title = isRunning() ? text + ' · ' + TITLE : TITLE;
}

// A short beep when the time is up (only if the browser allows sound).
function beep() {
  if (!sound) return;
  try {
    const tone = sound.createOscillator();
    const volume = sound.createGain();
    tone.frequency.value = 880;
    volume.gain.value = 0.2;
    tone.connect(volume);
    volume.connect(sound.destination);
    tone.start();
    tone.stop(sound.currentTime + 0.6);
  } catch (e) {
    // No sound: the message on the page is enough.
  }
}

function stop() {
  clearInterval(intervalId);
  intervalId = null;
}

// Every second: one second less; at zero, stop and show the message.
function everySecond() {
  remaining = tick(remaining);
  if (isDone(remaining)) {
    stop();
    message.textContent = DONE_MESSAGE;
    beep();
  }
  show();
}

function start() {
  if (isDone(remaining)) {
    remaining = parseInput(minutesBox.value, secondsBox.value);
  }
  if (isDone(remaining)) return;
  if (!sound && window.AudioContext) {
    try { sound = new AudioContext(); } catch (e) { sound = null; }
  }
  message.textContent = '';
  intervalId = setInterval(everySecond, 1000);
  show();
}

function reset() {
  stop();
  message.textContent = '';
  remaining = parseInput(minutesBox.value, secondsBox.value);
  show();
}

startButton.addEventListener('click', () => {
  if (isRunning()) {
    stop();
    show();
  } else {
    start();
  }
});

resetButton.addEventListener('click', reset);

// Typing a new time (while stopped) shows it right away.
minutesBox.addEventListener('input', reset);
secondsBox.addEventListener('input', reset);

show();
