// Markdown a model wrote, made into elements one by one (createElement and textContent only):
// paragraphs, headings, **bold**, *italic*, ~~struck~~, `code`, fenced code blocks (highlighted),
// bullet and numbered lists (nested by indent), quotes, tables, rules, and links. Nothing in the
// text is ever read as HTML: `<img onerror=…>` stays those characters. A link becomes an <a>
// only for an absolute http(s) address (opened apart, rel=noopener); any other is plain text.

import { highlightNamed } from './highlight.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])(\s+|$)/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

const blank = (line) => /^\s*$/.test(line);
const indentOf = (line) => line.match(/^\s*/)[0].replace(/\t/g, '    ').length;

function node(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/// `text` as Markdown, in a new <div class="md">.
export function renderMarkdown(text) {
  const root = node('div', 'md');
  blocks(String(text ?? '').replace(/\r\n?/g, '\n').split('\n'), root, false);
  return root;
}

/// A line that starts a block other than a paragraph (it ends a paragraph above it).
function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
}

/// The block-level elements of `lines`, appended to `parent`. `tight`: paragraphs go in as
/// their inline content (a list item's text), not as <p>.
function blocks(lines, parent, tight) {
  let i = 0;
  let paragraphs = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (blank(line)) {
      i += 1;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[0].repeat(fence.length))) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1; // the closing fence (or the end)
      parent.append(codeBlock(body.join('\n'), m[2]));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      // A message sits under the page's own headings: its # is a small heading.
      const level = Math.min(m[1].length + 2, 6);
      const h = node(`h${level}`);
      inline(m[2], h);
      parent.append(h);
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      parent.append(node('hr'));
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && !blank(lines[i]) && (QUOTE.test(lines[i]) || !startsBlock(lines[i]))) {
        inner.push(lines[i].replace(QUOTE, ''));
        i += 1;
      }
      const quote = node('blockquote');
      blocks(inner, quote, false);
      parent.append(quote);
      continue;
    }
    if (ITEM.test(line)) {
      i = list(lines, i, parent);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      i = table(lines, i, parent);
      continue;
    }
    const para = [line];
    i += 1;
    while (i < lines.length && !blank(lines[i]) && !startsBlock(lines[i])) {
      para.push(lines[i]);
      i += 1;
    }
    if (tight) {
      if (paragraphs > 0) parent.append(node('br'));
      lineBroken(para, parent);
    } else {
      const p = node('p');
      lineBroken(para, p);
      parent.append(p);
    }
    paragraphs += 1;
  }
}

/// A paragraph's lines, a line break between each (as the model wrote them).
function lineBroken(lines, parent) {
  lines.forEach((l, k) => {
    if (k > 0) parent.append(node('br'));
    inline(l.trim(), parent);
  });
}

function codeBlock(text, lang) {
  const figure = node('div', 'md-code');
  if (lang) figure.append(node('span', 'md-lang', lang));
  const pre = node('pre', 'code');
  const code = node('code');
  highlightNamed(code, text, lang);
  pre.append(code);
  pre.setAttribute('tabindex', '0');
  figure.append(pre);
  return figure;
}

/// A list from line `i` (and the lists nested in it); the line after it.
function list(lines, i, parent) {
  const first = ITEM.exec(lines[i]);
  const indent = indentOf(first[1]);
  const ordered = /\d/.test(first[2]);
  const el = node(ordered ? 'ol' : 'ul');
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1) el.setAttribute('start', String(start));
  }
  while (i < lines.length) {
    // Items may stand apart by blank lines and still be one list.
    let next = i;
    while (next < lines.length && blank(lines[next])) next += 1;
    const m = ITEM.exec(lines[next] ?? '');
    if (!m || indentOf(m[1]) !== indent || /\d/.test(m[2]) !== ordered) break;
    i = next;
    const inner = [lines[i].slice(m[0].length)];
    const contentIndent = indent + m[2].length + 1;
    let loose = false;
    i += 1;
    while (i < lines.length) {
      const l = lines[i];
      if (blank(l)) {
        // A blank line continues the item only when an indented line follows it.
        let j = i + 1;
        while (j < lines.length && blank(lines[j])) j += 1;
        if (j < lines.length && indentOf(lines[j]) > indent) {
          loose = loose || !ITEM.test(lines[j]);
          for (; i < j; i += 1) inner.push('');
          continue;
        }
        break;
      }
      const lead = indentOf(l);
      if (lead > indent) {
        inner.push(l.replace(/^\s+/, ' '.repeat(Math.max(0, lead - contentIndent))));
        i += 1;
        continue;
      }
      if (startsBlock(l)) break;
      inner.push(l); // a lazy continuation of the item's paragraph
      i += 1;
    }
    const li = node('li');
    blocks(inner, li, !loose);
    el.append(li);
  }
  parent.append(el);
  return i;
}

