// The parts of a chat message, each made into elements (text set with textContent, never as
// markup): the model's Markdown, diagrams drawn as pictures, quizzes answered here and scored by
// the server, flashcards to flip and review, videos as links, highlighted code, background
// notes and the warnings of tools that failed. A part of a type this page does not know is
// shown as its JSON.

import { api, el } from './dom.js';
import { plainError } from './errors.js';
import { renderMarkdown, safeHref } from './markdown.js';
import { highlightNamed } from './highlight.js';
import { draw } from './diagram.js';

/// What the parts of one message share: `t` (words), `lang`, the conversation and message ids
/// (the message's is null while its reply is still streaming), and `choices` (a quiz's picks,
/// kept when the message is drawn again).
/// { t, lang, conversation, message, choices: Map }

/// The element for one part.
export function renderPart(part, ctx) {
  switch (part?.type) {
    case 'text':
      return renderMarkdown(part.text);
    case 'diagram':
      return diagram(part, ctx);
    case 'quiz':
      return quiz(part.quiz, ctx);
    case 'flashcards':
      return flashcards(part.cards || [], ctx, ctx.t('cards.title', { n: (part.cards || []).length }));
    case 'videos':
      return videos(part, ctx);
    case 'code':
      return code(part, ctx);
    case 'tool_output':
      return toolOutput(part);
    case 'background_process':
      return el('p', { class: 'part note' }, `ⓘ ${part.summary}`);
    case 'error':
      return el('p', { class: 'part warn', role: 'note' }, `⚠ ${ctx.t('part.error', { tool: toolName(part.tool, ctx.t), message: part.message })}`);
    default:
      return unknown(part, ctx);
  }
}

/// A tool's name in words ("diagram", "quiz", …).
export function toolName(tool, t) {
  const key = `toolname.${tool}`;
  const word = t(key);
  return word === key ? String(tool) : word;
}

/// What an outside tool (an MCP server's) answered: its name, then its text as it is.
function toolOutput(part) {
  const figure = el('figure', { class: 'part tool-output' });
  figure.append(el('figcaption', {}, String(part.tool || '')), el('pre', { class: 'plain', tabindex: '0' }, String(part.text || '')));
  return figure;
}

function unknown(part, ctx) {
  const box = el('div', { class: 'part unknown' });
  box.append(el('p', { class: 'note' }, ctx.t('part.unknown', { type: String(part?.type ?? '?') })));
  let text;
  try {
    text = JSON.stringify(part, null, 2);
  } catch {
    text = String(part);
  }
  box.append(el('pre', { class: 'plain' }, text));
  return box;
}

// ---- diagrams ------------------------------------------------------------------------------

function diagram(part, ctx) {
  const figure = el('figure', { class: 'part diagram' });
  const caption = el('figcaption', {}, part.title || '');
  const box = el('div', { class: 'diagram-box' }, ctx.t('part.diagram.drawing'));
  box.setAttribute('aria-busy', 'true');
  figure.append(caption, box);
  const source = (err) => {
    box.replaceChildren(
      el('p', { class: 'note' }, ctx.t('part.diagram.source', { reason: ctx.t(`part.diagram.${err?.why || 'failed'}`) })),
      el('pre', { class: 'plain', tabindex: '0' }, part.mermaid),
    );
    box.removeAttribute('aria-busy');
    figure.dataset.drawn = 'false';
  };
  draw(part.mermaid)
    .then((picture) => {
      const img = el('img', { class: 'diagram-img', alt: ctx.t('part.diagram.alt', { title: part.title || '' }) });
      img.width = picture.width;
      img.height = picture.height;
      img.addEventListener('error', () => source({ why: 'failed' }));
      img.src = picture.src;
      box.replaceChildren(img);
      box.removeAttribute('aria-busy');
      figure.dataset.drawn = 'true';
    })
    .catch(source);
  return figure;
}

// ---- quizzes -------------------------------------------------------------------------------

let quizCount = 0;

