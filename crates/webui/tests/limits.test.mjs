// The limits' words by the buttons, in both languages: run by `cargo test -p wright-webui`
// (tests/node.rs) with node's own test runner.
import test from 'node:test';
import assert from 'node:assert/strict';
import { limitWords, clockAfter } from '../assets/limits.js';

test('the limit is shown before it bites', () => {
  const usage = { limit: 20, used: 2, remaining: 18, frees_in_secs: 3500 };
  assert.deepEqual(limitWords('explanations', usage, 'en'), { hint: '18 of 20 questions left this hour', again: null });
  assert.equal(limitWords('explanations', usage, 'pt').hint, '18 de 20 perguntas restantes nesta hora');
  assert.equal(limitWords('chat_messages', { ...usage, limit: 120, remaining: 119 }, 'en').hint, '119 of 120 messages left this hour');
  assert.equal(limitWords('builds', { limit: 10, used: 0, remaining: 10 }, 'en').hint, '10 of 10 builds left this hour');
});

test('at 0 the button says when it comes back', () => {
  const now = Date.UTC(2026, 10, 28, 12, 0, 0);
  const usage = { limit: 20, used: 20, remaining: 0, frees_in_secs: 754 };
  const time = clockAfter(754, now);
  assert.match(time, /^\d\d:\d\d$/);
  assert.deepEqual(limitWords('explanations', usage, 'en', now), {
    hint: `No questions left this hour (at most 20): more at ${time}`,
    again: `Explain again at ${time}`,
  });
  assert.equal(limitWords('builds', usage, 'pt', now).again, `Construir de novo às ${time}`);
  assert.equal(limitWords('chat_messages', usage, 'en', now).again, `Send again at ${time}`);
});

test('a route the server does not report shows nothing', () => {
  assert.deepEqual(limitWords('explanations', undefined, 'en'), { hint: '', again: null });
  assert.deepEqual(limitWords('unknown', { limit: 1, remaining: 1 }, 'en'), { hint: '', again: null });
});
