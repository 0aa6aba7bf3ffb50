const test = require('node:test');
const assert = require('node:assert');
const { createStopwatch, elapsedAt, start, stop, reset, lap, format, fastestAndSlowest } = require('../stopwatch.js');

test('a new stopwatch is stopped at zero with no laps', () => {
  const watch = createStopwatch();
  assert.strictEqual(watch.running, false);
  assert.strictEqual(elapsedAt(watch, 5000), 0);
  assert.deepStrictEqual(watch.laps, []);
});

test('start makes the time go up', () => {
  const watch = start(createStopwatch(), 1000);
  assert.strictEqual(watch.running, true);
  assert.strictEqual(elapsedAt(watch, 1000), 0);
  assert.strictEqual(elapsedAt(watch, 3500), 2500);
});

test('starting twice does not restart the time', () => {
  const once = start(createStopwatch(), 1000);
  const twice = start(once, 2000);
  assert.strictEqual(elapsedAt(twice, 3000), 2000);
});

test('stop keeps the time shown', () => {
  const watch = stop(start(createStopwatch(), 0), 1234);
  assert.strictEqual(watch.running, false);
  assert.strictEqual(elapsedAt(watch, 99999), 1234);
});

test('stopping a stopped stopwatch changes nothing', () => {
  const watch = createStopwatch();
  assert.strictEqual(stop(watch, 500), watch);
});

test('start after stop carries on from the same time', () => {
  let watch = start(createStopwatch(), 0);
  watch = stop(watch, 1000);
  watch = start(watch, 5000);
  assert.strictEqual(elapsedAt(watch, 5500), 1500);
});

test('the time never goes backwards if the clock does', () => {
  const watch = start(createStopwatch(), 1000);
  assert.strictEqual(elapsedAt(watch, 900), 0);
});

test('reset goes back to zero and clears the laps', () => {
  let watch = start(createStopwatch(), 0);
  watch = lap(watch, 1000);
  watch = reset(watch);
  assert.deepStrictEqual(watch, createStopwatch());
});

test('lap remembers each lap time and the total', () => {
  let watch = start(createStopwatch(), 0);
  watch = lap(watch, 1000);
  watch = lap(watch, 2500);
  assert.deepStrictEqual(watch.laps, [
    { number: 1, lap: 1000, total: 1000 },
    { number: 2, lap: 1500, total: 2500 },
  ]);
});

test('lap does nothing while stopped', () => {
  const watch = createStopwatch();
  assert.deepStrictEqual(lap(watch, 1000).laps, []);
});

test('laps count the time from before a stop', () => {
  let watch = start(createStopwatch(), 0);
  watch = stop(watch, 2000);
  watch = start(watch, 10000);
  watch = lap(watch, 11000);
  assert.deepStrictEqual(watch.laps, [{ number: 1, lap: 3000, total: 3000 }]);
});

test('actions do not change the stopwatch they were given', () => {
  const watch = start(createStopwatch(), 0);
  lap(watch, 1000);
  stop(watch, 2000);
  assert.strictEqual(watch.running, true);
  assert.deepStrictEqual(watch.laps, []);
});

test('format shows minutes, seconds and hundredths', () => {
  assert.strictEqual(format(0), '00:00.00');
  assert.strictEqual(format(9), '00:00.00');
  assert.strictEqual(format(10), '00:00.01');
  assert.strictEqual(format(1234), '00:01.23');
  assert.strictEqual(format(61005), '01:01.00');
  assert.strictEqual(format(3599999), '59:59.99');
});

test('format adds hours after an hour', () => {
  assert.strictEqual(format(3600000), '1:00:00.00');
  assert.strictEqual(format(3723450), '1:02:03.45');
});

test('format never shows a negative time', () => {
  assert.strictEqual(format(-500), '00:00.00');
  assert.strictEqual(format(NaN), '00:00.00');
});

test('fastestAndSlowest finds the quickest and the longest lap', () => {
  const laps = [
    { number: 1, lap: 3000, total: 3000 },
    { number: 2, lap: 2000, total: 5000 },
    { number: 3, lap: 4000, total: 9000 },
  ];
  assert.deepStrictEqual(fastestAndSlowest(laps), { fastest: 2, slowest: 3 });
});

test('fastestAndSlowest needs at least two laps', () => {
  assert.deepStrictEqual(fastestAndSlowest([]), { fastest: null, slowest: null });
  assert.deepStrictEqual(fastestAndSlowest([{ number: 1, lap: 100, total: 100 }]), { fastest: null, slowest: null });
});
