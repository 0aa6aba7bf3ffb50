// The random picker's logic: plain functions, so the tests can run them in Node with a
// predictable random() instead of Math.random.
// The state looks like { picked: ['Ana'], history: ['Ana'], last: 'Ana', problem: null };
// problem is 'empty' (nothing to pick from) or 'all-picked' (every option already came out).

const MAX_HISTORY = 50;

// The options typed in the box, one per line: trimmed, no empty lines, each once
// (Ana and ana count as the same).
function parseOptions(text) {
  const options = [];
  const seen = new Set();
  for (const line of String(text || '').split('\n')) {
    const option = line.trim();
    const key = option.toLowerCase();
    if (option && !seen.has(key)) {
      seen.add(key);
      options.push(option);
    }
  }
  return options;
}

function newState() {
  return { picked: [], history: [], last: null, problem: null };
}

// The options that have not come out yet.
function remaining(options, picked) {
  return options.filter((o) => !picked.includes(o));
}

// Pick one option at random. With noRepeat, an option that already came out is not picked
// again until you start over. random() gives a number in [0, 1), like Math.random.
function pick(state, options, noRepeat, random = Math.random) {
  if (options.length === 0) return { ...state, last: null, problem: 'empty' };
  const choices = noRepeat ? remaining(options, state.picked) : options;
  if (choices.length === 0) return { ...state, last: null, problem: 'all-picked' };
  const choice = choices[Math.min(choices.length - 1, Math.floor(random() * choices.length))];
  return {
    picked: state.picked.includes(choice) ? state.picked : [...state.picked, choice],
    history: [choice, ...state.history].slice(0, MAX_HISTORY),
    last: choice,
    problem: null,
  };
}

if (typeof module !== 'undefined') {
  module.exports = { MAX_HISTORY, parseOptions, newState, remaining, pick };
}
