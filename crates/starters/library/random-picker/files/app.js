// Connects the random picker's logic (picker.js) to the page.
const TEXT = {
  empty: {{ empty_message|tojson }},
  allPicked: {{ all_picked_message|tojson }},
};

const optionsBox = document.getElementById('options');
const noRepeatBox = document.getElementById('no-repeat');
const resultEl = document.getElementById('result');
const remainingEl = document.getElementById('remaining');
const historyList = document.getElementById('history');

let state = newState();

function options() {
  return parseOptions(optionsBox.value);
}

function render() {
  const all = options();
  const left = noRepeatBox.checked ? remaining(all, state.picked).length : all.length;
  remainingEl.textContent = left + ' / ' + all.length;
  if (state.problem === 'empty') resultEl.textContent = TEXT.empty;
  else if (state.problem === 'all-picked') resultEl.textContent = TEXT.allPicked;
  else resultEl.textContent = state.last || '';
  resultEl.classList.toggle('problem', Boolean(state.problem));
  historyList.innerHTML = '';
  for (const choice of state.history) {
    const item = document.createElement('li');
    item.textContent = choice;
    historyList.append(item);
  }
}

function pickOne() {
  state = pick(state, options(), noRepeatBox.checked);
  render();
  resultEl.classList.remove('pop');
  void resultEl.offsetWidth; // restart the little pop animation
  if (state.last) resultEl.classList.add('pop');
}

function startOver() {
  state = newState();
  render();
}

document.getElementById('pick').addEventListener('click', pickOne);
document.getElementById('start-over').addEventListener('click', startOver);
noRepeatBox.addEventListener('change', render);
optionsBox.addEventListener('input', () => {
  if (state.problem) state = { ...state, problem: null };
  render();
});

render();
