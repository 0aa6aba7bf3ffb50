// The logic of the memory game: plain functions over the game state.
// They never touch the page, so they are easy to test.
// A card looks like { id: 0, symbol: '🐶', matched: false }.
// The state looks like { cards: [...], open: [ids of face-up unmatched cards], moves: 0 }.

// Different, non-empty symbols only: a symbol must make exactly one pair.
function uniqueSymbols(symbols) {
  const seen = [];
  for (const s of Array.isArray(symbols) ? symbols : []) {
    const clean = typeof s === 'string' ? s.trim() : '';
    if (clean && !seen.includes(clean)) seen.push(clean);
  }
  return seen;
}

// Mixes a list (Fisher–Yates). random() gives a number in [0, 1), like Math.random.
function shuffle(list, random) {
  const copy = list.slice();
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

// Two cards per symbol, shuffled. Pass your own random() to get the same deck every time.
function buildDeck(symbols, random = Math.random) {
  const pairs = [];
  for (const s of uniqueSymbols(symbols)) pairs.push(s, s);
  return shuffle(pairs, random).map((symbol, id) => ({ id, symbol, matched: false }));
}

function newGame(symbols, random = Math.random) {
  return { cards: buildDeck(symbols, random), open: [], moves: 0 };
}

function canFlip(state, id) {
  const card = state.cards[id];
  return Boolean(card) && !card.matched && state.open.length < 2 && !state.open.includes(id);
}

// Turning a card face up. The second card of a turn counts as one move;
// if both show the same symbol they stay matched.
function flip(state, id) {
  if (!canFlip(state, id)) return state;
  const open = [...state.open, id];
  if (open.length < 2) return { ...state, open };
  const [a, b] = open;
  const moves = state.moves + 1;
  if (state.cards[a].symbol === state.cards[b].symbol) {
    const cards = state.cards.map((c) => (c.id === a || c.id === b ? { ...c, matched: true } : c));
    return { cards, open: [], moves };
  }
  return { ...state, open, moves };
}

// Two different cards are face up: they must be turned back before the next move.
function needsHide(state) {
  return state.open.length === 2;
}

function hideOpen(state) {
  return needsHide(state) ? { ...state, open: [] } : state;
}

function isFaceUp(state, id) {
  const card = state.cards[id];
  return Boolean(card) && (card.matched || state.open.includes(id));
}

function pairsFound(state) {
  return state.cards.filter((c) => c.matched).length / 2;
}

function isWon(state) {
  return state.cards.length > 0 && state.cards.every((c) => c.matched);
}

// How many columns make a tidy grid for this many cards.
function columnsFor(count) {
  if (count <= 12 || count === 16) return 4;
  if (count === 18) return 6;
  return 5;
}

if (typeof module !== 'undefined') {
  module.exports = { uniqueSymbols, shuffle, buildDeck, newGame, canFlip, flip, needsHide, hideOpen, isFaceUp, pairsFound, isWon, columnsFor };
}
