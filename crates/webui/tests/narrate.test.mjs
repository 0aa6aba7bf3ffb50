// The page's narration of a build's end, in both languages: run by `cargo test -p wright-webui`
// (tests/narrate.rs) with node's own test runner.
import test from 'node:test';
import assert from 'node:assert/strict';
import { commandLine, describe, translator } from '../assets/narrate.js';
import { plainError } from '../assets/errors.js';

const done = { type: 'complete', success: true, files: ['index.html', 'app.js'], fix_attempts: 1, duration_ms: 4200 };

test('a page checked in a browser is said to work', () => {
  const line = describe({ ...done, browser_checked: true }, translator('en'));
  assert.equal(line.tone, 'success');
  assert.match(line.text, /^Finished: it works\. 2 file\(s\), 1 fix attempt\(s\), 4\.2 s\.$/);
});

test('a page nobody opened is never said to work, and the reason is given', () => {
  const reason = 'the browser could not start: the browser host exited before Chromium listened';
  for (const [lang, words] of [['en', /not opened in a browser/], ['pt', /não foi aberta num navegador/]]) {
    const line = describe({ ...done, browser_checked: false, browser_reason: reason }, translator(lang));
    assert.equal(line.tone, 'warning', lang);
    assert.match(line.text, words, lang);
    assert.ok(line.text.includes(reason), lang);
    assert.ok(!line.text.includes('it works') && !line.text.includes('funciona.'), lang);
  }
});

test('an older stream without the field reads as before', () => {
  assert.equal(describe(done, translator('en')).tone, 'success');
});

test('a failed build is a failure whatever the browser said', () => {
  const line = describe({ ...done, success: false, browser_checked: false, browser_reason: 'x' }, translator('en'));
  assert.equal(line.tone, 'error');
});

test('a build no starter fits says nothing was built, not how many fixes it tried', () => {
  for (const [lang, words] of [['en', /^Nothing was built/], ['pt', /^Nada foi construído/]]) {
    const line = describe({ ...done, success: false, files: [], fix_attempts: 0, end_reason: 'no_fitting_starter' }, translator(lang));
    assert.equal(line.tone, 'error', lang);
    assert.match(line.text, words, lang);
    assert.ok(!line.text.includes('fix'), lang);
  }
});

test('queue notices are typed events, worded in the viewer language', () => {
  const en = translator('en');
  const pt = translator('pt');
  assert.equal(describe({ type: 'queued', position: 0 }, en).text, 'Queued; a worker will take it next.');
  assert.equal(describe({ type: 'queued', position: 3 }, en).text, 'Queued behind 3 other build(s).');
  assert.equal(describe({ type: 'queued', position: 2 }, pt).text, 'Na fila atrás de 2 outra(s) construção(ões).');
  assert.equal(describe({ type: 'started', worker: 'w-1' }, pt).text, 'Um trabalhador começou a construção.');
  // A status line is shown as written: nothing is matched back out of English sentences.
  assert.equal(describe({ type: 'status', message: 'Queued behind 4 other builds.', level: 'info' }, pt).text, 'Queued behind 4 other builds.');
});

test('queue notices and restarts use the words the CLI and the server share', () => {
  for (const lang of ['en', 'pt']) {
    const t = translator(lang);
    for (const e of [
      { type: 'queued', position: 0 },
      { type: 'queued', position: 4 },
      { type: 'started', worker: 'host-w0' },
      { type: 'restarted', attempt: 2, reason: 'worker_lost' },
      { type: 'restarted', attempt: 3, reason: 'shutdown' },
    ]) {
      const line = describe(e, t);
      assert.ok(line.text && !line.text.includes('{') && !/^(queue|restarted)\./.test(line.text), `${lang} ${e.type}: ${line.text}`);
    }
  }
  assert.equal(describe({ type: 'queued', position: 4 }, translator('en')).text, 'Queued behind 4 other build(s).');
  assert.match(describe({ type: 'restarted', attempt: 2, reason: 'shutdown' }, translator('pt')).text, /tentativa 2/);
});

