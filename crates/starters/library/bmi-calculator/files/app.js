// Connects the BMI logic (bmi.js) to the page.

const DECIMAL_SEPARATOR = {{ decimal_separator|tojson }};
const UNITS = { kg: {{ kg_unit|tojson }}, lb: {{ lb_unit|tojson }} };
const CATEGORY_NAMES = {
  underweight: {{ underweight_label|tojson }},
  normal: {{ normal_label|tojson }},
  overweight: {{ overweight_label|tojson }},
  obese1: {{ obese1_label|tojson }},
  obese2: {{ obese2_label|tojson }},
  obese3: {{ obese3_label|tojson }},
};
const ERRORS = { weight: {{ weight_error|tojson }}, height: {{ height_error|tojson }} };

const form = document.getElementById('bmi-form');
const groups = { metric: document.getElementById('metric-fields'), imperial: document.getElementById('imperial-fields') };
const boxes = {
  metric: { weight: document.getElementById('weight-kg'), height: document.getElementById('height-cm') },
  imperial: {
    weight: document.getElementById('weight-lb'),
    feet: document.getElementById('height-ft'),
    inches: document.getElementById('height-in'),
  },
};
const errorLines = { weight: document.getElementById('weight-error'), height: document.getElementById('height-error') };
const result = document.getElementById('result');
const rows = document.getElementById('category-rows');

function system() {
  const chosen = form.querySelector('input[name="system"]:checked');
  return chosen && chosen.value === 'imperial' ? 'imperial' : 'metric';
}

// The table of categories, the one of the result marked.
function showCategories(current) {
  rows.textContent = '';
  for (const category of CATEGORIES) {
    const tr = document.createElement('tr');
    if (category.key === current) {
      tr.className = 'current';
      tr.setAttribute('aria-current', 'true');
    }
    const name = document.createElement('td');
    name.textContent = CATEGORY_NAMES[category.key];
    const range = document.createElement('td');
    range.textContent = rangeText(category, DECIMAL_SEPARATOR);
    tr.append(name, range);
    rows.append(tr);
  }
}

function showErrors(wrong) {
  for (const name of Object.keys(errorLines)) {
    errorLines[name].textContent = wrong === name ? ERRORS[name] : '';
  }
  for (const [name, box] of Object.entries(boxes[system()])) {
    const bad = wrong === (name === 'weight' ? 'weight' : 'height');
    box.classList.toggle('invalid', bad);
    box.setAttribute('aria-invalid', String(bad));
  }
}

function calculate() {
  const which = system();
  const fields = {};
  for (const [name, box] of Object.entries(boxes[which])) fields[name] = box.value;
  const answer = check(which, fields);
  showErrors(answer.error || null);
  if (answer.error) {
    result.hidden = true;
    showCategories(null);
    boxes[which][answer.error === 'weight' ? 'weight' : which === 'metric' ? 'height' : 'feet'].focus();
    return;
  }
  const found = CATEGORIES.find((c) => c.key === answer.result.category);
  document.getElementById('bmi-value').textContent = formatOne(answer.result.bmi, DECIMAL_SEPARATOR);
  document.getElementById('bmi-category').textContent =
    CATEGORY_NAMES[found.key] + ' (' + rangeText(found, DECIMAL_SEPARATOR) + ')';
  result.className = 'result ' + found.key;
  const { low, high } = answer.result.healthyKg;
  const inUnit = which === 'imperial' ? [kgToLb(low), kgToLb(high)] : [low, high];
  document.getElementById('healthy-range').textContent = formatOne(inUnit[0], DECIMAL_SEPARATOR) + ' – ' +
    formatOne(inUnit[1], DECIMAL_SEPARATOR) + ' ' + (which === 'imperial' ? UNITS.lb : UNITS.kg);
  result.hidden = false;
  showCategories(found.key);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  calculate();
});

for (const radio of form.querySelectorAll('input[name="system"]')) {
  radio.addEventListener('change', () => {
    const which = system();
    groups.metric.hidden = which !== 'metric';
    groups.imperial.hidden = which !== 'imperial';
    showErrors(null);
    result.hidden = true;
    showCategories(null);
  });
}

for (const box of document.querySelectorAll('#metric-fields input, #imperial-fields input')) {
  box.placeholder = box.placeholder.replace('.', DECIMAL_SEPARATOR);
}
showCategories(null);
