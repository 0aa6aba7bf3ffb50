const test = require('node:test');
const assert = require('node:assert');
const {
  clamp, parseHex, toHex, normalizeHex, mix, lighten, darken, rgbToHsl, hslToRgb,
  complementary, textColorFor, generatePalette, addSaved, removeSaved, parseSaved,
} = require('../palette.js');

test('clamp keeps a number inside its limits', () => {
  assert.strictEqual(clamp(5, 0, 10), 5);
  assert.strictEqual(clamp(-3, 0, 10), 0);
  assert.strictEqual(clamp(300, 0, 255), 255);
  assert.strictEqual(clamp(NaN, 0, 10), 0);
  assert.strictEqual(clamp('7', 0, 10), 0, 'text is not a number');
});

test('parseHex reads long and short colour codes, with or without #', () => {
  assert.deepStrictEqual(parseHex('#3a7bd5'), { r: 58, g: 123, b: 213 });
  assert.deepStrictEqual(parseHex('3A7BD5'), { r: 58, g: 123, b: 213 });
  assert.deepStrictEqual(parseHex('#fa0'), { r: 255, g: 170, b: 0 });
  assert.deepStrictEqual(parseHex('  #000000 '), { r: 0, g: 0, b: 0 });
});

test('parseHex refuses what is not a colour code', () => {
  for (const bad of ['', '#', '#12', '#12345', '#1234567', '#ggg000', 'blue', 'rgb(0,0,0)', null, undefined, 42]) {
    assert.strictEqual(parseHex(bad), null, String(bad));
  }
});

test('toHex writes two lowercase digits per part, rounded and kept in 0-255', () => {
  assert.strictEqual(toHex({ r: 58, g: 123, b: 213 }), '#3a7bd5');
  assert.strictEqual(toHex({ r: 0, g: 5, b: 15 }), '#00050f');
  assert.strictEqual(toHex({ r: 300, g: -20, b: 127.6 }), '#ff0080');
});

test('normalizeHex cleans up codes and refuses bad ones', () => {
  assert.strictEqual(normalizeHex('#FA0'), '#ffaa00');
  assert.strictEqual(normalizeHex('ABCDEF'), '#abcdef');
  assert.strictEqual(normalizeHex('nope'), null);
});

test('mix moves part of the way and keeps the amount between 0 and 1', () => {
  const black = { r: 0, g: 0, b: 0 };
  const white = { r: 255, g: 255, b: 255 };
  assert.deepStrictEqual(mix(black, white, 0), black);
  assert.deepStrictEqual(mix(black, white, 1), white);
  assert.strictEqual(toHex(mix(black, white, 0.5)), '#808080');
  assert.deepStrictEqual(mix(black, white, 5), white);
  assert.deepStrictEqual(mix(black, white, -1), black);
});

test('lighten and darken go towards white and black', () => {
  assert.strictEqual(lighten('#000000', 0.5), '#808080');
  assert.strictEqual(lighten('#3a7bd5', 1), '#ffffff');
  assert.strictEqual(lighten('#3a7bd5', 0), '#3a7bd5');
  assert.strictEqual(darken('#ffffff', 0.5), '#808080');
  assert.strictEqual(darken('#3a7bd5', 1), '#000000');
  assert.strictEqual(lighten('not a colour', 0.5), null);
  assert.strictEqual(darken('', 0.5), null);
});

test('hsl conversions go there and back', () => {
  assert.deepStrictEqual(rgbToHsl({ r: 255, g: 0, b: 0 }), { h: 0, s: 1, l: 0.5 });
  const hsl = rgbToHsl({ r: 58, g: 123, b: 213 });
  assert.strictEqual(toHex(hslToRgb(hsl)), '#3a7bd5');
  assert.strictEqual(toHex(hslToRgb({ h: 120, s: 1, l: 0.5 })), '#00ff00');
  assert.strictEqual(toHex(hslToRgb({ h: 480, s: 1, l: 0.5 })), '#00ff00', 'hue wraps around');
});

test('complementary turns the hue halfway round the wheel', () => {
  assert.strictEqual(complementary('#ff0000'), '#00ffff');
  assert.strictEqual(complementary('#00ff00'), '#ff00ff');
  assert.strictEqual(complementary('#0000ff'), '#ffff00');
  assert.strictEqual(complementary(complementary('#3a7bd5')), '#3a7bd5');
  assert.strictEqual(complementary('#808080'), '#808080', 'a grey stays grey');
  assert.strictEqual(complementary('#zzzzzz'), null);
});

