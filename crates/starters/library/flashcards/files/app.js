// Connects the flashcards' logic (cards.js) to the page.
const DECK = cleanDeck({{ cards|tojson }});
const TEXT = {
  term: {{ term_side_label|tojson }},
  definition: {{ definition_side_label|tojson }},
  allKnown: {{ all_known_message|tojson }},
};

const cardButton = document.getElementById('card');
const sideEl = document.getElementById('side');
const cardText = document.getElementById('card-text');
const knowButton = document.getElementById('know');
const skipKnown = document.getElementById('skip-known');
const doneEl = document.getElementById('done');

let state = newSession(DECK.length);

function render() {
  const index = currentCard(state);
  const card = DECK[index];
  sideEl.textContent = card ? (state.flipped ? TEXT.definition : TEXT.term) : '';
  cardText.textContent = card ? (state.flipped ? card.definition : card.term) : '';
  cardButton.classList.toggle('flipped', state.flipped);
  cardButton.classList.toggle('known', card !== undefined && isKnown(state, index));
  knowButton.setAttribute('aria-pressed', String(card !== undefined && isKnown(state, index)));
  const p = progress(state);
  document.getElementById('position').textContent = p.position;
  document.getElementById('total').textContent = p.total;
  document.getElementById('known-count').textContent = p.known;
  doneEl.textContent = allKnown(state) ? TEXT.allKnown : '';
}

function update(next) {
  state = next;
  render();
}

cardButton.addEventListener('click', () => update(flip(state)));
document.getElementById('previous').addEventListener('click', () => update(move(state, -1, skipKnown.checked)));
document.getElementById('next').addEventListener('click', () => update(move(state, 1, skipKnown.checked)));
knowButton.addEventListener('click', () => update(toggleKnown(state)));
document.getElementById('shuffle').addEventListener('click', () => update(shuffle(state)));
document.getElementById('study-again').addEventListener('click', () => update(studyAgain(state)));

// The arrow keys go to the previous and next card (the card itself flips with Space or Enter).
document.addEventListener('keydown', (event) => {
  if (event.target instanceof HTMLInputElement) return;
  if (event.key === 'ArrowLeft') update(move(state, -1, skipKnown.checked));
  if (event.key === 'ArrowRight') update(move(state, 1, skipKnown.checked));
});

render();
