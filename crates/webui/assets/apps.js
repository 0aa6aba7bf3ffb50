// "My apps": the signed-in person's published apps (docs/apps.md), from GET /api/apps. Each
// one can be renamed in place (title, description, address: PATCH /api/apps/{slug}), taken
// down after a confirmation (DELETE /api/apps/{slug}), and shows the apps most like it
// (GET /api/apps/{slug}'s `related`). The server's refusals are said in the viewer's words,
// not as codes. An unpublished app stays listed, marked, because its address stays reserved.

import { $, api, el } from './dom.js';

let shown = 0; // which call of showApps is on screen: an older answer arriving late is dropped

/// Draw the caller's apps into #apps-list; `t` translates, `lang` formats dates.
export async function showApps(t, lang) {
  const me = ++shown;
  const list = $('apps-list');
  $('apps-error').textContent = '';
  list.setAttribute('aria-busy', 'true');
  let apps;
  try {
    apps = await api('/api/apps');
  } catch (err) {
    if (me === shown) $('apps-error').textContent = plainError(err, t, '');
    list.removeAttribute('aria-busy');
    return;
  }
  if (me !== shown) return;
  list.removeAttribute('aria-busy');
  list.replaceChildren(...apps.map((app) => item(app, t, lang)));
  $('apps-none').hidden = apps.length > 0;
}

/// A time as the viewer reads dates.
function when(ts, lang) {
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts || '') : d.toLocaleString(lang === 'pt' ? 'pt-BR' : 'en');
}

/// What went wrong, in words: the API's error codes mapped to sentences, the server's own
/// message only for what has no sentence of its own.
export function plainError(err, t, slug) {
  const path = `/apps/${slug}`;
  switch (err.code) {
    case 'slug_taken':
      return t('apps.err.slug_taken', { path });
    case 'invalid_slug':
      return t('apps.err.invalid_slug', { slug });
    case 'invalid_fields':
      return t('apps.err.empty');
    case 'forbidden':
      return t('apps.err.forbidden');
    case 'not_found':
    case 'gone':
      return t('apps.err.missing');
    default:
      return t('apps.err.other', { message: err.message });
  }
}

/// One app: its names and address, and what can be done with it.
function item(app, t, lang) {
  const box = el('li', { class: `app-item${app.published ? '' : ' unpublished'}` });
  box.dataset.slug = app.slug;
  const headId = `app-h-${app.slug}`;
  box.setAttribute('aria-labelledby', headId);
  const head = el('h3', { id: headId, class: 'app-title' });
  if (app.published) {
    head.append(el('a', { href: app.url_path, target: '_blank', rel: 'noopener' }, app.title));
  } else {
    head.append(el('span', {}, app.title), el('span', { class: 'badge gone' }, t('apps.unpublished')));
  }
  const facts = el('p', { class: 'app-facts muted' });
  facts.append(
    el('code', { class: 'app-slug' }, app.url_path),
    document.createTextNode(' · '),
    el('span', {}, app.published ? t('apps.published_at', { when: when(app.created_at, lang) })
      : t('apps.unpublished_at', { when: when(app.unpublished_at, lang) })),
  );
  box.append(head, el('p', { class: 'app-description' }, app.description), facts);
  if (!app.published) return box;

  const actions = el('div', { class: 'app-actions' });
  const rename = el('button', { type: 'button', class: 'rename', 'aria-label': t('apps.rename_of', { title: app.title }) }, t('apps.rename'));
  const down = el('button', { type: 'button', class: 'unpublish', 'aria-label': t('apps.unpublish_of', { title: app.title }) }, t('apps.unpublish'));
  const relatedId = `app-related-${app.slug}`;
  const more = el('button', {
    type: 'button', class: 'related-toggle', 'aria-expanded': 'false', 'aria-controls': relatedId,
    'aria-label': t('apps.related_of', { title: app.title }),
  }, t('apps.related'));
  actions.append(rename, down, more);
  const related = el('section', { id: relatedId, class: 'app-related', 'aria-label': t('apps.related_of', { title: app.title }) });
  related.hidden = true;
  box.append(actions, related);

  rename.addEventListener('click', () => editor(box, app, t, lang, rename));
  down.addEventListener('click', () => confirmDown(box, app, t, lang, down));
  more.addEventListener('click', () => toggleRelated(app, related, more, t));
  return box;
}

