// Classes and shared builds (docs/classes.md). On a build of one's own, a Share toggle lets the
// owner's classmates follow it (POST /api/builds/{id}/share); on someone else's (a shared one,
// or a student's for their teacher) the view is read-only, says who shared it, and "Keep
// working" becomes "Make a copy" (the same POST /api/builds with `continue`: the server copies
// the files into a build of the viewer's own). A teacher's "My classes" page shows each class's
// members, their recent builds with outcome and what each spent this month (GET
// /api/classes/{name}); "Shared with me" lists what classmates shared (GET
// /api/builds?shared=true). Elements carry `data-tc`: these words are this module's own.

import { $, api, el } from './dom.js';
import { ERROR_WORDS, showError } from './errors.js';
import { WORDS as SHARED } from './words.js';

const WORDS = {
  en: {
    'nav.classes': 'My classes',
    'share.on': 'Shared with my class',
    'share.off': 'Share with my class',
    'share.by': 'Shared by {name}',
    'share.read': 'Read-only: someone else’s build',
    'copy.label': 'Make a copy to keep working on it: what should change?',
    'copy.go': 'Make a copy',
    'shared.title': 'Shared with me',
    'shared.none': 'Nothing shared with you yet.',
    'classes.title': 'My classes',
    'classes.none': 'You teach no class yet; an admin adds one with wright classes add.',
    'classes.member': 'Student',
    'classes.runs': 'Runs this month',
    'classes.cost': 'Cost',
    'classes.tokens': 'Tokens',
    'classes.limits': 'Running · this hour',
    'classes.recent': 'Recent builds',
    'classes.total': 'This month: {cost} · {tokens} tokens',
    'classes.lim': 'at once {running}/{most} · builds {builds} · questions {questions} · chat {chat} (this hour)',
  },
  pt: {
    'nav.classes': 'Minhas turmas',
    'share.on': 'Compartilhado com a turma',
    'share.off': 'Compartilhar com a turma',
    'share.by': 'Compartilhado por {name}',
    'share.read': 'Somente leitura: build de outra pessoa',
    'copy.label': 'Faça uma cópia para continuar: o que deve mudar?',
    'copy.go': 'Fazer uma cópia',
    'shared.title': 'Compartilhados comigo',
    'shared.none': 'Nada foi compartilhado com você ainda.',
    'classes.title': 'Minhas turmas',
    'classes.none': 'Você ainda não tem turmas; um admin cria uma com wright classes add.',
    'classes.member': 'Aluno',
    'classes.runs': 'Execuções no mês',
    'classes.cost': 'Custo',
    'classes.tokens': 'Tokens',
    'classes.limits': 'Rodando · nesta hora',
    'classes.recent': 'Builds recentes',
    'classes.total': 'Neste mês: {cost} · {tokens} tokens',
    'classes.lim': 'ao mesmo tempo {running}/{most} · construções {builds} · perguntas {questions} · chat {chat} (nesta hora)',
  },
};

function words(lang) {
  // This module's words, then the error sentences every page shares (errors.js).
  const table = { ...(SHARED[lang] || SHARED.en), ...(ERROR_WORDS[lang] || ERROR_WORDS.en), ...(WORDS[lang] || WORDS.en) };
  const fallback = { ...SHARED.en, ...ERROR_WORDS.en, ...WORDS.en };
  return (key, vars = {}) =>
    (table[key] ?? fallback[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
}

let w = words('en');
let user = null;

/// Once signed in: this module's words, the "My classes" link for teachers and admins.
export function mountClasses(lang, me) {
  w = words(lang);
  user = me;
  for (const node of document.querySelectorAll('[data-tc]')) node.textContent = w(node.dataset.tc);
  $('nav-classes').hidden = !(me.role === 'teacher' || me.role === 'admin');
  $('share').addEventListener('click', toggleShare);
}

let shareOf = null; // the build the Share toggle is for
// What this page last set each of its builds to: a view drawn from a read that left before the
// toggle's answer came must not turn the toggle back (only the owner shares, from here).
const sharedHere = new Map();

/// Set the view up for `build`: its owner gets the Share toggle; anyone else a read-only view
/// that says whose it is, with "Make a copy". Returns whether the viewer owns it.
export function showSharing(build, keepLabel, keepButton) {
  const own = build.owner === user?.id;
  const shared = own && sharedHere.has(build.id) ? sharedHere.get(build.id) : Boolean(build.shared_by);
  shareOf = own ? build.id : null;
  $('share').hidden = !own || build.kind === 'task';
  pressed(shared);
  const badge = $('shared-by');
  badge.hidden = own;
  if (!own) badge.textContent = shared ? w('share.by', { name: build.shared_by }) : w('share.read');
  keepLabel.textContent = own ? keepLabel.dataset.ownText : w('copy.label');
  keepButton.textContent = own ? keepButton.dataset.ownText : w('copy.go');
  return own;
}

function pressed(on) {
  $('share').setAttribute('aria-pressed', String(on));
  $('share').textContent = on ? w('share.on') : w('share.off');
}

async function toggleShare() {
  const id = shareOf;
  if (!id) return;
  const on = $('share').getAttribute('aria-pressed') !== 'true';
  $('share').disabled = true;
  try {
    const r = await api(`/api/builds/${encodeURIComponent(id)}/share`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ shared: on }),
    });
    sharedHere.set(id, r.shared);
    if (shareOf === id) pressed(r.shared);
  } catch (err) {
    $('shared-by').hidden = false;
    $('shared-by').textContent = err.message;
  } finally {
    $('share').disabled = false;
  }
}

