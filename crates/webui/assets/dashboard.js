// The admin dashboard: how builds are going across every user, drawn from the store through
// GET /api/admin/dashboard; lessons can be corrected or retired from here (PATCH /api/notes/{id});
// the periodic jobs' last runs and the servers sharing the store are listed at the end.

import { barChart, lineChart } from './charts.js';
import { $, api, el } from './dom.js';
import { usd } from './spend.js';

const pct = (v) => `${Math.round(v * 100)}%`;
const secs = (ms) => (ms == null ? '–' : `${(ms / 1000).toFixed(1)} s`);

function figure(title, chart) {
  const box = el('figure', { class: 'chart-box' });
  box.append(el('figcaption', {}, title), chart);
  return box;
}

/// Draw the dashboard into #dashboard; `t` translates.
export async function showDashboard(t) {
  const root = $('dashboard-body');
  root.replaceChildren(el('p', {}, t('dash.loading')));
  let d;
  try {
    d = await api('/api/admin/dashboard?days=30');
  } catch (err) {
    root.replaceChildren(el('p', { class: 'error', role: 'alert' }, err.message));
    return;
  }
  const s = d.stats;
  root.replaceChildren();

  const tiles = el('div', { class: 'tiles' });
  const tile = (label, value) => {
    const box = el('div', { class: 'tile' });
    box.append(el('span', { class: 'tile-value' }, value), el('span', { class: 'tile-label' }, label));
    tiles.append(box);
  };
  tile(t('dash.builds'), String(s.builds));
  tile(t('dash.success'), s.builds ? pct(s.published / s.builds) : '–');
  tile(t('dash.first_try'), s.builds ? pct(s.first_try / s.builds) : '–');
  tile(t('dash.p50'), secs(s.duration_p50_ms));
  tile(t('dash.p95'), secs(s.duration_p95_ms));
  tile(t('dash.cost'), `$${(s.tokens.cost_usd || 0).toFixed(2)}`);
  root.append(tiles);

  const charts = el('div', { class: 'charts' });
  // Success rate per template over time.
  const days = [...new Set(d.days.map((x) => x.day))].sort();
  const templates = [...new Set(d.days.map((x) => x.template))].sort();
  const series = templates.map((tpl) => ({
    name: tpl,
    points: days.map((day) => {
      const row = d.days.find((x) => x.day === day && x.template === tpl);
      return { x: day, y: row && row.builds ? row.published / row.builds : null };
    }),
  }));
  const trend = lineChart(t('dash.trend'), days, series, { max: 1, format: pct });
  const legend = el('ul', { class: 'legend' });
  templates.forEach((tpl, i) => legend.append(el('li', { class: `c${i % 6}` }, tpl)));
  const trendBox = figure(t('dash.trend'), trend);
  trendBox.append(legend);
  charts.append(trendBox);

  charts.append(
    figure(
      t('dash.fixes'),
      barChart(t('dash.fixes'), s.fix_histogram.map((n, i) => ({ label: String(i), value: n }))),
    ),
  );
  const perDay = days.map((day) => {
    const rows = d.days.filter((x) => x.day === day);
    return {
      label: day.slice(5),
      value: rows.reduce((a, r) => a + r.cost_usd, 0),
      tokens: rows.reduce((a, r) => a + r.input_tokens + r.output_tokens, 0),
    };
  });
  charts.append(figure(t('dash.cost_day'), barChart(t('dash.cost_day'), perDay, { format: (v) => `$${v.toFixed(3)}` })));
  charts.append(
    figure(t('dash.tokens_day'), barChart(t('dash.tokens_day'), perDay.map((p) => ({ label: p.label, value: p.tokens })), {
      format: (v) => (v >= 1000 ? `${(v / 1000).toFixed(1)}k` : String(v)),
    })),
  );
  charts.append(
    figure(
      t('dash.errors'),
      barChart(t('dash.errors'), d.error_kinds.map((k) => ({ label: k.kind, value: k.count })), { horizontal: true }),
    ),
  );
  root.append(charts);

  showSpendAndSeeds(root, d, t);
  const exps = el('section', { id: 'experiments' });
  root.append(exps);
  showExperiments(exps, t);

  root.append(el('h3', {}, t('dash.notes')));
  const table = el('table', { class: 'notes' });
  const head = el('tr');
  for (const h of ['dash.lesson', 'dash.confidence', 'dash.help_fail', 'dash.status', '']) head.append(el('th', {}, h ? t(h) : ''));
  table.append(el('thead'));
  table.firstChild.append(head);
  const body = el('tbody');
  for (const n of d.notes) body.append(noteRow(n, t));
  table.append(body);
  root.append(table);

  root.append(el('h3', {}, t('dash.maintenance')));
  root.append(
    simpleTable(
      'maintenance',
      ['dash.job', 'dash.last_run', 'dash.outcome', 'dash.detail'],
      (d.maintenance || []).map((j) => [
        j.name,
        when(j.last_finished || j.last_started),
        outcome(j, t),
        j.last_detail || '',
      ]),
      t,
    ),
  );

  // People's 👍/👎 (docs/feedback.md): builds overall and per experiment variant, and the
  // chat's replies per tool, one signal.
  const r = d.ratings || { builds: { up: 0, down: 0 }, by_variant: [], chat_by_tool: [] };
  root.append(el('h3', {}, t('dash.ratings')));
  const rows = [[t('dash.rated_builds'), '', String(r.builds.up), String(r.builds.down)]];
  for (const v of r.by_variant) rows.push([t('dash.rated_builds'), `${t('dash.variant')} ${v.name}`, String(v.up), String(v.down)]);
  for (const c of r.chat_by_tool) rows.push([t('dash.rated_chat'), c.name, String(c.up), String(c.down)]);
  root.append(simpleTable('ratings', ['dash.rated_what', 'dash.rated_which', 'dash.up', 'dash.down'], rows, t));

  root.append(el('h3', {}, t('dash.workers')));
  root.append(
    simpleTable(
      'workers',
      ['dash.worker', 'dash.host', 'dash.slots', 'dash.busy', 'dash.last_seen', 'dash.alive'],
      (d.workers || []).map((w) => [
        w.name,
        w.host,
        String(w.slots),
        String(w.busy),
        when(w.seen_at),
        w.alive ? t('dash.yes') : t('dash.no'),
      ]),
      t,
    ),
  );
}