test('textColorFor picks readable text', () => {
  assert.strictEqual(textColorFor('#ffffff'), '#000000');
  assert.strictEqual(textColorFor('#ffe066'), '#000000');
  assert.strictEqual(textColorFor('#000000'), '#ffffff');
  assert.strictEqual(textColorFor('#1f3a93'), '#ffffff');
  assert.strictEqual(textColorFor('nope'), '#000000');
});

test('generatePalette gives darker shades, the base, lighter shades and the complement', () => {
  const p = generatePalette('#3A7BD5', 2);
  assert.strictEqual(p.length, 6);
  assert.deepStrictEqual(p.map((s) => s.kind), ['darker', 'darker', 'base', 'lighter', 'lighter', 'complement']);
  assert.deepStrictEqual(p.map((s) => s.level), [2, 1, 0, 1, 2, 0]);
  assert.strictEqual(p[2].hex, '#3a7bd5');
  assert.strictEqual(p[5].hex, complementary('#3a7bd5'));
  for (const s of p) assert.match(s.hex, /^#[0-9a-f]{6}$/);
  // From dark to light: each shade is brighter than the one before it.
  const brightness = (hex) => { const c = parseHex(hex); return c.r + c.g + c.b; };
  for (let i = 1; i < 5; i++) assert.ok(brightness(p[i].hex) > brightness(p[i - 1].hex), `shade ${i}`);
});

test('generatePalette keeps steps between 1 and 5 and refuses bad colours', () => {
  assert.strictEqual(generatePalette('#3a7bd5', 0).length, 4);
  assert.strictEqual(generatePalette('#3a7bd5', -3).length, 4);
  assert.strictEqual(generatePalette('#3a7bd5', 99).length, 12);
  assert.strictEqual(generatePalette('#3a7bd5', 'abc').length, 4);
  assert.deepStrictEqual(generatePalette('', 2), []);
  assert.deepStrictEqual(generatePalette('#12', 2), []);
  assert.deepStrictEqual(generatePalette(null, 2), []);
});

test('addSaved puts the newest first, never twice, and keeps the limit', () => {
  let list = [];
  list = addSaved(list, { base: '#111111', colors: ['#000000', '#111111'] }, 3);
  list = addSaved(list, { base: '#222222', colors: ['#222222'] }, 3);
  assert.deepStrictEqual(list.map((p) => p.base), ['#222222', '#111111']);
  list = addSaved(list, { base: '#111111', colors: ['#111111'] }, 3);
  assert.deepStrictEqual(list.map((p) => p.base), ['#111111', '#222222'], 'saved again moves to the top');
  list = addSaved(list, { base: '#333333', colors: [] }, 3);
  list = addSaved(list, { base: '#444444', colors: [] }, 3);
  assert.deepStrictEqual(list.map((p) => p.base), ['#444444', '#333333', '#111111']);
  const before = list.slice();
  assert.deepStrictEqual(addSaved(list, { base: 'oops', colors: [] }, 3), before, 'a bad colour is not saved');
  assert.deepStrictEqual(list, before, 'the old list is not changed');
});

test('removeSaved takes one palette out', () => {
  const list = [{ base: '#111111', colors: [] }, { base: '#222222', colors: [] }];
  assert.deepStrictEqual(removeSaved(list, '#111111').map((p) => p.base), ['#222222']);
  assert.deepStrictEqual(removeSaved(list, '#999999').length, 2);
  assert.strictEqual(list.length, 2);
});

test('parseSaved reads stored palettes and survives broken data', () => {
  const text = JSON.stringify([{ base: '#ABCDEF', colors: ['#000000', 'junk'] }, { base: 'nope' }, { base: '#bad' }, 7, null]);
  assert.deepStrictEqual(parseSaved(text), [{ base: '#abcdef', colors: ['#000000'] }, { base: '#bbaadd', colors: [] }], 'the short #bad is a real colour');
  assert.deepStrictEqual(parseSaved(''), []);
  assert.deepStrictEqual(parseSaved(null), []);
  assert.deepStrictEqual(parseSaved('{not json'), []);
  assert.deepStrictEqual(parseSaved('{"base":"#000000"}'), []);
});
