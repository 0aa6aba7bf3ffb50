// Connects the memory game logic (memory.js) to the page.
const SYMBOLS = {{ symbols|tojson }};
const LANGUAGE = {{ language|tojson }};
const HIDE_AFTER_MS = 800;

const TEXT = {
  en: { moves: (n) => 'You did it in ' + n + (n === 1 ? ' move.' : ' moves.'), card: 'Card', hidden: 'face down' },
  pt: { moves: (n) => 'Você conseguiu em ' + n + (n === 1 ? ' jogada.' : ' jogadas.'), card: 'Carta', hidden: 'virada para baixo' },
}[LANGUAGE === 'pt' ? 'pt' : 'en'];

const board = document.getElementById('board');
const movesEl = document.getElementById('moves');
const pairsEl = document.getElementById('pairs');
const win = document.getElementById('win');

let state;
let hideTimer = null;

function start() {
  clearTimeout(hideTimer);
  state = newGame(SYMBOLS);
  board.style.gridTemplateColumns = 'repeat(' + columnsFor(state.cards.length) + ', 1fr)';
  render();
}

function onCardClick(id) {
  if (needsHide(state)) {
    // Two wrong cards are still showing: turn them back right away.
    clearTimeout(hideTimer);
    state = hideOpen(state);
  }
  state = flip(state, id);
  if (needsHide(state)) {
    hideTimer = setTimeout(() => { state = hideOpen(state); render(); }, HIDE_AFTER_MS);
  }
  render();
}

function render() {
  board.innerHTML = '';
  for (const card of state.cards) {
    const up = isFaceUp(state, card.id);
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'card' + (up ? ' up' : '') + (card.matched ? ' matched' : '');
    b.setAttribute('aria-label', up ? card.symbol : TEXT.card + ' ' + (card.id + 1) + ', ' + TEXT.hidden);
    const face = document.createElement('span');
    // Emoji stay big; short words get a smaller font so they fit on the card.
    const isWord = !/\p{Extended_Pictographic}/u.test(card.symbol) && [...card.symbol].length > 2;
    face.className = isWord ? 'face word' : 'face';
    face.textContent = up ? card.symbol : '';
    b.append(face);
    b.addEventListener('click', () => onCardClick(card.id));
    board.append(b);
  }
  movesEl.textContent = state.moves;
  pairsEl.textContent = pairsFound(state) + ' / ' + state.cards.length / 2;
  const won = isWon(state);
  win.hidden = !won;
  if (won) document.getElementById('win-moves').textContent = TEXT.moves(state.moves);
}

document.getElementById('new-game').addEventListener('click', start);
document.getElementById('play-again').addEventListener('click', start);

start();