/// The inline rename form, in place of the buttons until it is saved or given up.
function editor(box, app, t, lang, opener) {
  if (box.querySelector('form.app-edit')) return;
  const form = el('form', { class: 'app-edit', 'aria-label': t('apps.rename_of', { title: app.title }) });
  const field = (key, control) => {
    const id = `app-${key}-${app.slug}`;
    control.id = id;
    const label = el('label', { htmlFor: id }, t(`apps.field_${key}`));
    const wrap = el('div', { class: 'field' });
    wrap.append(label, control);
    return wrap;
  };
  const title = el('input', { type: 'text', name: 'title', value: app.title, maxLength: 100, required: true });
  const description = el('textarea', { name: 'description', value: app.description, rows: 2, maxLength: 300, required: true });
  const slug = el('input', { type: 'text', name: 'slug', value: app.slug, maxLength: 48, spellcheck: false, autocapitalize: 'off' });
  const hintId = `app-slug-hint-${app.slug}`;
  slug.setAttribute('aria-describedby', hintId);
  const slugField = field('slug', slug);
  slugField.append(el('span', { id: hintId, class: 'muted' }, t('apps.slug_hint')));
  const error = el('p', { class: 'error', role: 'alert' });
  const save = el('button', { type: 'submit' }, t('apps.save'));
  const cancel = el('button', { type: 'button' }, t('apps.cancel'));
  const row = el('div', { class: 'row' });
  row.append(save, cancel);
  form.append(field('title', title), field('description', description), slugField, row, error);
  const actions = box.querySelector('.app-actions');
  actions.hidden = true;
  actions.after(form);
  title.focus();

  const close = () => {
    form.remove();
    actions.hidden = false;
    opener.focus();
  };
  cancel.addEventListener('click', close);
  form.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') close();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const change = {};
    const newSlug = slug.value.trim();
    if (title.value.trim() !== app.title) change.title = title.value.trim();
    if (description.value.trim() !== app.description) change.description = description.value.trim();
    if (newSlug !== app.slug) change.slug = newSlug;
    if (Object.keys(change).length === 0) return close();
    error.textContent = '';
    save.disabled = true;
    try {
      const updated = await api(`/api/apps/${encodeURIComponent(app.slug)}`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(change),
      });
      const fresh = item(updated, t, lang);
      box.replaceWith(fresh);
      fresh.querySelector('button.rename')?.focus();
      say(t('apps.saved', { title: updated.title }));
    } catch (err) {
      error.textContent = plainError(err, t, newSlug);
      (err.code === 'slug_taken' || err.code === 'invalid_slug' ? slug : title).focus();
    } finally {
      save.disabled = false;
    }
  });
}

/// Ask before taking an app down: it cannot be brought back at that address by anyone.
function confirmDown(box, app, t, lang, opener) {
  if (box.querySelector('.app-confirm')) return;
  const ask = el('div', { class: 'app-confirm', role: 'group', 'aria-label': t('apps.unpublish_of', { title: app.title }) });
  const yes = el('button', { type: 'button', class: 'danger' }, t('apps.confirm_yes'));
  const no = el('button', { type: 'button' }, t('apps.keep'));
  const error = el('p', { class: 'error', role: 'alert' });
  const buttons = el('div', { class: 'row' });
  buttons.append(yes, no);
  ask.append(el('p', {}, t('apps.confirm', { title: app.title, path: app.url_path })), buttons, error);
  const actions = box.querySelector('.app-actions');
  actions.hidden = true;
  actions.after(ask);
  no.focus();
  const close = () => {
    ask.remove();
    actions.hidden = false;
    opener.focus();
  };
  no.addEventListener('click', close);
  ask.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') close();
  });
  yes.addEventListener('click', async () => {
    yes.disabled = true;
    try {
      const down = await api(`/api/apps/${encodeURIComponent(app.slug)}`, { method: 'DELETE' });
      const fresh = item(down, t, lang);
      box.replaceWith(fresh);
      fresh.setAttribute('tabindex', '-1');
      fresh.focus();
      say(t('apps.done_unpublish', { title: down.title }));
    } catch (err) {
      error.textContent = plainError(err, t, app.slug);
      yes.disabled = false;
    }
  });
}

/// Show or hide the apps most like this one, fetched each time it opens (others publish too).
async function toggleRelated(app, box, button, t) {
  const open = button.getAttribute('aria-expanded') !== 'true';
  button.setAttribute('aria-expanded', String(open));
  box.hidden = !open;
  if (!open) return;
  box.replaceChildren(el('p', { class: 'muted' }, t('dash.loading')));
  let full;
  try {
    full = await api(`/api/apps/${encodeURIComponent(app.slug)}`);
  } catch (err) {
    box.replaceChildren(el('p', { class: 'error', role: 'alert' }, plainError(err, t, app.slug)));
    return;
  }
  const related = full.related || [];
  if (related.length === 0) {
    box.replaceChildren(el('p', { class: 'muted' }, t('apps.related_none')));
    return;
  }
  const list = el('ul', { class: 'related-list' });
  for (const r of related) {
    const li = el('li');
    li.append(el('a', { href: r.url_path, target: '_blank', rel: 'noopener' }, r.title), el('span', { class: 'muted' }, ` — ${r.description}`));
    list.append(li);
  }
  box.replaceChildren(el('h4', {}, t('apps.related')), list);
}

/// A short note for screen readers and eyes alike, in the page's live region.
function say(text) {
  const box = el('div', { class: 'toast success', role: 'status' }, text);
  $('toasts').append(box);
  setTimeout(() => box.remove(), 4000);
}
