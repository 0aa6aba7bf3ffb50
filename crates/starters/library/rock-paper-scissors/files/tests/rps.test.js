const test = require('node:test');
const assert = require('node:assert');
const { MOVES, isMove, outcome, computerChoice, newGame, playRound, leader } = require('../rps.js');

// random() values that make the computer choose rock, paper or scissors.
const ROCK = () => 0;
const PAPER = () => 0.5;
const SCISSORS = () => 0.99;

test('rock beats scissors, scissors beat paper, paper beats rock', () => {
  assert.strictEqual(outcome('rock', 'scissors'), 'win');
  assert.strictEqual(outcome('scissors', 'paper'), 'win');
  assert.strictEqual(outcome('paper', 'rock'), 'win');
  assert.strictEqual(outcome('scissors', 'rock'), 'lose');
  assert.strictEqual(outcome('paper', 'scissors'), 'lose');
  assert.strictEqual(outcome('rock', 'paper'), 'lose');
});

test('the same move is a draw', () => {
  for (const move of MOVES) assert.strictEqual(outcome(move, move), 'draw');
});

test('every pair of moves has exactly one winner or is a draw', () => {
  for (const a of MOVES) {
    for (const b of MOVES) {
      const there = outcome(a, b);
      const back = outcome(b, a);
      if (a === b) assert.strictEqual(there, 'draw');
      else assert.deepStrictEqual([there, back].sort(), ['lose', 'win']);
    }
  }
});

test('the computer chooses with the random source it is given', () => {
  assert.strictEqual(computerChoice(ROCK), 'rock');
  assert.strictEqual(computerChoice(PAPER), 'paper');
  assert.strictEqual(computerChoice(SCISSORS), 'scissors');
  assert.strictEqual(computerChoice(() => 1), 'scissors', 'never past the last move');
  for (let i = 0; i < 100; i++) assert.ok(isMove(computerChoice()));
});

test('a new game starts at zero', () => {
  assert.deepStrictEqual(newGame(), { score: { player: 0, computer: 0, draws: 0 }, rounds: 0, last: null });
});

test('a round records both moves, the outcome and the score', () => {
  const won = playRound(newGame(), 'rock', SCISSORS);
  assert.deepStrictEqual(won.last, { player: 'rock', computer: 'scissors', outcome: 'win' });
  assert.deepStrictEqual(won.score, { player: 1, computer: 0, draws: 0 });
  const lost = playRound(won, 'rock', PAPER);
  assert.deepStrictEqual(lost.score, { player: 1, computer: 1, draws: 0 });
  assert.strictEqual(lost.last.outcome, 'lose');
  const drew = playRound(lost, 'rock', ROCK);
  assert.deepStrictEqual(drew.score, { player: 1, computer: 1, draws: 1 });
  assert.strictEqual(drew.rounds, 3);
});

test('playing a round does not change the state it was given', () => {
  const start = newGame();
  playRound(start, 'paper', ROCK);
  assert.deepStrictEqual(start, newGame());
});

test('an unknown move changes nothing', () => {
  const start = newGame();
  assert.strictEqual(playRound(start, 'lizard', ROCK), start);
  assert.strictEqual(playRound(start, '', ROCK), start);
  assert.strictEqual(isMove('Rock'), false);
});

test('the leader is whoever has more wins', () => {
  assert.strictEqual(leader({ player: 3, computer: 1, draws: 0 }), 'player');
  assert.strictEqual(leader({ player: 0, computer: 2, draws: 5 }), 'computer');
  assert.strictEqual(leader({ player: 2, computer: 2, draws: 1 }), 'tie');
});