/// A stored time in the viewer's locale ('–' when there is none).
function when(ts) {
  if (!ts) return '–';
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? ts : d.toLocaleString();
}

/// How a job's last run went: running now, fine, failed, or never run.
function outcome(j, t) {
  const running = j.last_started && (!j.last_finished || j.last_started > j.last_finished);
  if (running) return t('dash.running');
  if (j.last_ok === true) return t('dash.ok');
  if (j.last_ok === false) return t('dash.failed');
  return '–';
}

/// A table of text cells with translated headings; a line saying so when there are no rows.
function simpleTable(cls, heads, rows, t) {
  if (!rows.length) return el('p', { class: 'muted' }, t('dash.none'));
  const table = el('table', { class: cls });
  const head = el('tr');
  for (const h of heads) head.append(el('th', {}, t(h)));
  const thead = el('thead');
  thead.append(head);
  const body = el('tbody');
  for (const cells of rows) {
    const row = el('tr');
    for (const c of cells) row.append(el('td', {}, c));
    body.append(row);
  }
  table.append(thead, body);
  return table;
}

function noteRow(n, t) {
  const row = el('tr', { class: `note ${n.status.toLowerCase()}` });
  const lesson = el('td');
  const text = el('span', { class: 'lesson' }, n.lesson);
  lesson.append(el('strong', {}, n.trigger), el('br'), text);
  const conf = el('td');
  const meter = el('meter', { min: 0, max: 1, value: n.confidence, 'aria-label': t('dash.confidence') });
  conf.append(meter, document.createTextNode(` ${pct(n.confidence)}`));
  const actions = el('td', { class: 'note-actions' });
  const retire = el('button', { type: 'button' }, n.status.toLowerCase() === 'deprecated' ? t('dash.restore') : t('dash.deprecate'));
  retire.addEventListener('click', async () => {
    const status = n.status.toLowerCase() === 'deprecated' ? 'candidate' : 'deprecated';
    const updated = await patch(n.id, { status });
    if (updated) row.replaceWith(noteRow(updated, t));
  });
  const edit = el('button', { type: 'button' }, t('dash.edit'));
  edit.addEventListener('click', () => {
    const box = el('textarea', { value: n.lesson, rows: 3, 'aria-label': t('dash.lesson') });
    const save = el('button', { type: 'button' }, t('dash.save'));
    save.addEventListener('click', async () => {
      const updated = await patch(n.id, { lesson: box.value });
      if (updated) row.replaceWith(noteRow(updated, t));
    });
    lesson.replaceChildren(el('strong', {}, n.trigger), el('br'), box, save);
    box.focus();
  });
  actions.append(retire, edit);
  row.append(lesson, conf, el('td', {}, `${n.helpCount} / ${n.failCount}`), el('td', {}, n.status.toLowerCase()), actions);
  return row;
}

