// Connects the rock, paper, scissors logic (rps.js) to the page.
const NAMES = {
  rock: {{ rock_name|tojson }},
  paper: {{ paper_name|tojson }},
  scissors: {{ scissors_name|tojson }},
};
const ICONS = { rock: '✊', paper: '✋', scissors: '✌️' };
const MESSAGES = {
  win: {{ win_message|tojson }},
  lose: {{ lose_message|tojson }},
  draw: {{ draw_message|tojson }},
};

const roundEl = document.getElementById('round');
const outcomeEl = document.getElementById('outcome');

let state = newGame();

function render() {
  const last = state.last;
  document.getElementById('player-hand').textContent = last ? ICONS[last.player] : '❔';
  document.getElementById('computer-hand').textContent = last ? ICONS[last.computer] : '❔';
  document.getElementById('player-move').textContent = last ? NAMES[last.player] : '';
  document.getElementById('computer-move').textContent = last ? NAMES[last.computer] : '';
  outcomeEl.textContent = last ? MESSAGES[last.outcome] : '';
  roundEl.className = 'round' + (last ? ' ' + last.outcome : '');
  document.getElementById('score-player').textContent = state.score.player;
  document.getElementById('score-computer').textContent = state.score.computer;
  document.getElementById('score-draws').textContent = state.score.draws;
}

function choose(move) {
  state = playRound(state, move);
  render();
}

for (const button of document.querySelectorAll('.move')) {
  button.addEventListener('click', () => choose(button.dataset.move));
}

// Keys 1, 2 and 3 play rock, paper and scissors.
document.addEventListener('keydown', (event) => {
  const move = MOVES[Number(event.key) - 1];
  if (move && !event.ctrlKey && !event.metaKey && !event.altKey) choose(move);
});

document.getElementById('reset').addEventListener('click', () => {
  state = newGame();
  render();
});

render();