/// "Shared with me": classmates' shared builds, each linked, with who shared it.
export async function loadShared() {
  let builds;
  try {
    builds = await api('/api/builds?shared=true');
  } catch {
    return;
  }
  const list = $('shared-list');
  list.replaceChildren(
    ...builds.map((b) => {
      const item = el('li');
      item.append(el('a', { href: `#build=${b.id}` }, b.prompt), el('span', { class: 'muted' }, ` · ${w('share.by', { name: b.shared_by })}`));
      return item;
    }),
  );
  $('shared-none').hidden = builds.length > 0;
}

const money = (usd) => `$${(usd || 0).toFixed(4)}`;

/// "My classes": each class the viewer teaches (every class for an admin), its members'
/// builds, costs and limits.
export async function showClasses(lang) {
  const body = $('classes-body');
  $('classes-error').textContent = '';
  let classes;
  try {
    classes = await api('/api/classes');
  } catch (err) {
    $('classes-error').textContent = err.message;
    return;
  }
  const taught = classes.filter((c) => c.members !== undefined);
  body.replaceChildren();
  if (taught.length === 0) body.append(el('p', { class: 'muted' }, w('classes.none')));
  for (const c of taught) {
    try {
      body.append(classReport(await api(`/api/classes/${encodeURIComponent(c.name)}`), lang));
    } catch (err) {
      const box = el('p', { class: 'error' });
      showError(box, err, w);
      body.append(box);
    }
  }
}

function classReport(r, lang) {
  const box = el('section', { class: 'class-report', 'aria-label': r.name });
  box.append(
    el('h3', {}, r.name),
    el('p', { class: 'muted' }, w('classes.total', { cost: money(r.cost_usd), tokens: (r.input_tokens + r.output_tokens).toLocaleString(lang) })),
  );
  const table = el('table', { class: 'class-members' });
  const head = el('tr');
  for (const k of ['classes.member', 'classes.runs', 'classes.cost', 'classes.tokens', 'classes.limits', 'classes.recent']) head.append(el('th', {}, w(k)));
  table.append(el('thead'), el('tbody'));
  table.tHead.append(head);
  for (const m of r.members) {
    const row = el('tr');
    const recent = el('td');
    for (const b of m.recent) {
      const link = el('a', { href: `#build=${b.id}`, class: `status ${b.status}`, title: b.prompt }, `${b.prompt.slice(0, 40)} (${b.status})`);
      recent.append(link, document.createTextNode(' '));
    }
    row.append(
      el('td', {}, m.name),
      el('td', {}, String(m.runs)),
      // The month so far against their cap (when they have one), as the cap check counts it.
      el('td', { title: `→ ${money(m.projected_usd ?? m.cost_usd)}` }, m.cap_usd != null ? `${money(m.cost_usd)} / ${money(m.cap_usd)}` : money(m.cost_usd)),
      el('td', {}, (m.input_tokens + m.output_tokens).toLocaleString(lang)),
      el('td', {}, limitsLine(m)),
      recent,
    );
    table.tBodies[0].append(row);
  }
  box.append(table);
  return box;
}

/// A member's runs at once and each route's use of its hour: "at once 1/2 · builds 3/10 · …".
function limitsLine(m) {
  const r = m.limits?.routes || {};
  const of = (name) => (r[name] ? `${r[name].used}/${r[name].limit}` : '–');
  return w('classes.lim', {
    running: m.active_builds,
    most: m.max_concurrent_builds,
    builds: of('builds'),
    questions: of('explanations'),
    chat: of('chat_messages'),
  });
}
