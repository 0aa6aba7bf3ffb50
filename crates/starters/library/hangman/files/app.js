// Connects the hangman logic (hangman.js) to the page.
const WORDS = cleanWords({{ words|tojson }});
const LIVES = {{ lives|tojson }};
const TEXT = {
  win: {{ win_message|tojson }},
  lose: {{ lose_message|tojson }},
  hidden: {{ hidden_letter_label|tojson }},
};

const wordEl = document.getElementById('word');
const spokenEl = document.getElementById('word-spoken');
const livesEl = document.getElementById('lives');
const wrongEl = document.getElementById('wrong');
const messageEl = document.getElementById('message');
const keyboard = document.getElementById('keyboard');
const parts = document.querySelectorAll('.drawing .part');

let state = newGame('', LIVES);

// One button per letter; each is used once per word.
const keys = {};
for (const letter of LETTERS) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'key';
  button.textContent = letter;
  button.addEventListener('click', () => play(letter));
  keys[letter] = button;
  keyboard.append(button);
}

function play(letter) {
  if (!state.word) return; // the word list had no usable word
  state = guess(state, letter);
  render();
}

function newWord() {
  state = newGame(pickWord(WORDS, Math.random, state.word), LIVES);
  messageEl.textContent = '';
  render();
}

function render() {
  const over = status(state);
  const letters = revealed(state, over === 'lost');
  wordEl.textContent = letters.join(' ');
  // Read the word out letter by letter, saying which ones are still hidden.
  spokenEl.textContent = letters.map((c) => (c === '_' ? TEXT.hidden : c)).join(', ');
  livesEl.textContent = state.lives + ' / ' + state.maxLives;
  wrongEl.textContent = wrongLetters(state).join(' ') || '—';
  const shown = partsShown(state, parts.length);
  parts.forEach((part, i) => part.classList.toggle('shown', i < shown));
  for (const letter of LETTERS) {
    const used = state.guessed.includes(letter);
    keys[letter].disabled = used || over !== 'playing' || state.word === '';
    keys[letter].classList.toggle('hit', used && !wrongLetters(state).includes(letter));
    keys[letter].classList.toggle('miss', wrongLetters(state).includes(letter));
  }
  if (over === 'won') messageEl.textContent = TEXT.win;
  else if (over === 'lost') messageEl.textContent = TEXT.lose + ' ' + state.word;
  messageEl.className = 'message ' + over;
}

// Typing a letter on the keyboard guesses it; Enter starts a new word when the game is over.
document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === 'Enter' && status(state) !== 'playing') {
    newWord();
  } else if (event.key.length === 1 && isLetter(event.key)) {
    play(event.key);
  }
});

document.getElementById('new-word').addEventListener('click', newWord);

newWord();
