// Connects the dice roller's logic (dice.js) to the page.
const countBox = document.getElementById('count');
const sidesBox = document.getElementById('sides');
const diceEl = document.getElementById('dice');
const totalEl = document.getElementById('total');
const historyList = document.getElementById('history-list');
const emptyLine = document.getElementById('empty');

let history = [];

function showRoll(roll) {
  diceEl.innerHTML = '';
  for (const value of roll.dice) {
    const die = document.createElement('span');
    const face = faceFor(value, roll.sides);
    die.className = 'die' + (face === String(value) ? ' number' : '');
    die.textContent = face;
    // The dot faces are pictures: say the number to screen readers.
    die.setAttribute('role', 'img');
    die.setAttribute('aria-label', String(value));
    diceEl.append(die);
  }
  totalEl.textContent = roll.total;
}

function showHistory() {
  historyList.innerHTML = '';
  for (const roll of history) {
    const item = document.createElement('li');
    item.textContent = describeRoll(roll);
    historyList.append(item);
  }
  emptyLine.hidden = history.length > 0;
}

function roll() {
  const count = clampDice(countBox.value);
  countBox.value = count;
  const result = rollDice(count, Number(sidesBox.value));
  history = addToHistory(history, result);
  showRoll(result);
  showHistory();
  diceEl.classList.remove('shake');
  void diceEl.offsetWidth; // restart the little shake animation
  diceEl.classList.add('shake');
}

document.getElementById('roll').addEventListener('click', roll);
document.getElementById('clear').addEventListener('click', () => {
  history = [];
  showHistory();
});
// Pressing Enter in the number box rolls too.
countBox.addEventListener('keydown', (event) => {
  if (event.key === 'Enter') roll();
});

showHistory();
