// The chat's Markdown and SSE modules under node's own test runner (run by
// `cargo test -p wright-webui`, tests/chat_modules.rs), against a small stand-in for the DOM
// that records exactly which elements and text nodes the modules make.
import test from 'node:test';
import assert from 'node:assert/strict';

class Text {
  constructor(data) {
    this.nodeType = 3;
    this.data = String(data);
  }
  get textContent() {
    return this.data;
  }
}

class Element {
  constructor(tag) {
    this.nodeType = 1;
    this.localName = tag;
    this.childNodes = [];
    this.attributes = {};
    this.className = '';
  }
  append(...nodes) {
    for (const n of nodes) this.childNodes.push(typeof n === 'string' ? new Text(n) : n);
  }
  replaceChildren(...nodes) {
    this.childNodes = [];
    this.append(...nodes);
  }
  setAttribute(k, v) {
    this.attributes[k] = String(v);
  }
  set textContent(v) {
    this.childNodes = v === '' ? [] : [new Text(v)];
  }
  get textContent() {
    return this.childNodes.map((c) => c.textContent).join('');
  }
}

globalThis.document = { createElement: (tag) => new Element(tag), createTextNode: (t) => new Text(t) };

const { renderMarkdown } = await import('../assets/markdown.js');
const { parseSse } = await import('../assets/sse.js');

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/// The tree as tags and escaped text, e.g. `<p>a <strong>b</strong></p>`.
function html(node) {
  if (node.nodeType === 3) return esc(node.data);
  const attrs = node.className ? { class: node.className } : {};
  Object.assign(attrs, node.attributes);
  for (const k of ['href', 'rel', 'target']) if (node[k]) attrs[k] = node[k];
  const list = Object.entries(attrs).map(([k, v]) => ` ${k}="${v}"`).join('');
  return `<${node.localName}${list}>${node.childNodes.map(html).join('')}</${node.localName}>`;
}

const md = (text) => html(renderMarkdown(text)).replace(/^<div class="md">|<\/div>$/g, '');

function all(node, tag, out = []) {
  if (node.nodeType === 1) {
    if (node.localName === tag) out.push(node);
    for (const c of node.childNodes) all(c, tag, out);
  }
  return out;
}

test('inline: bold, italic, struck, code; snake_case and lone stars stay', () => {
  assert.equal(md('Hello **bold**, *it*, ~~old~~ and `a<b`'), '<p>Hello <strong>bold</strong>, <em>it</em>, <del>old</del> and <code>a&lt;b</code></p>');
  assert.equal(md('*a **b** c*'), '<p><em>a <strong>b</strong> c</em></p>');
  assert.equal(md('snake_case_name and 2 * 3 * 4 and **open'), '<p>snake_case_name and 2 * 3 * 4 and **open</p>');
  assert.equal(md('\\*not italic\\*'), '<p>*not italic*</p>');
});

test('markup in the text is text: no element is made from it', () => {
  const root = renderMarkdown('<img src=x onerror="window.pwned=1"> <script>alert(1)</script> **ok**');
  assert.equal(all(root, 'img').length + all(root, 'script').length, 0);
  assert.equal(root.textContent, '<img src=x onerror="window.pwned=1"> <script>alert(1)</script> ok');
});

test('links: http(s) only, opened apart; any other address is plain text', () => {
  assert.equal(
    md('[docs](https://example.org/a?b=1) and [x](javascript:alert(1)) and [y](data:text/html,hi) and [z](/local)'),
    '<p><a href="https://example.org/a?b=1" rel="noopener noreferrer" target="_blank">docs</a> and x and y and z</p>',
  );
});

test('headings sit under the page’s own, paragraphs keep their lines', () => {
  assert.equal(md('# Title\n\nline one\nline two'), '<h3>Title</h3><p>line one<br></br>line two</p>');
  assert.equal(md('### Deep ###'), '<h5>Deep</h5>');
});

test('lists: bullets, numbers, nesting, a start number, items apart', () => {
  assert.equal(md('- a\n- b\n  - c\n\n1. x\n2. **y**'), '<ul><li>a</li><li>b<ul><li>c</li></ul></li></ul><ol><li>x</li><li><strong>y</strong></li></ol>');
  assert.equal(md('3. three\n4. four'), '<ol start="3"><li>three</li><li>four</li></ol>');
  assert.equal(md('- one\n\n- two'), '<ul><li>one</li><li>two</li></ul>');
});

