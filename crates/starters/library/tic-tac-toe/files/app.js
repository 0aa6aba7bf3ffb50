// Connects the tic-tac-toe logic (game.js) to the page.
const TEXT = {
  playerX: {{ player_x_name|tojson }},
  playerO: {{ player_o_name|tojson }},
  computer: {{ computer_name|tojson }},
  turn: {{ turn_label|tojson }},
  wins: {{ wins_text|tojson }},
  draw: {{ draw_message|tojson }},
  square: {{ square_label|tojson }},
  empty: {{ empty_label|tojson }},
};
const COMPUTER_DELAY_MS = 400;

const squares = document.querySelectorAll('.square');
const statusEl = document.getElementById('status');
const vsComputer = document.getElementById('vs-computer');

let state = newGame();
let score = emptyScore();
let computerTimer = null;

// Against the computer, you are X and the computer is O.
function computerPlays() {
  return vsComputer.checked;
}

function nameOf(player) {
  if (player === 'O' && computerPlays()) return TEXT.computer;
  return player === 'X' ? TEXT.playerX : TEXT.playerO;
}

function render() {
  const line = state.result && state.result.line ? state.result.line : [];
  squares.forEach((button, i) => {
    const mark = state.board[i];
    button.textContent = mark;
    button.className = 'square' + (mark ? ' ' + mark.toLowerCase() : '') + (line.includes(i) ? ' winning' : '');
    button.disabled = Boolean(state.result) || mark !== '' || (computerPlays() && state.turn === 'O');
    button.setAttribute('aria-label', TEXT.square + ' ' + (i + 1) + ': ' + (mark ? nameOf(mark) : TEXT.empty));
  });
  if (state.result && state.result.draw) statusEl.textContent = TEXT.draw;
  else if (state.result) statusEl.textContent = nameOf(state.result.winner) + ' ' + TEXT.wins;
  else statusEl.textContent = TEXT.turn + ': ' + nameOf(state.turn);
  document.getElementById('name-o').textContent = nameOf('O');
  document.getElementById('score-x').textContent = score.X;
  document.getElementById('score-o').textContent = score.O;
  document.getElementById('score-draws').textContent = score.draws;
}

function move(square) {
  const before = state;
  state = play(state, square);
  if (state === before) return;
  score = addResult(score, state.result);
  render();
  if (!state.result && computerPlays() && state.turn === 'O') {
    computerTimer = setTimeout(() => move(computerMove(state.board, 'O')), COMPUTER_DELAY_MS);
  }
}

function newRound() {
  clearTimeout(computerTimer);
  state = newGame();
  render();
}

squares.forEach((button) => {
  button.addEventListener('click', () => {
    if (computerPlays() && state.turn === 'O') return;
    move(Number(button.dataset.square));
  });
});

document.getElementById('new-round').addEventListener('click', newRound);
document.getElementById('reset-score').addEventListener('click', () => {
  score = emptyScore();
  newRound();
});
// Changing who you play against starts a fresh round and score.
vsComputer.addEventListener('change', () => {
  score = emptyScore();
  newRound();
});

render();