function quiz(q, ctx) {
  quizCount += 1;
  const n = quizCount;
  const box = el('form', { class: 'part quiz', 'aria-labelledby': `quiz-${n}-h` });
  box.append(el('h4', { id: `quiz-${n}-h` }, q.title || ''));
  const questions = q.questions || [];
  const key = (k) => `${q.title}|${k}`;
  const sets = questions.map((question, k) => {
    const set = el('fieldset', { class: 'question' });
    set.append(el('legend', {}, `${k + 1}. ${question.question}`));
    (question.options || []).forEach((option, o) => {
      const label = el('label', { class: 'option' });
      const radio = el('input', { type: 'radio', name: `quiz-${n}-q${k}`, value: String(o) });
      radio.checked = ctx.choices?.get(key(k)) === o;
      radio.addEventListener('change', () => ctx.choices?.set(key(k), o));
      label.append(radio, el('span', {}, option));
      set.append(label);
    });
    const result = el('p', { class: 'result', 'aria-live': 'polite' });
    set.append(result);
    box.append(set);
    return { set, result };
  });
  const row = el('div', { class: 'quiz-row' });
  const check = el('button', { type: 'submit', class: 'check' }, ctx.t('quiz.check'));
  const score = el('p', { class: 'score', role: 'status' });
  row.append(check, score);
  box.append(row);
  if (!ctx.message) {
    check.disabled = true;
    score.classList.add('waiting');
    score.textContent = ctx.t('quiz.wait');
  }
  let checked = false;
  const reset = () => {
    checked = false;
    for (const { set, result } of sets) {
      set.classList.remove('right', 'wrong');
      result.textContent = '';
      for (const label of set.querySelectorAll('label')) label.classList.remove('chosen-right', 'chosen-wrong', 'answer');
      for (const mark of set.querySelectorAll('.mark')) mark.remove();
      for (const input of set.querySelectorAll('input')) {
        input.disabled = false;
        input.checked = false;
      }
    }
    for (let k = 0; k < sets.length; k += 1) ctx.choices?.delete(key(k));
    score.textContent = '';
    check.textContent = ctx.t('quiz.check');
  };
  box.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (checked) {
      reset();
      return;
    }
    const answers = sets.map(({ set }) => {
      const picked = set.querySelector('input:checked');
      return picked ? Number(picked.value) : null;
    });
    if (answers.some((a) => a === null)) {
      score.classList.add('waiting');
      score.textContent = ctx.t('quiz.answer_all');
      return;
    }
    score.classList.remove('waiting');
    check.disabled = true;
    try {
      const scored = await api(
        `/api/chat/${encodeURIComponent(ctx.conversation)}/messages/${encodeURIComponent(ctx.message)}/quiz`,
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ answers }) },
      );
      scored.results.forEach((r, k) => {
        const { set, result } = sets[k];
        const labels = set.querySelectorAll('label');
        set.classList.add(r.correct ? 'right' : 'wrong');
        labels[r.chosen]?.classList.add(r.correct ? 'chosen-right' : 'chosen-wrong');
        labels[r.answer]?.classList.add('answer');
        // Marked in words too, not by colour alone.
        labels[r.answer]?.append(el('span', { class: 'mark' }, ' ✓'));
        if (!r.correct) labels[r.chosen]?.append(el('span', { class: 'mark' }, ' ✗'));
        for (const input of set.querySelectorAll('input')) input.disabled = true;
        const answer = questions[k].options?.[r.answer] ?? String(r.answer);
        const verdict = r.correct ? ctx.t('quiz.right') : ctx.t('quiz.wrong', { answer });
        result.textContent = r.explanation ? `${verdict} ${r.explanation}` : verdict;
      });
      score.textContent = ctx.t('quiz.score', { score: scored.score, total: scored.total });
      checked = true;
      check.textContent = ctx.t('quiz.again');
    } catch (err) {
      score.classList.add('waiting');
      score.textContent = plainError(err, ctx.t).text;
    } finally {
      check.disabled = false;
    }
  });
  return box;
}