test('fenced code is highlighted by its language, and never read as Markdown', () => {
  const out = md('```js\nconst a = "**x**"; // <b>\n```\nafter');
  assert.equal(
    out,
    '<div class="md-code"><span class="md-lang">js</span><pre class="code" tabindex="0"><code><span class="tok-keyword">const</span> a = <span class="tok-string">"**x**"</span>; <span class="tok-comment">// &lt;b&gt;</span></code></pre></div><p>after</p>',
  );
  assert.equal(md('```\nunclosed *x*'), '<div class="md-code"><pre class="code" tabindex="0"><code>unclosed *x*</code></pre></div>');
});

test('quotes, rules and tables', () => {
  assert.equal(md('> said *so*\n\n---'), '<blockquote><p>said <em>so</em></p></blockquote><hr></hr>');
  assert.equal(
    md('| a | b |\n|---|--:|\n| 1 | `2` |'),
    '<div class="md-table"><table><thead><tr><th>a</th><th class="align-right">b</th></tr></thead><tbody><tr><td>1</td><td class="align-right"><code>2</code></td></tr></tbody></table></div>',
  );
});

test('SSE blocks: events with ids and JSON, heartbeats, and what is left for later', () => {
  const { events, beats, rest } = parseSse('id: 3\nevent: text_delta\ndata: {"text":"hi"}\n\n: heartbeat\n\nid: 4\r\nevent: done\r\ndata: {}\r\n\r\nid: 5\nevent: tex');
  assert.deepEqual(events, [
    { id: 3, event: 'text_delta', data: { text: 'hi' } },
    { id: 4, event: 'done', data: {} },
  ]);
  assert.equal(beats, 1);
  assert.equal(rest, 'id: 5\nevent: tex');
});

test('parts: videos link to their pages with no outside pictures; errors, notes and unknown parts are text', async () => {
  const { renderPart } = await import('../assets/parts.js');
  const t = (k, v = {}) => (Object.keys(v).length ? `${k} ${JSON.stringify(v)}` : k);
  const ctx = { t, lang: 'en' };
  const videos = renderPart({ type: 'videos', query: 'cells', videos: [
    { id: '1', title: 'Cells', channel: 'Bio', url: 'https://www.youtube.com/watch?v=1', thumbnail: 'https://i.ytimg.com/vi/1/hq.jpg' },
    { id: '2', title: 'Odd <b>one</b>', channel: 'X', url: 'javascript:alert(1)' },
  ] }, ctx);
  assert.equal(all(videos, 'img').length, 0, 'no thumbnails: nothing is loaded from elsewhere');
  const links = all(videos, 'a');
  assert.deepEqual(links.map((a) => [a.textContent, a.href, a.target, a.rel]), [['Cells', 'https://www.youtube.com/watch?v=1', '_blank', 'noopener noreferrer']]);
  assert.match(videos.textContent, /Odd <b>one<\/b> · X/);
  const error = renderPart({ type: 'error', tool: 'quiz', message: 'timed out' }, ctx);
  assert.equal(error.textContent, '⚠ part.error {"tool":"quiz","message":"timed out"}');
  assert.equal(renderPart({ type: 'background_process', tool: 'flashcard_update', summary: 'Added “atom”.' }, ctx).textContent, 'ⓘ Added “atom”.');
  const unknown = renderPart({ type: 'hologram', beam: '<i>3</i>' }, ctx);
  assert.match(unknown.textContent, /^part\.unknown \{"type":"hologram"\}\{\n  "type": "hologram",\n  "beam": "<i>3<\/i>"\n\}$/);
  assert.equal(all(unknown, 'i').length, 0);
  // An MCP tool's answer is its text under its name, markup and all shown as text.
  const answered = renderPart({ type: 'tool_output', tool: 'mcp__docs__search', text: 'Found <script>x</script> **2**' }, ctx);
  assert.equal(answered.textContent, 'mcp__docs__searchFound <script>x</script> **2**');
  assert.equal(all(answered, 'script').length + all(answered, 'strong').length, 0);
});
