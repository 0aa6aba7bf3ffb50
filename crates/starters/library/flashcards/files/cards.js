// The flashcards' logic: plain functions over the study session, so the tests can run them in
// Node with a predictable random() instead of Math.random.
// A card looks like { term: 'Photosynthesis', definition: 'How plants make food…' }.
// The session looks like { order: [2, 0, 1], pos: 0, flipped: false, known: [1] }:
// order is the cards' positions in the deck in the order they are studied, pos the place in
// that order, flipped whether the definition is showing, known the cards marked as known.

// Cards with both sides filled in, trimmed, each term once.
function cleanDeck(cards) {
  const deck = [];
  const seen = new Set();
  for (const c of Array.isArray(cards) ? cards : []) {
    const term = c && typeof c.term === 'string' ? c.term.trim() : '';
    const definition = c && typeof c.definition === 'string' ? c.definition.trim() : '';
    if (term && definition && !seen.has(term.toLowerCase())) {
      seen.add(term.toLowerCase());
      deck.push({ term, definition });
    }
  }
  return deck;
}

// Mixes a list (Fisher–Yates). random() gives a number in [0, 1), like Math.random.
function shuffled(list, random = Math.random) {
  const copy = list.slice();
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

// A session over `count` cards, in the deck's order.
function newSession(count) {
  return { order: Array.from({ length: count }, (_, i) => i), pos: 0, flipped: false, known: [] };
}

// The deck position of the card on screen, or -1 when there are no cards.
function currentCard(state) {
  return state.order.length ? state.order[state.pos] : -1;
}

function flip(state) {
  if (state.order.length === 0) return state;
  return { ...state, flipped: !state.flipped };
}

function isKnown(state, card) {
  return state.known.includes(card);
}

function allKnown(state) {
  return state.order.length > 0 && state.order.every((card) => isKnown(state, card));
}

// One card forward (step 1) or back (step -1), going round at the ends, with the term showing.
// With skipKnown, cards marked as known are passed over (unless every card is known).
function move(state, step, skipKnown = false) {
  const n = state.order.length;
  if (n === 0) return state;
  let pos = state.pos;
  for (let tries = 0; tries < n; tries++) {
    pos = (pos + step + n) % n;
    if (!skipKnown || allKnown(state) || !isKnown(state, state.order[pos])) break;
  }
  return { ...state, pos, flipped: false };
}

// Mark the card on screen as known, or not known any more.
function toggleKnown(state) {
  const card = currentCard(state);
  if (card === -1) return state;
  const known = isKnown(state, card) ? state.known.filter((k) => k !== card) : [...state.known, card];
  return { ...state, known };
}

// A new random order, starting from its first card; the known marks stay.
function shuffle(state, random = Math.random) {
  return { ...state, order: shuffled(state.order, random), pos: 0, flipped: false };
}

// Every card back to not known, from the first card of the current order.
function studyAgain(state) {
  return { ...state, known: [], pos: 0, flipped: false };
}

// What the counters show: the place of the card (from 1), how many cards, how many known.
function progress(state) {
  return { position: state.order.length ? state.pos + 1 : 0, total: state.order.length, known: state.known.length };
}

if (typeof module !== 'undefined') {
  module.exports = {
    cleanDeck, shuffled, newSession, currentCard, flip, isKnown, allKnown, move, toggleKnown, shuffle, studyAgain, progress,
  };
}
