// Connects the calculator's logic (calculator.js) to the page.

const DECIMAL_SEPARATOR = {{ decimal_separator|tojson }};
const ERROR_MESSAGES = {
  'divide-by-zero': {{ divide_by_zero_message|tojson }},
  'too-big': {{ too_big_message|tojson }},
};

const display = document.getElementById('display');
const expressionLine = document.getElementById('expression');
const keysArea = document.getElementById('keys');

let state = initialState();

// Show the number (or the error) and the sum waiting to be finished.
function show() {
  if (state.error) {
    display.textContent = ERROR_MESSAGES[state.error];
  } else {
    display.textContent = displayText(state.current, DECIMAL_SEPARATOR);
  }
  display.classList.toggle('error', state.error !== null);
  display.classList.toggle('long', display.textContent.length > 10);
  expressionLine.textContent = expression(state, DECIMAL_SEPARATOR);

  // Light up the operator that is waiting for the next number.
  for (const button of keysArea.querySelectorAll('.operator')) {
    button.classList.toggle('active', state.startNew && button.dataset.key === state.operator);
  }
}

function pressKey(key) {
  state = press(state, key);
  show();
}

// Clicking a button presses its key.
keysArea.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-key]');
  if (button) pressKey(button.dataset.key);
});

// Typing on the keyboard works too.
document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const key = keyFromKeyboard(event.key);
  if (key === null) return;
  event.preventDefault();
  pressKey(key);

  // Briefly light up the matching button.
  const button = keysArea.querySelector('[data-key="' + CSS.escape(key) + '"]');
  if (button) {
    button.classList.add('pressed');
    setTimeout(() => button.classList.remove('pressed'), 120);
  }
});

show();
