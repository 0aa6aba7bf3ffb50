// A small syntax highlighter for what wright writes (JavaScript, HTML, CSS, JSON, Python):
// the text is cut into tokens by one regular expression per language and each token becomes a
// <span> whose text is set with textContent, so highlighted code can never become markup.

const JS_KEYWORDS = 'async|await|break|case|catch|class|const|continue|default|delete|do|else|export|extends|finally|for|from|function|if|import|in|instanceof|let|new|of|return|static|super|switch|this|throw|try|typeof|var|void|while|yield|true|false|null|undefined';
const PY_KEYWORDS = 'and|as|assert|async|await|break|class|continue|def|del|elif|else|except|finally|for|from|global|if|import|in|is|lambda|nonlocal|not|or|pass|raise|return|try|while|with|yield|True|False|None';

const RULES = {
  js: [
    ['comment', /\/\/[^\n]*|\/\*[\s\S]*?\*\//y],
    ['string', /`(?:\\[\s\S]|[^`\\])*`|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/y],
    ['number', /\b\d+(?:\.\d+)?\b/y],
    ['keyword', new RegExp(`\\b(?:${JS_KEYWORDS})\\b`, 'y')],
  ],
  py: [
    ['comment', /#[^\n]*/y],
    ['string', /"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/y],
    ['number', /\b\d+(?:\.\d+)?\b/y],
    ['keyword', new RegExp(`\\b(?:${PY_KEYWORDS})\\b`, 'y')],
  ],
  css: [
    ['comment', /\/\*[\s\S]*?\*\//y],
    ['string', /"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/y],
    ['keyword', /[.#]?[a-zA-Z][\w-]*(?=\s*[{,])/y],
    ['attr', /[a-z-]+(?=\s*:)/y],
    ['number', /#[0-9a-fA-F]{3,8}\b|\b\d+(?:\.\d+)?(?:px|rem|em|%|vh|vw|s|ms)?\b/y],
  ],
  html: [
    ['comment', /<!--[\s\S]*?-->/y],
    ['keyword', /<\/?[a-zA-Z][\w-]*|\/?>/y],
    ['string', /"[^"]*"|'[^']*'/y],
    ['attr', /\b[a-zA-Z-]+(?==)/y],
  ],
  json: [
    ['attr', /"(?:\\.|[^"\\\n])*"(?=\s*:)/y],
    ['string', /"(?:\\.|[^"\\\n])*"/y],
    ['number', /-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b/y],
    ['keyword', /\b(?:true|false|null)\b/y],
  ],
};

/// The language of a file, from its name.
export function languageOf(path) {
  const ext = String(path).split('.').pop().toLowerCase();
  if (['js', 'mjs', 'cjs', 'jsx', 'ts', 'tsx'].includes(ext)) return 'js';
  if (['html', 'htm', 'svg'].includes(ext)) return 'html';
  if (ext === 'css') return 'css';
  if (ext === 'json') return 'json';
  if (ext === 'py') return 'py';
  return null;
}

/// The language called `name` (a Markdown fence's info string, a code part's `language`), if
/// there are rules for it.
export function languageNamed(name) {
  const n = String(name || '').trim().toLowerCase();
  if (['js', 'javascript', 'jsx', 'ts', 'typescript', 'tsx', 'mjs', 'cjs', 'node', 'nodejs'].includes(n)) return 'js';
  if (['html', 'htm', 'xml', 'svg', 'xhtml'].includes(n)) return 'html';
  if (['css', 'scss'].includes(n)) return 'css';
  if (['json', 'jsonc'].includes(n)) return 'json';
  if (['py', 'python', 'python3'].includes(n)) return 'py';
  return null;
}

/// Cut `text` into [kind, piece] pairs (kind null for plain text).
export function tokens(text, lang) {
  const rules = RULES[lang];
  if (!rules) return [[null, text]];
  const out = [];
  let plain = '';
  let i = 0;
  outer: while (i < text.length) {
    for (const [kind, re] of rules) {
      re.lastIndex = i;
      const m = re.exec(text);
      if (m && m[0].length > 0) {
        if (plain) out.push([null, plain]);
        plain = '';
        out.push([kind, m[0]]);
        i += m[0].length;
        continue outer;
      }
    }
    plain += text[i];
    i += 1;
  }
  if (plain) out.push([null, plain]);
  return out;
}

/// Fill `el` with the highlighted text: spans made with textContent only.
export function highlightInto(el, text, path) {
  fill(el, text, languageOf(path));
}

/// Fill `el` with `text` highlighted as the language called `name` (plain when unknown).
export function highlightNamed(el, text, name) {
  fill(el, text, languageNamed(name));
}

function fill(el, text, lang) {
  el.replaceChildren();
  for (const [kind, piece] of tokens(text, lang)) {
    if (kind) {
      const span = document.createElement('span');
      span.className = `tok-${kind}`;
      span.textContent = piece;
      el.append(span);
    } else {
      el.append(document.createTextNode(piece));
    }
  }
}
