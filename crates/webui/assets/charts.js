// Small SVG charts drawn with DOM calls (no library, no markup strings): lines over days and
// bars. Each chart is an <svg role="img"> whose accessible name says what it shows, with a
// <title> per point or bar for the exact figure.

const SVG = 'http://www.w3.org/2000/svg';
const COLORS = ['#2456c9', '#1f7a3f', '#9a6200', '#b3261e', '#6b3fa0', '#00796b'];

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function frame(label, width, height) {
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label, class: 'chart' });
  root.append(svg('title', {}, label));
  return root;
}

/// Lines: series = [{name, points: [{x: label, y: number}]}], y in 0..max. `format` says a y.
export function lineChart(label, xs, series, { max = 1, format = (y) => String(y) } = {}) {
  const W = 560, H = 220, L = 44, R = 10, T = 12, B = 34;
  const root = frame(label, W, H);
  const x = (i) => L + (xs.length <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (xs.length - 1));
  const y = (v) => T + (1 - Math.min(v, max) / max) * (H - T - B);
  for (const tick of [0, 0.5, 1]) {
    root.append(svg('line', { x1: L, x2: W - R, y1: y(tick * max), y2: y(tick * max), class: 'grid' }));
    root.append(svg('text', { x: L - 6, y: y(tick * max) + 4, 'text-anchor': 'end', class: 'axis' }, format(tick * max)));
  }
  xs.forEach((d, i) => {
    if (xs.length <= 8 || i % Math.ceil(xs.length / 8) === 0) {
      root.append(svg('text', { x: x(i), y: H - 12, 'text-anchor': 'middle', class: 'axis' }, d.slice(5)));
    }
  });
  series.forEach((s, n) => {
    const color = COLORS[n % COLORS.length];
    const pts = s.points.filter((p) => p.y !== null).map((p) => [x(xs.indexOf(p.x)), y(p.y), p]);
    if (pts.length > 1) {
      root.append(svg('polyline', { points: pts.map(([a, b]) => `${a},${b}`).join(' '), fill: 'none', stroke: color, 'stroke-width': 2 }));
    }
    for (const [a, b, p] of pts) {
      const dot = svg('circle', { cx: a, cy: b, r: 3.5, fill: color });
      dot.append(svg('title', {}, `${s.name} · ${p.x}: ${format(p.y)}`));
      root.append(dot);
    }
  });
  return root;
}

/// Bars: items = [{label, value}], vertical unless `horizontal`.
export function barChart(label, items, { format = (v) => String(v), horizontal = false } = {}) {
  const max = Math.max(1e-9, ...items.map((i) => i.value));
  if (horizontal) {
    const W = 560, row = 24, L = 150, R = 60;
    const H = Math.max(row, items.length * row) + 8;
    const root = frame(label, W, H);
    items.forEach((it, i) => {
      const w = ((W - L - R) * it.value) / max;
      root.append(svg('text', { x: L - 8, y: i * row + 17, 'text-anchor': 'end', class: 'axis' }, it.label));
      const bar = svg('rect', { x: L, y: i * row + 4, width: Math.max(1, w), height: row - 8, fill: COLORS[0], rx: 3 });
      bar.append(svg('title', {}, `${it.label}: ${format(it.value)}`));
      root.append(bar);
      root.append(svg('text', { x: L + w + 6, y: i * row + 17, class: 'axis' }, format(it.value)));
    });
    return root;
  }
  const W = 560, H = 200, L = 10, T = 16, B = 30;
  const root = frame(label, W, H);
  const slot = (W - L * 2) / Math.max(1, items.length);
  items.forEach((it, i) => {
    const h = ((H - T - B) * it.value) / max;
    const bar = svg('rect', { x: L + i * slot + slot * 0.15, y: H - B - h, width: slot * 0.7, height: Math.max(0, h), fill: COLORS[0], rx: 3 });
    bar.append(svg('title', {}, `${it.label}: ${format(it.value)}`));
    root.append(bar);
    root.append(svg('text', { x: L + i * slot + slot / 2, y: H - 12, 'text-anchor': 'middle', class: 'axis' }, it.label));
    root.append(svg('text', { x: L + i * slot + slot / 2, y: H - B - h - 4, 'text-anchor': 'middle', class: 'axis' }, format(it.value)));
  });
  return root;
}