function cells(line) {
  let t = line.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  const out = [];
  let cell = '';
  for (let k = 0; k < t.length; k += 1) {
    if (t[k] === '\\' && t[k + 1] === '|') {
      cell += '|';
      k += 1;
    } else if (t[k] === '|') {
      out.push(cell.trim());
      cell = '';
    } else {
      cell += t[k];
    }
  }
  out.push(cell.trim());
  return out;
}

function table(lines, i, parent) {
  const head = cells(lines[i]);
  const aligns = cells(lines[i + 1]).map((c) => (c.endsWith(':') ? (c.startsWith(':') ? 'center' : 'right') : ''));
  const wrap = node('div', 'md-table');
  const el = node('table');
  const thead = node('thead');
  const row = node('tr');
  head.forEach((c, k) => {
    const th = node('th');
    if (aligns[k]) th.className = `align-${aligns[k]}`;
    inline(c, th);
    row.append(th);
  });
  thead.append(row);
  el.append(thead);
  const tbody = node('tbody');
  i += 2;
  while (i < lines.length && !blank(lines[i]) && lines[i].includes('|')) {
    const tr = node('tr');
    const cs = cells(lines[i]);
    head.forEach((_, k) => {
      const td = node('td');
      if (aligns[k]) td.className = `align-${aligns[k]}`;
      inline(cs[k] ?? '', td);
      tr.append(td);
    });
    tbody.append(tr);
    i += 1;
  }
  el.append(tbody);
  wrap.append(el);
  parent.append(wrap);
  return i;
}

/// An absolute http(s) address, or null.
export function safeHref(href) {
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

const ESCAPABLE = /[\\`*_{}[\]()#+\-.!|>~<]/;
const word = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/// Where the closing `delim` of an emphasis opened at `from` is, or -1. The text between must
/// not be empty nor start or end with a space; runs of the other length are nested emphasis.
function closing(text, delim, from) {
  if (from >= text.length || /\s/.test(text[from])) return -1;
  const ch = delim[0];
  let k = from;
  while (k < text.length) {
    k = text.indexOf(ch, k);
    if (k < 0) return -1;
    let run = 1;
    while (text[k + run] === ch) run += 1;
    const fits = delim.length === 1 ? run === 1 : run >= 2;
    if (fits && k > from && !/\s/.test(text[k - 1]) && !(ch === '_' && word(text[k + run]))) return k;
    k += run;
  }
  return -1;
}

/// Inline Markdown of `text`, appended to `parent` as text nodes and elements.
export function inline(text, parent) {
  let plain = '';
  const flush = () => {
    if (plain) parent.append(document.createTextNode(plain));
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && ESCAPABLE.test(text[i + 1] || '')) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (text[i + n] === '`') n += 1;
      const fence = '`'.repeat(n);
      let close = text.indexOf(fence, i + n);
      while (close >= 0 && text[close + n] === '`') close = text.indexOf(fence, close + n + 1);
      if (close > i) {
        flush();
        let inner = text.slice(i + n, close);
        if (inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' ')) inner = inner.slice(1, -1);
        parent.append(node('code', '', inner));
        i = close + n;
        continue;
      }
      plain += fence;
      i += n;
      continue;
    }
    if ((c === '*' || c === '_' || c === '~') && !(c === '_' && word(text[i - 1]))) {
      const double = text[i + 1] === c;
      if (c === '~' && !double) {
        plain += c;
        i += 1;
        continue;
      }
      const delim = double ? c + c : c;
      const close = closing(text, delim, i + delim.length);
      if (close > 0) {
        flush();
        const el = node(c === '~' ? 'del' : double ? 'strong' : 'em');
        inline(text.slice(i + delim.length, close), el);
        parent.append(el);
        i = close + delim.length;
        continue;
      }
      plain += delim;
      i += delim.length;
      continue;
    }
    if (c === '[') {
      // [label](address "title"); an address may hold balanced parentheses.
      const m = /^\[((?:\\.|[^\]\\])*)\]\(\s*<?((?:[^\s()<>]|\([^\s()<>]*\))+)>?(?:\s+"[^"]*")?\s*\)/.exec(text.slice(i));
      if (m) {
        flush();
        const href = safeHref(m[2]);
        if (href) {
          const a = node('a');
          a.href = href;
          a.rel = 'noopener noreferrer';
          a.target = '_blank';
          inline(m[1], a);
          parent.append(a);
        } else {
          inline(m[1], parent);
        }
        i += m[0].length;
        continue;
      }
    }
    plain += c;
    i += 1;
  }
  flush();
}
