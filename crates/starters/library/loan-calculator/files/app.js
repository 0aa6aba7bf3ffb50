// Connects the loan logic (loan.js) to the page: it works everything out again as you type.

const CURRENCY_SYMBOL = {{ currency_symbol|tojson }};
const DECIMAL_SEPARATOR = {{ decimal_separator|tojson }};
const START = { amount: {{ default_amount|tojson }}, rate: {{ default_rate|tojson }}, years: {{ default_years|tojson }} };
const ERRORS = {
  amount: {{ amount_error|tojson }},
  rate: {{ rate_error|tojson }},
  years: {{ years_error|tojson }},
};

const boxes = {
  amount: document.getElementById('amount'),
  rate: document.getElementById('rate'),
  years: document.getElementById('years'),
};
const errorLines = {
  amount: document.getElementById('amount-error'),
  rate: document.getElementById('rate-error'),
  years: document.getElementById('years-error'),
};
const rows = document.getElementById('schedule-rows');
const table = document.getElementById('schedule');

function money(cents) {
  return formatMoney(cents, CURRENCY_SYMBOL, DECIMAL_SEPARATOR);
}

// A number as typed in this page's style: 4.5 -> "4,5" with a decimal comma.
function typed(value) {
  return String(value).replace('.', DECIMAL_SEPARATOR);
}

function update() {
  const answer = check(boxes.amount.value, boxes.rate.value, boxes.years.value);
  for (const name of Object.keys(boxes)) {
    const wrong = answer.error === name;
    errorLines[name].textContent = wrong ? ERRORS[name] : '';
    boxes[name].classList.toggle('invalid', wrong);
    boxes[name].setAttribute('aria-invalid', String(wrong));
  }
  rows.textContent = '';
  const plan = answer.result;
  document.getElementById('monthly').textContent = plan ? money(plan.payment) : '—';
  document.getElementById('total').textContent = plan ? money(plan.totalPaid) : '—';
  document.getElementById('interest').textContent = plan ? money(plan.totalInterest) : '—';
  table.hidden = !plan;
  if (!plan) return;
  for (const year of plan.perYear) {
    const tr = document.createElement('tr');
    const cells = [String(year.year), money(year.paid), money(year.interest), money(year.principal), money(year.balance)];
    cells.forEach((text, i) => {
      const cell = document.createElement(i === 0 ? 'th' : 'td');
      if (i === 0) cell.scope = 'row';
      cell.textContent = text;
      tr.append(cell);
    });
    rows.append(tr);
  }
}

for (const box of Object.values(boxes)) box.addEventListener('input', update);
document.getElementById('loan-form').addEventListener('submit', (event) => event.preventDefault());

boxes.amount.value = typed(START.amount);
boxes.rate.value = typed(START.rate);
boxes.years.value = String(START.years);
update();
