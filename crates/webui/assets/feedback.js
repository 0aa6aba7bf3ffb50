// 👍/👎 on a finished build of one's own (docs/feedback.md): POST /api/builds/{id}/feedback
// with an optional comment. The notes the build used gain or lose confidence; the page says
// how many moved. After a 👎 with a comment, "Keep working on it" starts a follow-up build of
// this one (the same form as "Keep working") with the comment as its prompt. Elements carry
// `data-tf`: these words are this module's own.

import { $, api } from './dom.js';

const WORDS = {
  en: {
    'rate.ask': 'How did it turn out?',
    'rate.up': '👍 Good',
    'rate.down': '👎 Not right',
    'rate.comment': 'What was wrong or right? (optional)',
    'rate.keep': 'Keep working on it',
    'rate.thanks.up': 'Thanks: rated 👍.',
    'rate.thanks.down': 'Thanks: rated 👎.',
    'rate.moved.up': '{n} note(s) this build used gained confidence.',
    'rate.moved.down': '{n} note(s) this build used lost confidence.',
  },
  pt: {
    'rate.ask': 'Como ficou?',
    'rate.up': '👍 Bom',
    'rate.down': '👎 Não ficou certo',
    'rate.comment': 'O que ficou errado ou certo? (opcional)',
    'rate.keep': 'Continuar trabalhando nisso',
    'rate.thanks.up': 'Obrigado: avaliado 👍.',
    'rate.thanks.down': 'Obrigado: avaliado 👎.',
    'rate.moved.up': '{n} nota(s) usada(s) nesta construção ganharam confiança.',
    'rate.moved.down': '{n} nota(s) usada(s) nesta construção perderam confiança.',
  },
};

let w = (key) => key;
let ratingOf = null; // the build the buttons rate

function words(lang) {
  const table = WORDS[lang] || WORDS.en;
  return (key, vars = {}) =>
    (table[key] ?? WORDS.en[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
}

/// Once signed in: this module's words and the buttons' handlers.
export function mountFeedback(lang) {
  w = words(lang);
  for (const node of document.querySelectorAll('[data-tf]')) node.textContent = w(node.dataset.tf);
  $('rate-comment').placeholder = w('rate.comment');
  $('rate-comment').setAttribute('aria-label', w('rate.comment'));
  $('rate-up').addEventListener('click', () => rate('up'));
  $('rate-down').addEventListener('click', () => rate('down'));
  $('rate-keep').addEventListener('click', keepWorking);
}

/// Show the rating box for `build` when it is the viewer's own and finished; hide it otherwise.
export function showFeedback(build, own) {
  const ended = build.status === 'published' || build.status === 'failed';
  ratingOf = own && ended && build.kind !== 'task' ? build.id : null;
  $('rate').hidden = !ratingOf;
  $('rate-keep').hidden = true;
  $('rate-said').textContent = '';
  $('rate-comment').value = build.feedback?.comment || '';
  pressed(build.feedback?.value || null);
}

/// The build just finished while being watched.
export function offerFeedback(id, own) {
  if (!own) return;
  ratingOf = id;
  $('rate').hidden = false;
}

/// Hide the box (another build or page takes the screen).
export function hideFeedback() {
  ratingOf = null;
  $('rate').hidden = true;
}

function pressed(value) {
  $('rate-up').setAttribute('aria-pressed', String(value === 'up'));
  $('rate-down').setAttribute('aria-pressed', String(value === 'down'));
}

async function rate(value) {
  const id = ratingOf;
  if (!id) return;
  const comment = $('rate-comment').value.trim();
  const body = { value };
  if (comment) body.comment = comment;
  for (const b of [$('rate-up'), $('rate-down')]) b.disabled = true;
  try {
    const r = await api(`/api/builds/${encodeURIComponent(id)}/feedback`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (ratingOf !== id) return;
    pressed(r.feedback.value);
    let said = w(`rate.thanks.${r.feedback.value}`);
    if (r.moved.length) said += ` ${w(`rate.moved.${r.feedback.value}`, { n: r.moved.length })}`;
    $('rate-said').textContent = said;
    $('rate-keep').hidden = !(r.feedback.value === 'down' && comment);
  } catch (err) {
    $('rate-said').textContent = err.message || String(err);
  } finally {
    for (const b of [$('rate-up'), $('rate-down')]) b.disabled = false;
  }
}

/// A follow-up of the rated build with the comment as its prompt, through "Keep working".
function keepWorking() {
  const comment = $('rate-comment').value.trim();
  if (!comment || !ratingOf) return;
  $('more-prompt').value = comment;
  $('more').hidden = false;
  $('more').requestSubmit();
}