// ---- flashcards ----------------------------------------------------------------------------

const RATINGS = ['again', 'hard', 'good', 'easy'];

/// A list of cards to flip and review; `title` above them.
export function flashcards(cards, ctx, title) {
  const box = el('section', { class: 'part cards' });
  box.append(el('h4', {}, title));
  const list = el('div', { class: 'card-list' });
  for (const card of cards) list.append(flashcard(card, ctx));
  box.append(list);
  return box;
}

function flashcard(card, ctx) {
  const item = el('div', { class: 'flashcard' });
  const face = el('div', { class: 'face', 'aria-live': 'polite' });
  const side = el('span', { class: 'side' });
  const text = el('p', { class: 'face-text' });
  face.append(side, text);
  const flip = el('button', { type: 'button', class: 'flip', 'aria-pressed': 'false' });
  const rate = el('div', { class: 'rate', role: 'group', 'aria-label': ctx.t('cards.rate') });
  const next = el('p', { class: 'next', role: 'status' });
  let back = false;
  const show = () => {
    item.classList.toggle('flipped', back);
    side.textContent = back ? ctx.t('cards.back') : ctx.t('cards.front');
    text.textContent = back ? card.back : card.front;
    flip.textContent = back ? ctx.t('cards.hide') : ctx.t('cards.show');
    flip.setAttribute('aria-pressed', String(back));
    rate.hidden = !back;
  };
  flip.addEventListener('click', () => {
    back = !back;
    show();
  });
  for (const rating of RATINGS) {
    const b = el('button', { type: 'button', class: `rating ${rating}` }, ctx.t(`cards.${rating}`));
    b.addEventListener('click', async () => {
      for (const other of rate.querySelectorAll('button')) other.disabled = true;
      try {
        const reviewed = await api(`/api/flashcards/${encodeURIComponent(card.id)}/review`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ rating }),
        });
        Object.assign(card, reviewed);
        next.textContent = ctx.t('cards.next', { date: when(reviewed.due, ctx.lang) });
        item.dataset.reviewed = rating;
      } catch (err) {
        next.textContent = plainError(err, ctx.t).text;
      } finally {
        for (const other of rate.querySelectorAll('button')) other.disabled = false;
      }
    });
    rate.append(b);
  }
  show();
  item.append(face, flip, rate, next);
  return item;
}

/// A date and time in the viewer's words.
export function when(iso, lang) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(lang === 'pt' ? 'pt-BR' : 'en', { dateStyle: 'medium', timeStyle: 'short' });
}

// ---- videos and code -----------------------------------------------------------------------

function videos(part, ctx) {
  const box = el('section', { class: 'part videos' });
  box.append(el('h4', {}, ctx.t('videos.title', { query: part.query || '' })));
  const list = el('ul');
  // No thumbnails: the page loads nothing from other sites.
  for (const v of part.videos || []) {
    const item = el('li');
    const href = safeHref(v.url);
    if (href) {
      item.append(el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, v.title || href));
    } else {
      item.append(el('span', {}, v.title || ''));
    }
    if (v.channel) item.append(el('span', { class: 'channel' }, ` · ${v.channel}`));
    list.append(item);
  }
  box.append(list);
  return box;
}

function code(part, ctx) {
  const figure = el('figure', { class: 'part code-part' });
  const head = el('figcaption', {});
  head.append(el('span', { class: 'lang' }, part.language || ''));
  const copy = el('button', { type: 'button', class: 'copy' }, ctx.t('code.copy'));
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(part.code);
      copy.textContent = ctx.t('code.copied');
      setTimeout(() => {
        copy.textContent = ctx.t('code.copy');
      }, 1500);
    } catch {
      // No clipboard (an insecure origin): the code can still be selected.
    }
  });
  head.append(copy);
  const pre = el('pre', { class: 'code', tabindex: '0' });
  const inner = el('code');
  highlightNamed(inner, part.code || '', part.language);
  pre.append(inner);
  figure.append(head, pre);
  return figure;
}