test("My apps words the API's refusals in plain words, in both languages", async () => {
  const { plainError } = await import('../assets/apps.js');
  const refusal = (code, message = 'the address `x` is taken; pick another') => Object.assign(new Error(message), { code });
  const en = translator('en');
  const pt = translator('pt');
  assert.equal(
    plainError(refusal('slug_taken'), en, 'dice-roller'),
    'The address /apps/dice-roller already belongs to another app. Pick another one.',
  );
  assert.equal(plainError(refusal('slug_taken'), pt, 'dice-roller'), 'O endereço /apps/dice-roller já é de outro app. Escolha outro.');
  assert.match(plainError(refusal('invalid_slug'), en, 'Bad Slug'), /^“Bad Slug” cannot be an address: use lower-case letters/);
  for (const code of ['slug_taken', 'invalid_slug', 'invalid_fields', 'forbidden', 'not_found', 'gone']) {
    const [a, b] = [plainError(refusal(code), en, 's'), plainError(refusal(code), pt, 's')];
    assert.ok(a !== b && !a.includes('{') && !b.includes('{') && !a.startsWith('apps.'), `${code}: ${a} / ${b}`);
    assert.ok(!a.includes('`'), `${code}: the server's own message is not shown: ${a}`);
  }
  // A refusal without words of its own still says what the server said.
  assert.equal(plainError(refusal('rate_limited', 'slow down'), en, 's'), 'That did not work: slow down');
  // Every word of the view is there in Portuguese too.
  for (const key of ['nav.apps', 'apps.title', 'apps.rename', 'apps.unpublish', 'apps.related', 'apps.confirm', 'apps.confirm_yes', 'apps.keep', 'apps.field_slug', 'apps.slug_hint', 'apps.none', 'apps.saved', 'apps.done_unpublish']) {
    assert.notEqual(pt(key), en(key), key);
    assert.ok(!pt(key).startsWith('apps.') && !pt(key).startsWith('nav.'), key);
  }
});

test('a task run is narrated as its tasks, and its end as a task run', () => {
  const [en, pt] = [translator('en'), translator('pt')];
  const started = { type: 'task_started', task: 'fix-add', kind: 'code_generation', description: 'add must add', position: 1, total: 2 };
  assert.equal(describe(started, en).text, 'Task 1 of 2: fix-add (code_generation) — add must add');
  assert.equal(describe(started, pt).text, 'Tarefa 1 de 2: fix-add (code_generation) — add must add');
  const failed = { type: 'task_finished', task: 'notes', status: 'failed', message: 'test -f NOTES.md exited 1', duration_ms: 20 };
  assert.deepEqual(describe(failed, en), { text: 'notes: failed. test -f NOTES.md exited 1', tone: 'error' });
  assert.equal(describe({ ...failed, status: 'not_run' }, pt).text, 'notes: não executada. test -f NOTES.md exited 1');
  assert.equal(describe({ ...failed, status: 'skipped' }, en).tone, 'success');
  // A task run's end says nothing of fix attempts or a browser.
  const end = { ...done, success: false, end_reason: 'tasks_failed' };
  assert.equal(describe(end, en, { kind: 'task' }).text, 'Not every task passed: see the tasks above.');
  assert.equal(describe({ ...done, duration_ms: 1500 }, en, { kind: 'task' }).text, 'Every task passed (1.5 s).');
  assert.match(describe(done, en, { kind: 'build' }).text, /^Finished/);
  for (const key of ['tasks.title', 'tasks.go', 'tasks.list', 'task.running', 'task.passed', 'task.failed', 'task.not_run', 'line.tasks.done']) {
    assert.notEqual(pt(key), en(key), key);
  }
});

