// The logic of rock, paper, scissors: plain functions over the game state, so the tests can
// run them in Node with a predictable random() instead of Math.random.
// The state looks like { score: { player: 0, computer: 0, draws: 0 }, rounds: 0, last: null }
// and after a round last is { player: 'rock', computer: 'scissors', outcome: 'win' }.

const MOVES = ['rock', 'paper', 'scissors'];

// What each move beats.
const BEATS = { rock: 'scissors', paper: 'rock', scissors: 'paper' };

function isMove(move) {
  return MOVES.includes(move);
}

// 'win', 'lose' or 'draw', seen from the player.
function outcome(player, computer) {
  if (player === computer) return 'draw';
  return BEATS[player] === computer ? 'win' : 'lose';
}

// The computer's move. random() gives a number in [0, 1), like Math.random.
function computerChoice(random = Math.random) {
  const i = Math.min(MOVES.length - 1, Math.floor(random() * MOVES.length));
  return MOVES[i];
}

function newGame() {
  return { score: { player: 0, computer: 0, draws: 0 }, rounds: 0, last: null };
}

// One round: the player's move against the computer's. A move that is not rock, paper or
// scissors changes nothing.
function playRound(state, move, random = Math.random) {
  if (!isMove(move)) return state;
  const computer = computerChoice(random);
  const result = outcome(move, computer);
  const score = { ...state.score };
  if (result === 'win') score.player += 1;
  else if (result === 'lose') score.computer += 1;
  else score.draws += 1;
  return { score, rounds: state.rounds + 1, last: { player: move, computer, outcome: result } };
}

// Who is ahead: 'player', 'computer' or 'tie'.
function leader(score) {
  if (score.player > score.computer) return 'player';
  if (score.computer > score.player) return 'computer';
  return 'tie';
}

if (typeof module !== 'undefined') {
  module.exports = { MOVES, BEATS, isMove, outcome, computerChoice, newGame, playRound, leader };
}
