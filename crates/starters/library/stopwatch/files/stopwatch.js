// The stopwatch's logic. The stopwatch is a plain object:
//   { running, startedAt, elapsed, laps }
// Every action takes the stopwatch and the current time in milliseconds (`now`)
// and gives back a new stopwatch, so the tests can use any times they like.

// A new stopwatch: stopped, at zero, no laps.
function createStopwatch() {
  return { running: false, startedAt: 0, elapsed: 0, laps: [] };
}

// How many milliseconds the stopwatch shows at the time `now`.
function elapsedAt(watch, now) {
  if (!watch.running) return watch.elapsed;
  return watch.elapsed + Math.max(0, now - watch.startedAt);
}

// Start (or carry on after a stop). Starting a running stopwatch changes nothing.
function start(watch, now) {
  if (watch.running) return watch;
  return { running: true, startedAt: now, elapsed: watch.elapsed, laps: watch.laps };
}

// Stop, keeping the time shown. Stopping a stopped stopwatch changes nothing.
function stop(watch, now) {
  if (!watch.running) return watch;
  return { running: false, startedAt: 0, elapsed: elapsedAt(watch, now), laps: watch.laps };
}

// Back to zero, with no laps.
function reset() {
  return createStopwatch();
}

// Remember the time of a lap. Only while running.
// Each lap keeps its own time (`lap`) and the total time so far (`total`).
function lap(watch, now) {
  if (!watch.running) return watch;
  const total = elapsedAt(watch, now);
  const previous = watch.laps.length > 0 ? watch.laps[watch.laps.length - 1].total : 0;
  const newLap = { number: watch.laps.length + 1, lap: total - previous, total: total };
  return { running: true, startedAt: watch.startedAt, elapsed: watch.elapsed, laps: watch.laps.concat([newLap]) };
}

// Show milliseconds as mm:ss.hh (hundredths), or h:mm:ss.hh after an hour.
function format(ms) {
  const safe = Math.max(0, Math.floor(ms) || 0);
  const hundredths = Math.floor(safe / 10) % 100;
  const seconds = Math.floor(safe / 1000) % 60;
  const minutes = Math.floor(safe / 60000) % 60;
  const hours = Math.floor(safe / 3600000);
  const two = (n) => String(n).padStart(2, '0');
  const time = two(minutes) + ':' + two(seconds) + '.' + two(hundredths);
  return hours > 0 ? hours + ':' + time : time;
}

// The numbers of the fastest and slowest laps (null when there are fewer than two laps).
function fastestAndSlowest(laps) {
  if (laps.length < 2) return { fastest: null, slowest: null };
  let fastest = laps[0];
  let slowest = laps[0];
  for (const item of laps) {
    if (item.lap < fastest.lap) fastest = item;
    if (item.lap > slowest.lap) slowest = item;
  }
  return { fastest: fastest.number, slowest: slowest.number };
}

if (typeof module !== 'undefined') {
  module.exports = { createStopwatch, elapsedAt, start, stop, reset, lap, format, fastestAndSlowest };
}
