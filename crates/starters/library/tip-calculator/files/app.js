// Connects the tip calculator's logic (tip.js) to the page.

const CURRENCY_SYMBOL = {{ currency_symbol|tojson }};
const DECIMAL_SEPARATOR = {{ decimal_separator|tojson }};
const TIP_PERCENTAGES = {{ tip_percentages|tojson }};
const DEFAULT_TIP = {{ default_tip|tojson }};
const ERRORS = {
  bill: {{ bill_error|tojson }},
  tip: {{ tip_error|tojson }},
  people: {{ people_error|tojson }},
};

const billBox = document.getElementById('bill');
const customTipBox = document.getElementById('custom-tip');
const peopleBox = document.getElementById('people');
const tipButtons = document.querySelectorAll('.tip-button');
const tipPerPerson = document.getElementById('tip-per-person');
const totalPerPerson = document.getElementById('total-per-person');
const errorLines = {
  bill: document.getElementById('bill-error'),
  tip: document.getElementById('tip-error'),
  people: document.getElementById('people-error'),
};
const boxes = { bill: billBox, tip: customTipBox, people: peopleBox };

// The tip percentage chosen, as text (from a button or the custom box).
let tipText = String(DEFAULT_TIP);

function money(amount) {
  return formatMoney(amount, CURRENCY_SYMBOL, DECIMAL_SEPARATOR);
}

// Light up the button of the chosen percentage (none when the custom box is used).
function showChosenButton() {
  for (const button of tipButtons) {
    const chosen = customTipBox.value.trim() === '' && button.dataset.percent === tipText;
    button.classList.toggle('chosen', chosen);
    button.setAttribute('aria-pressed', String(chosen));
  }
}

// Work everything out again and show it.
function update() {
  const answer = check(billBox.value, tipText, peopleBox.value);
  for (const name of Object.keys(errorLines)) {
    const wrong = answer.error === name;
    errorLines[name].textContent = wrong ? ERRORS[name] : '';
    boxes[name].classList.toggle('invalid', wrong);
    boxes[name].setAttribute('aria-invalid', String(wrong));
  }
  if (answer.result) {
    tipPerPerson.textContent = money(answer.result.tipPerPerson);
    totalPerPerson.textContent = money(answer.result.totalPerPerson);
  } else {
    tipPerPerson.textContent = '—';
    totalPerPerson.textContent = '—';
  }
  showChosenButton();
}

// Clicking a percentage button chooses it and empties the custom box.
for (const button of tipButtons) {
  button.addEventListener('click', () => {
    tipText = button.dataset.percent;
    customTipBox.value = '';
    update();
  });
}

// Typing a custom percentage uses it instead of the buttons.
customTipBox.addEventListener('input', () => {
  const typed = customTipBox.value.trim();
  tipText = typed === '' ? String(DEFAULT_TIP) : typed;
  update();
});

billBox.addEventListener('input', update);
peopleBox.addEventListener('input', update);

// The − and + buttons change the number of people by one.
function stepPeople(change) {
  peopleBox.value = String(changePeople(parsePeople(peopleBox.value), change));
  update();
}
document.getElementById('fewer').addEventListener('click', () => stepPeople(-1));
document.getElementById('more').addEventListener('click', () => stepPeople(1));

// Start: the placeholder in the chosen decimal mark, and the default tip chosen.
billBox.placeholder = formatMoney(0, '', DECIMAL_SEPARATOR);
if (!TIP_PERCENTAGES.map(String).includes(String(DEFAULT_TIP))) {
  customTipBox.value = String(DEFAULT_TIP);
}
update();
