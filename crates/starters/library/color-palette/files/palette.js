// The palette's logic: small functions that take colour codes and give colour codes back.
// They know nothing about the page, so the tests can run them in Node.

// Keep a number between a lowest and a highest value (not-a-number becomes the lowest).
function clamp(value, min, max) {
  if (typeof value !== 'number' || Number.isNaN(value)) return min;
  return Math.min(max, Math.max(min, value));
}

// Read a colour code like "#3a7bd5", "3A7BD5" or the short "#fa0".
// Gives back { r, g, b } (0 to 255 each), or null when the text is not a colour code.
function parseHex(text) {
  if (typeof text !== 'string') return null;
  let code = text.trim().replace(/^#/, '');
  if (/^[0-9a-fA-F]{3}$/.test(code)) {
    code = code.split('').map(function (c) { return c + c; }).join('');
  }
  if (!/^[0-9a-fA-F]{6}$/.test(code)) return null;
  return {
    r: parseInt(code.slice(0, 2), 16),
    g: parseInt(code.slice(2, 4), 16),
    b: parseInt(code.slice(4, 6), 16),
  };
}

// Turn { r, g, b } into a colour code like "#3a7bd5" (values are rounded and kept in 0-255).
function toHex(rgb) {
  const part = function (n) {
    return Math.round(clamp(n, 0, 255)).toString(16).padStart(2, '0');
  };
  return '#' + part(rgb.r) + part(rgb.g) + part(rgb.b);
}

// Clean up a colour code: "#FA0" becomes "#ffaa00". Not a colour code: null.
function normalizeHex(text) {
  const rgb = parseHex(text);
  return rgb ? toHex(rgb) : null;
}

// Move a colour part of the way towards another: amount 0 keeps it, 1 gives the other.
function mix(rgb, target, amount) {
  const t = clamp(amount, 0, 1);
  return {
    r: rgb.r + (target.r - rgb.r) * t,
    g: rgb.g + (target.g - rgb.g) * t,
    b: rgb.b + (target.b - rgb.b) * t,
  };
}

// A lighter version of a colour (amount 0 to 1, 1 is white). Not a colour code: null.
function lighten(hex, amount) {
  const rgb = parseHex(hex);
  return rgb ? toHex(mix(rgb, { r: 255, g: 255, b: 255 }, amount)) : null;
}

// A darker version of a colour (amount 0 to 1, 1 is black). Not a colour code: null.
function darken(hex, amount) {
  const rgb = parseHex(hex);
  return rgb ? toHex(mix(rgb, { r: 0, g: 0, b: 0 }, amount)) : null;
}

// Red, green and blue to hue (0-360), saturation and lightness (0-1).
function rgbToHsl(rgb) {
  const r = rgb.r / 255;
  const g = rgb.g / 255;
  const b = rgb.b / 255;
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const l = (max + min) / 2;
  if (max === min) return { h: 0, s: 0, l: l };
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  let h;
  if (max === r) h = (g - b) / d + (g < b ? 6 : 0);
  else if (max === g) h = (b - r) / d + 2;
  else h = (r - g) / d + 4;
  return { h: h * 60, s: s, l: l };
}

// Hue, saturation and lightness back to red, green and blue.
function hslToRgb(hsl) {
  const h = (((hsl.h % 360) + 360) % 360) / 360;
  const s = clamp(hsl.s, 0, 1);
  const l = clamp(hsl.l, 0, 1);
  if (s === 0) return { r: l * 255, g: l * 255, b: l * 255 };
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const channel = function (t) {
    if (t < 0) t += 1;
    if (t > 1) t -= 1;
    if (t < 1 / 6) return p + (q - p) * 6 * t;
    if (t < 1 / 2) return q;
    if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
    return p;
  };
  return { r: channel(h + 1 / 3) * 255, g: channel(h) * 255, b: channel(h - 1 / 3) * 255 };
}

// The colour on the opposite side of the colour wheel (hue turned by 180 degrees).
// Greys have no hue, so a grey stays the same. Not a colour code: null.
function complementary(hex) {
  const rgb = parseHex(hex);
  if (!rgb) return null;
  const hsl = rgbToHsl(rgb);
  return toHex(hslToRgb({ h: hsl.h + 180, s: hsl.s, l: hsl.l }));
}

// Black or white, whichever is easier to read on top of the colour.
function textColorFor(hex) {
  const rgb = parseHex(hex);
  if (!rgb) return '#000000';
  const lin = function (c) {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  };
  const luminance = 0.2126 * lin(rgb.r) + 0.7152 * lin(rgb.g) + 0.0722 * lin(rgb.b);
  return luminance > 0.179 ? '#000000' : '#ffffff';
}

// The whole palette for a base colour: `steps` darker shades (darkest first), the base,
// `steps` lighter shades, then the complementary colour. Each swatch is
// { kind: 'darker' | 'base' | 'lighter' | 'complement', level, hex }.
// steps is kept between 1 and 5. Not a colour code: an empty list.
function generatePalette(hex, steps) {
  const base = normalizeHex(hex);
  if (!base) return [];
  const count = Math.round(clamp(Number(steps), 1, 5));
  const step = 0.8 / (count + 1);
  const swatches = [];
  for (let i = count; i >= 1; i--) {
    swatches.push({ kind: 'darker', level: i, hex: darken(base, step * i) });
  }
  swatches.push({ kind: 'base', level: 0, hex: base });
  for (let i = 1; i <= count; i++) {
    swatches.push({ kind: 'lighter', level: i, hex: lighten(base, step * i) });
  }
  swatches.push({ kind: 'complement', level: 0, hex: complementary(base) });
  return swatches;
}

// Put a palette at the top of the saved list: the same base colour is not kept twice,
// and the list keeps at most `max` palettes. Gives back a new list.
function addSaved(list, palette, max) {
  const base = normalizeHex(palette && palette.base);
  if (!base) return list.slice();
  const limit = Math.round(clamp(Number(max), 1, 100));
  const entry = { base: base, colors: (palette.colors || []).map(normalizeHex).filter(Boolean) };
  const others = list.filter(function (p) { return p.base !== base; });
  return [entry].concat(others).slice(0, limit);
}

// Take a palette out of the saved list by its base colour. Gives back a new list.
function removeSaved(list, base) {
  const code = normalizeHex(base);
  return list.filter(function (p) { return p.base !== code; });
}

// Read the saved list back from storage text. Broken or odd text gives an empty list,
// and palettes with bad colour codes are left out.
function parseSaved(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return [];
  }
  if (!Array.isArray(data)) return [];
  return data
    .filter(function (p) { return p && typeof p === 'object' && normalizeHex(p.base); })
    .map(function (p) {
      const colors = Array.isArray(p.colors) ? p.colors.map(normalizeHex).filter(Boolean) : [];
      return { base: normalizeHex(p.base), colors: colors };
    });
}

if (typeof module !== 'undefined') {
  module.exports = {
    clamp, parseHex, toHex, normalizeHex, mix, lighten, darken, rgbToHsl, hslToRgb,
    complementary, textColorFor, generatePalette, addSaved, removeSaved, parseSaved,
  };
}
