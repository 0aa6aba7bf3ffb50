const test = require('node:test');
const assert = require('node:assert');
const {
  newGame, winner, isDraw, emptySquares, canPlay, play, winningSquare, computerMove, addResult, emptyScore,
} = require('../game.js');

// Plays the squares in order, X first.
function playAll(squares) {
  return squares.reduce((state, square) => play(state, square), newGame());
}

test('a new game is an empty board with X to play', () => {
  const state = newGame();
  assert.deepStrictEqual(state.board, ['', '', '', '', '', '', '', '', '']);
  assert.strictEqual(state.turn, 'X');
  assert.strictEqual(state.result, null);
  assert.strictEqual(newGame('O').turn, 'O');
});

test('players take turns', () => {
  const state = playAll([4, 0]);
  assert.strictEqual(state.board[4], 'X');
  assert.strictEqual(state.board[0], 'O');
  assert.strictEqual(state.turn, 'X');
});

test('a taken square, a missing square or a finished round changes nothing', () => {
  const one = playAll([4]);
  assert.strictEqual(play(one, 4), one);
  assert.strictEqual(play(one, 9), one);
  assert.strictEqual(play(one, -1), one);
  assert.strictEqual(play(one, 1.5), one);
  assert.strictEqual(canPlay(one, 0), true);
  const won = playAll([0, 3, 1, 4, 2]);
  assert.strictEqual(play(won, 8), won);
});

test('three in a row, a column or a diagonal wins', () => {
  assert.deepStrictEqual(playAll([0, 3, 1, 4, 2]).result, { winner: 'X', line: [0, 1, 2] });
  assert.deepStrictEqual(playAll([0, 1, 3, 2, 6]).result, { winner: 'X', line: [0, 3, 6] });
  assert.deepStrictEqual(playAll([1, 0, 2, 4, 3, 8]).result, { winner: 'O', line: [0, 4, 8] });
  assert.deepStrictEqual(winner(['', '', 'O', '', 'O', '', 'O', '', '']), { winner: 'O', line: [2, 4, 6] });
  assert.strictEqual(winner(['X', 'O', 'X', '', '', '', '', '', '']), null);
});

test('a full board with no line is a draw', () => {
  // X O X / X O O / O X X
  const state = playAll([0, 1, 2, 4, 3, 5, 7, 6, 8]);
  assert.deepStrictEqual(state.result, { draw: true });
  assert.strictEqual(isDraw(state.board), true);
  assert.strictEqual(emptySquares(state.board).length, 0);
});

test('winning with the last square is a win, not a draw', () => {
  // X O X / O X O / O X X: the ninth move makes a diagonal
  const state = playAll([0, 1, 2, 3, 4, 5, 7, 6, 8]);
  assert.deepStrictEqual(state.result, { winner: 'X', line: [0, 4, 8] });
  assert.strictEqual(isDraw(state.board), false);
});

test('the computer wins when it can and blocks otherwise', () => {
  const board = ['O', 'O', '', 'X', 'X', '', '', '', ''];
  assert.strictEqual(winningSquare(board, 'O'), 2);
  assert.strictEqual(computerMove(board, 'O'), 2, 'winning beats blocking');
  assert.strictEqual(computerMove(['X', 'X', '', '', 'O', '', '', '', ''], 'O'), 2, 'blocks the row');
  assert.strictEqual(computerMove(['X', '', '', '', '', '', '', '', ''], 'O'), 4, 'takes the middle');
});

test('the computer takes a free corner chosen by the random source', () => {
  const board = ['', '', '', '', 'X', '', '', '', ''];
  assert.strictEqual(computerMove(board, 'O', () => 0), 0);
  assert.strictEqual(computerMove(board, 'O', () => 0.99), 8);
  assert.strictEqual(computerMove(['X', 'O', 'X', 'X', 'O', 'O', 'O', 'X', 'X'], 'O'), -1, 'no square left');
});

test('the score counts wins per player and draws', () => {
  let score = emptyScore();
  score = addResult(score, { winner: 'X', line: [0, 1, 2] });
  score = addResult(score, { winner: 'X', line: [3, 4, 5] });
  score = addResult(score, { winner: 'O', line: [0, 4, 8] });
  score = addResult(score, { draw: true });
  score = addResult(score, null);
  assert.deepStrictEqual(score, { X: 2, O: 1, draws: 1 });
});