test('a model that cannot be used is said kindly, the reason one click away', () => {
  const [en, pt] = [translator('en'), translator('pt')];
  const e = { type: 'error', message: en('model.unavailable'), detail: 'could not reach the provider: connection refused' };
  assert.deepEqual(describe(e, en), { text: e.message, tone: 'error', detail: e.detail });
  assert.match(en('model.unavailable'), /^I'm having trouble/);
  assert.match(pt('model.unavailable'), /^Estou com dificuldade/);
  assert.equal(pt('error.details'), 'Detalhes técnicos');
  // An error with no detail is said as it is.
  assert.equal(describe({ type: 'error', message: 'disk full' }, en).text, 'Error: disk full');
});

test('every refusal a learner can meet is said in plain words, in both languages', () => {
  const [en, pt] = [translator('en'), translator('pt')];
  const refused = (status, code, message, retryAfter = null) => Object.assign(new Error(message), { status, code, retryAfter });
  const creds = refused(422, 'prompt_credentials', 'the prompt asks to put your own password…');
  assert.match(plainError(creds, en).text, /^Your request asks to put your own password/);
  assert.match(plainError(creds, pt).text, /^Seu pedido pede para colocar sua própria senha/);
  assert.equal(plainError(creds, en).detail, creds.message, 'the server\'s words one click away');
  const hourly = refused(429, 'rate_limited', '20 explanations an hour; room again in 30 min', '1800');
  assert.equal(plainError(hourly, en).text, 'You have reached a limit for now. You can try again in 30 minute(s).');
  assert.equal(plainError(hourly, pt).text, 'Você chegou a um limite por enquanto. Pode tentar de novo em 30 minuto(s).');
  assert.equal(plainError(new TypeError('Failed to fetch'), pt).text.startsWith('Não foi possível falar com o wright'), true);
  assert.equal(plainError(refused(401, 'unauthorized', 'missing token'), en).text, 'You are signed out. Sign in again to go on.');
  assert.equal(plainError(refused(409, 'odd', 'something new'), en).text, 'That did not work: something new');
  const cap = refused(429, 'spending_cap', 'you have spent $5.10 of your $5.00 monthly spending cap', '86400');
  cap.details = { code: 'spending_cap', spent_usd: 5.1, cap_usd: 5, month: '2026-11', resets_at: '2026-12-01T00:00:00.000Z' };
  assert.equal(plainError(cap, en).text, 'You have used this month’s AI budget (US$ 5.10 of US$ 5.00). It starts again on 2026-12-01, or sooner if your teacher or an admin raises it.');
  assert.match(plainError(cap, pt).text, /^Você usou o orçamento de IA deste mês \(US\$ 5.10 de US\$ 5.00\)/);
  const asked = refused(429, 'rate_limited', 'at most 20 explanations an hour (20 used)', '600');
  asked.details = { limit: { route: 'explanations', limit: 20, used: 20, window_secs: 3600, retry_after_secs: 600 } };
  assert.equal(plainError(asked, en).text, 'You have asked 20 questions about code this hour, the most allowed. You can ask again in 10 minute(s).');
  assert.equal(plainError(asked, pt).text, 'Você fez 20 perguntas sobre código nesta hora, o máximo permitido. Pode perguntar de novo em 10 minuto(s).');
  // Every error sentence is in both languages, and differs.
  for (const key of ['err.offline', 'err.prompt_secret', 'err.limit', 'err.store', 'err.busy']) assert.notEqual(pt(key), en(key), key);
});

test('packages a program needs are narrated: fetched, from the cache, or refused with the reason', () => {
  const en = translator('en');
  const pt = translator('pt');
  const ready = { type: 'packages_ready', ecosystem: 'python', packages: ['six==1.16.0'], fetched: true, duration_ms: 900, bytes: 11000 };
  assert.equal(describe(ready, en).text, 'Fetched the packages it needs and installed them without network: six==1.16.0');
  assert.match(describe({ ...ready, fetched: false }, pt).text, /^Instalei do cache, sem rede.*six==1\.16\.0$/);
  assert.equal(describe({ ...ready, packages: [] }, en).text, "Set up the program's environment; it declares no packages.");
  const refused = {
    type: 'packages_refused',
    ecosystem: 'python',
    refusals: [{ file: 'requirements.txt', spec: 'git+https://example.invalid/x.git', reason: 'is a git source' }],
  };
  const line = describe(refused, en);
  assert.equal(line.tone, 'warning');
  assert.equal(line.text, 'Refused the package git+https://example.invalid/x.git (requirements.txt): is a git source');
});

test('a command is shown as it could be pasted into a shell', () => {
  const e = { command: 'sh', args: ['-c', 'exec go test -json "$1" 2>&1', 'sh', './...', "it's", '', '--junitxml=.wright/r.xml'] };
  assert.equal(commandLine(e), `sh -c 'exec go test -json "$1" 2>&1' sh ./... 'it'\\''s' '' --junitxml=.wright/r.xml`);
  assert.equal(commandLine({ command: 'node', args: ['--test'] }), 'node --test');
});
