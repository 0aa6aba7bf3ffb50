// The timer's logic: small functions that take numbers and give numbers back.
// They know nothing about the page, so the tests can run them in Node.

// Keep a number between a lowest and a highest value.
function clamp(value, min, max) {
  if (Number.isNaN(value)) return min;
  return Math.min(max, Math.max(min, value));
}

// Turn what was typed in one box into a whole number between min and max.
// Empty boxes, words and negative numbers become min.
function parseNumber(text, min, max) {
  const cleaned = String(text === undefined || text === null ? '' : text).trim().replace(',', '.');
  if (cleaned === '') return min;
  const value = Number(cleaned);
  if (!Number.isFinite(value)) return min;
  return clamp(Math.floor(value), min, max);
}

// Turn the minutes and seconds boxes into a number of seconds.
// Minutes go from 0 to 999, seconds from 0 to 59.
function parseInput(minutesText, secondsText) {
  const minutes = parseNumber(minutesText, 0, 999);
  const seconds = parseNumber(secondsText, 0, 59);
  return minutes * 60 + seconds;
}

// Split a number of seconds into minutes and seconds.
function toParts(totalSeconds) {
  const total = Math.max(0, Math.floor(totalSeconds) || 0);
  return { minutes: Math.floor(total / 60), seconds: total % 60 };
}

// Show a number of seconds as mm:ss, e.g. 65 -> "01:05".
function format(totalSeconds) {
  const parts = toParts(totalSeconds);
  const mm = String(parts.minutes).padStart(2, '0');
  const ss = String(parts.seconds).padStart(2, '0');
  return mm + ':' + ss;
}

// One second passes: one second less, but never below zero.
function tick(remaining) {
  return Math.max(0, remaining - 1);
}

// Is the timer in its last seconds (but not finished yet)?
function isWarning(remaining, warningSeconds) {
  return remaining > 0 && remaining <= warningSeconds;
}

// Has the timer reached zero?
function isDone(remaining) {
  return remaining <= 0;
}

if (typeof module !== 'undefined') {
  module.exports = { clamp, parseNumber, parseInput, toParts, format, tick, isWarning, isDone };
}