async function patch(id, body) {
  try {
    const note = await api(`/api/notes/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    $('dashboard-error').textContent = '';
    return note;
  } catch (err) {
    $('dashboard-error').textContent = err.message;
    return null;
  }
}

/// This month's spend per user and day (with caps and projections), and the seeds' metrics:
/// time to publish, note effectiveness and duration per day.
function showSpendAndSeeds(root, d, t) {
  const sp = d.spend;
  if (sp) {
    root.append(el('h3', {}, `${t('dash.spend')} (${sp.month}): ${usd(sp.cost_usd)} · ${t('dash.projected').toLowerCase()} ${usd(sp.projected_usd)}`));
    root.append(
      simpleTable(
        'spend',
        ['dash.user', 'dash.spent', 'dash.tokens', 'dash.calls', 'dash.projected', 'dash.cap'],
        sp.users.map((u) => [
          u.name || u.user_id,
          usd(u.cost_usd),
          String(u.tokens.input_tokens + u.tokens.output_tokens),
          String(u.calls),
          usd(u.projected_usd),
          u.cap_usd == null ? t('dash.no_cap') : `${usd(u.cap_usd)} (${Math.round((u.share_of_cap || 0) * 100)}%)`,
        ]),
        t,
      ),
    );
    const perDay = sp.days.map((x) => ({ label: x.day.slice(5), value: x.cost_usd }));
    const box = el('div', { class: 'charts' });
    box.append(figure(t('dash.spend_day'), barChart(t('dash.spend_day'), perDay, { format: (v) => `$${v.toFixed(3)}` })));
    const seeds = d.seeds;
    if (seeds && seeds.duration_per_day.length) {
      const dur = seeds.duration_per_day.map((x) => ({ label: x.day.slice(5), value: (x.mean_ms || 0) / 1000 }));
      box.append(figure(t('dash.duration_day'), barChart(t('dash.duration_day'), dur, { format: (v) => `${v.toFixed(1)} s` })));
    }
    root.append(box);
  }
  const seeds = d.seeds;
  if (!seeds) return;
  root.append(el('h3', {}, t('dash.seeds')));
  const tiles = el('div', { class: 'tiles' });
  const tile = (label, value) => {
    const b = el('div', { class: 'tile' });
    b.append(el('span', { class: 'tile-value' }, value), el('span', { class: 'tile-label' }, label));
    tiles.append(b);
  };
  const ttp = seeds.time_to_publish;
  tile(t('dash.ttp_p50'), secs(ttp.p50_ms));
  tile(t('dash.ttp_p95'), secs(ttp.p95_ms));
  tile(t('dash.ttp_p99'), secs(ttp.p99_ms));
  const n = seeds.note_effectiveness;
  const two = (v) => (v == null ? '–' : v.toFixed(2));
  tile(t('dash.note_conf'), `${two(n.published_confidence)} · ${two(n.failed_confidence)}`);
  const rate = (ok, all) => (all ? pct(ok / all) : '–');
  tile(t('dash.with_notes'), `${rate(n.published_with_notes, n.builds_with_notes)} · ${rate(n.published_without_notes, n.builds_without_notes)}`);
  root.append(tiles);
}

/// The online experiments (GET /api/admin/experiments): each arm's builds and rates with their
/// 95% intervals (as text and a small bar), the sample-ratio line and the verdict, with Start
/// and Stop buttons (docs/experiments.md).
async function showExperiments(box, t) {
  let list;
  try {
    list = await api('/api/admin/experiments');
  } catch (err) {
    box.replaceChildren(el('p', { class: 'error', role: 'alert' }, err.message));
    return;
  }
  box.replaceChildren(el('h3', {}, t('exp.title')));
  if (!list.length) box.append(el('p', { class: 'muted' }, t('exp.none')));
  const rate = (r) => (r.rate == null ? '–' : `${pct(r.rate)} [${pct(r.low)}–${pct(r.high)}]`);
  const bar = (r) => {
    const b = el('span', { class: 'exp-bar', role: 'img', 'aria-label': rate(r) });
    const fill = el('span', { class: 'exp-fill' });
    fill.style.width = `${Math.round((r.rate || 0) * 100)}%`;
    b.append(fill);
    return b;
  };
  const mean = (m, f) => (m.mean == null ? '–' : `${f(m.mean)} [${f(m.low)}–${f(m.high)}]`);
  for (const { experiment: e, report: r } of list) {
    const card = el('article', { class: 'experiment' });
    const promoted = e.promoted ? ` · ${t('exp.promoted')} ${e.promoted}` : '';
    card.append(el('h4', {}, `${e.name} · ${t(`exp.${e.state}`)}${promoted}`));
    const table = el('table', { class: 'arms' });
    const head = el('tr');
    for (const h of ['exp.arm', 'exp.builds', 'exp.published', 'exp.first_try', 'exp.thumbs', 'exp.cost']) head.append(el('th', {}, t(h)));
    const thead = el('thead');
    thead.append(head);
    const body = el('tbody');
    for (const a of r.arms) {
      const row = el('tr');
      const pub = el('td', {}, `${rate(a.published)} `);
      pub.append(bar(a.published));
      row.append(
        el('td', {}, `${a.name} (${a.weight})`),
        el('td', {}, String(a.n)),
        pub,
        el('td', {}, rate(a.first_try)),
        el('td', {}, rate(a.thumbs_up)),
        el('td', {}, mean(a.cost, (v) => `$${v.toFixed(3)}`)),
      );
      body.append(row);
    }
    table.append(thead, body);
    card.append(table);
    const srm = r.srm_warning || `${t('exp.srm')} p = ${r.srm_p.toFixed(3)}`;
    card.append(el('p', { class: r.srm_warning ? 'error srm' : 'muted srm' }, srm));
    card.append(el('p', { class: 'verdict' }, `${t('exp.verdict')}: ${r.verdict}`));
    const act = async (what, body) => {
      try {
        await api(`/api/admin/experiments/${encodeURIComponent(e.id)}/${what}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        showExperiments(box, t);
      } catch (err) {
        card.append(el('p', { class: 'error', role: 'alert' }, err.message));
      }
    };
    if (e.state === 'draft') card.append(el('button', { type: 'button', onclick: () => act('start', {}) }, t('exp.start')));
    if (e.state === 'running') {
      card.append(el('button', { type: 'button', onclick: () => act('stop', {}) }, t('exp.stop')));
      // Promotion: the winner becomes every new build's default (docs/experiments.md).
      for (const a of r.arms) {
        card.append(el('button', { type: 'button', class: 'promote', onclick: () => act('stop', { promote: a.name }) }, t('exp.promote', { name: a.name })));
      }
    }
    box.append(card);
  }
}
