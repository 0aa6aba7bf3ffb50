// Diagrams drawn as pictures by Mermaid (MIT), which wright serves itself from its data dir
// (fetched once with npm by `cargo xtask setup` or `wright serve`; never a CDN). The renderer is
// loaded only when the first diagram appears. Its SVG goes into the page as an <img> of a data:
// address, never as markup, so nothing in a diagram can run or restyle the page.
//
// The page's policy allows no inline styles, and Mermaid lays a diagram out in a scratch <svg>
// that holds a <style> element and style attributes, then re-reads it with its sanitiser. While
// it draws, all of that is done the way the policy allows (a style element waits as a <desc>
// placeholder, a style attribute is set through the CSSOM or carried as a data attribute) and the
// styles are put back into the picture's text at the end, where they apply to the picture alone.
// When the renderer is missing, or the source does not parse, the source is shown instead.

const SRC = '/ui/vendor/mermaid.min.js';
const SVG_NS = 'http://www.w3.org/2000/svg';
const PLACEHOLDER = 'wright-mermaid-style:';

let loading = null;
let queue = Promise.resolve();
let count = 0;
/// Finished pictures by source, so a message drawn again (the final reply) is not re-rendered.
const pictures = new Map();

/// An error that says why a diagram is shown as its source: `missing` (no renderer on this
/// server), `failed` (the source did not parse, or no picture came of it).
function failure(why, detail) {
  const err = new Error(detail || why);
  err.why = why;
  return err;
}

/// The renderer, loaded once (a rejected promise when it is not on this server).
export function loadMermaid() {
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      if (globalThis.mermaid) {
        resolve(globalThis.mermaid);
        return;
      }
      const script = document.createElement('script');
      script.src = SRC;
      script.async = true;
      script.addEventListener('load', () =>
        globalThis.mermaid ? resolve(globalThis.mermaid) : reject(failure('missing', 'the renderer did not start')));
      script.addEventListener('error', () => reject(failure('missing', 'the renderer is not on this server')));
      document.head.append(script);
    }).then((mermaid) => {
      mermaid.initialize({
        startOnLoad: false,
        securityLevel: 'strict',
        suppressErrorRendering: true,
        theme: 'neutral',
        htmlLabels: false,
        flowchart: { htmlLabels: false },
        fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
      });
      return mermaid;
    });
  }
  return loading;
}

/// Run `draw` with style elements and style attributes set as the page's policy allows.
async function withoutInlineStyles(draw) {
  const proto = Node.prototype;
  const el = Element.prototype;
  const parser = DOMParser.prototype;
  const saved = {
    insertBefore: proto.insertBefore,
    appendChild: proto.appendChild,
    setAttribute: el.setAttribute,
    setAttributeNS: el.setAttributeNS,
    parseFromString: parser.parseFromString,
  };
  const swap = (node) => {
    if (node && node.nodeType === 1 && node.localName === 'style') {
      const stand = document.createElementNS(SVG_NS, 'desc');
      stand.textContent = PLACEHOLDER + node.textContent;
      return stand;
    }
    return node;
  };
  proto.insertBefore = function insertBefore(node, ref) {
    return saved.insertBefore.call(this, swap(node), ref);
  };
  proto.appendChild = function appendChild(node) {
    return saved.appendChild.call(this, swap(node));
  };
  el.setAttribute = function setAttribute(name, value) {
    if (String(name).toLowerCase() === 'style' && this.style) {
      this.style.cssText = String(value);
      return undefined;
    }
    return saved.setAttribute.call(this, name, value);
  };
  el.setAttributeNS = function setAttributeNS(ns, name, value) {
    if (!ns && String(name).toLowerCase() === 'style' && this.style) {
      this.style.cssText = String(value);
      return undefined;
    }
    return saved.setAttributeNS.call(this, ns, name, value);
  };
  // The sanitiser re-reads the drawing as markup in a document of its own, which is under the
  // page's policy too: its style attributes travel as data attributes (put back in the picture).
  parser.parseFromString = function parseFromString(text, type) {
    return saved.parseFromString.call(this, String(text).replace(/ style="/g, ' data-wright-style="'), type);
  };
  try {
    return await draw();
  } finally {
    Object.assign(proto, { insertBefore: saved.insertBefore, appendChild: saved.appendChild });
    Object.assign(el, { setAttribute: saved.setAttribute, setAttributeNS: saved.setAttributeNS });
    parser.parseFromString = saved.parseFromString;
  }
}

/// Mermaid's SVG text as a picture: {src, width, height}. Worked on as text (a parsed copy would
/// be a document under the page's policy too): the stylesheet put back, the size made explicit.
export function pictureOf(svgText) {
  let text = String(svgText)
    .replace(/data-wright-style="/g, 'style="')
    .replace(/<desc[^>]*>wright-mermaid-style:([\s\S]*?)<\/desc>/g, (_, css) => `<style>${css}</style>`)
    // What HTML writes and XML does not read.
    .replace(/&nbsp;/g, '&#160;')
    .replace(/\sxlink:href=/g, ' href=');
  const open = /^\s*<svg\b[^>]*>/.exec(text);
  if (!open) throw failure('failed', 'the renderer gave no picture');
  const box = (/\sviewBox="([^"]*)"/.exec(open[0])?.[1] || '').trim().split(/[\s,]+/).map(Number);
  let [width, height] = [box[2], box[3]];
  if (!(width > 0 && height > 0)) {
    width = parseFloat(/\swidth="([\d.]+)"/.exec(open[0])?.[1]) || 600;
    height = parseFloat(/\sheight="([\d.]+)"/.exec(open[0])?.[1]) || 400;
  }
  [width, height] = [Math.ceil(width), Math.ceil(height)];
  const tag = open[0]
    .trim()
    .replace(/\s(style|width|height)="[^"]*"/g, '')
    .replace(/^<svg\b/, `<svg width="${width}" height="${height}"`);
  text = tag + text.slice(open[0].length);
  return { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`, width, height };
}

/// Draw `source` (one at a time: Mermaid keeps state while it draws). Resolves to a picture.
export function draw(source) {
  if (pictures.has(source)) return pictures.get(source);
  const job = queue.then(async () => {
    const mermaid = await loadMermaid();
    count += 1;
    let svg;
    try {
      ({ svg } = await withoutInlineStyles(() => mermaid.render(`wright-diagram-${count}`, source)));
    } catch (err) {
      throw failure('failed', err?.message);
    }
    return pictureOf(svg);
  });
  queue = job.catch(() => {});
  pictures.set(source, job);
  job.catch(() => pictures.delete(source));
  return job;
}
