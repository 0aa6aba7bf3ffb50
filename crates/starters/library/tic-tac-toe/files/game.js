// The logic of tic-tac-toe: plain functions over the game state, so the tests can run them in Node.
// The board is 9 squares, numbered 0 to 8 from the top left, each '', 'X' or 'O'.
// The state looks like { board: [...], turn: 'X', result: null }, and when the round is over
// result is { winner: 'X', line: [0, 1, 2] } or { draw: true }.

const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8], // rows
  [0, 3, 6], [1, 4, 7], [2, 5, 8], // columns
  [0, 4, 8], [2, 4, 6], // diagonals
];

function other(player) {
  return player === 'X' ? 'O' : 'X';
}

function newGame(first = 'X') {
  return { board: Array(9).fill(''), turn: first === 'O' ? 'O' : 'X', result: null };
}

// The player with three in a row and which row it is, or null.
function winner(board) {
  for (const line of LINES) {
    const [a, b, c] = line;
    if (board[a] && board[a] === board[b] && board[a] === board[c]) return { winner: board[a], line };
  }
  return null;
}

// Every square taken and nobody has three in a row.
function isDraw(board) {
  return !winner(board) && board.every((square) => square !== '');
}

function emptySquares(board) {
  const free = [];
  board.forEach((square, i) => { if (square === '') free.push(i); });
  return free;
}

function canPlay(state, square) {
  return !state.result && Number.isInteger(square) && square >= 0 && square < 9 && state.board[square] === '';
}

// The player whose turn it is takes a square. A taken square, a square that does not exist
// or a finished round changes nothing.
function play(state, square) {
  if (!canPlay(state, square)) return state;
  const board = state.board.slice();
  board[square] = state.turn;
  const won = winner(board);
  const result = won || (isDraw(board) ? { draw: true } : null);
  return { board, turn: result ? state.turn : other(state.turn), result };
}

// A square that would give `player` three in a row right now, or -1.
function winningSquare(board, player) {
  for (const square of emptySquares(board)) {
    const next = board.slice();
    next[square] = player;
    if (winner(next)) return square;
  }
  return -1;
}

// A simple computer player: win if it can, block the other player's win, take the middle,
// then a corner, then any square. random() gives a number in [0, 1), like Math.random.
function computerMove(board, me, random = Math.random) {
  const free = emptySquares(board);
  if (free.length === 0) return -1;
  const win = winningSquare(board, me);
  if (win !== -1) return win;
  const block = winningSquare(board, other(me));
  if (block !== -1) return block;
  if (board[4] === '') return 4;
  const corners = [0, 2, 6, 8].filter((i) => board[i] === '');
  const choices = corners.length ? corners : free;
  return choices[Math.floor(random() * choices.length)];
}

// The score after a round: one more win for the winner, or one more draw.
function addResult(score, result) {
  if (!result) return score;
  if (result.draw) return { ...score, draws: score.draws + 1 };
  return { ...score, [result.winner]: score[result.winner] + 1 };
}

function emptyScore() {
  return { X: 0, O: 0, draws: 0 };
}

if (typeof module !== 'undefined') {
  module.exports = {
    LINES, other, newGame, winner, isDraw, emptySquares, canPlay, play, winningSquare, computerMove, addResult, emptyScore,
  };
}
