// Connects the converter logic (convert.js) to the page.
const START_CATEGORY = {{ start_category|tojson }};
const DECIMALS = {{ decimals|tojson }};
const LANGUAGE = {{ language|tojson }};

const TEXT = {
  en: {
    names: {
      mm: 'millimetres', cm: 'centimetres', m: 'metres', km: 'kilometres', in: 'inches', ft: 'feet', yd: 'yards', mi: 'miles',
      mg: 'milligrams', g: 'grams', kg: 'kilograms', t: 'tonnes', oz: 'ounces', lb: 'pounds',
      C: 'Celsius', F: 'Fahrenheit', K: 'Kelvin',
    },
    notNumber: 'Type a number, like 12 or 1.5',
    tooCold: 'Nothing is colder than absolute zero (0 K)!',
  },
  pt: {
    names: {
      mm: 'milímetros', cm: 'centímetros', m: 'metros', km: 'quilômetros', in: 'polegadas', ft: 'pés', yd: 'jardas', mi: 'milhas',
      mg: 'miligramas', g: 'gramas', kg: 'quilos', t: 'toneladas', oz: 'onças', lb: 'libras',
      C: 'Celsius', F: 'Fahrenheit', K: 'Kelvin',
    },
    notNumber: 'Digite um número, como 12 ou 1,5',
    tooCold: 'Nada é mais frio que o zero absoluto (0 K)!',
  },
}[LANGUAGE === 'pt' ? 'pt' : 'en'];

const FIRST_PAIR = { length: ['km', 'mi'], weight: ['kg', 'lb'], temperature: ['C', 'F'] };

const valueInput = document.getElementById('value');
const fromSelect = document.getElementById('from');
const toSelect = document.getElementById('to');
const result = document.getElementById('result');
const all = document.getElementById('all');

let category = CATEGORIES.includes(START_CATEGORY) ? START_CATEGORY : 'length';

function symbol(unit) {
  return unit === 'C' || unit === 'F' ? '°' + unit : unit;
}

function label(unit) {
  return TEXT.names[unit] + ' (' + symbol(unit) + ')';
}

function show(value, unit) {
  return formatNumber(value, DECIMALS).replace('.', LANGUAGE === 'pt' ? ',' : '.') + ' ' + symbol(unit);
}

function fillSelect(select, selected) {
  select.innerHTML = '';
  for (const unit of unitsOf(category)) {
    const option = document.createElement('option');
    option.value = unit;
    option.textContent = label(unit);
    option.selected = unit === selected;
    select.append(option);
  }
}

function chooseCategory(next) {
  category = next;
  fillSelect(fromSelect, FIRST_PAIR[category][0]);
  fillSelect(toSelect, FIRST_PAIR[category][1]);
  for (const tab of document.querySelectorAll('.tab')) {
    tab.classList.toggle('active', tab.dataset.category === category);
  }
  update();
}

function update() {
  const value = parseNumber(valueInput.value);
  all.innerHTML = '';
  if (value === null) {
    result.textContent = TEXT.notNumber;
    result.className = 'result error';
    return;
  }
  const converted = convert(value, fromSelect.value, toSelect.value);
  if (converted === null) {
    result.textContent = TEXT.tooCold;
    result.className = 'result error';
    return;
  }
  result.className = 'result';
  result.textContent = show(value, fromSelect.value) + ' = ' + show(converted, toSelect.value);
  for (const unit of unitsOf(category)) {
    const li = document.createElement('li');
    const name = document.createElement('span');
    name.textContent = TEXT.names[unit];
    const amount = document.createElement('strong');
    amount.textContent = show(convert(value, fromSelect.value, unit), unit);
    li.append(name, amount);
    if (unit === toSelect.value) li.className = 'current';
    all.append(li);
  }
}

for (const tab of document.querySelectorAll('.tab')) {
  tab.addEventListener('click', () => chooseCategory(tab.dataset.category));
}
valueInput.addEventListener('input', update);
fromSelect.addEventListener('change', update);
toSelect.addEventListener('change', update);
document.getElementById('swap').addEventListener('click', () => {
  const from = fromSelect.value;
  fromSelect.value = toSelect.value;
  toSelect.value = from;
  update();
});

chooseCategory(category);
