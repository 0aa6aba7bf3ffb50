// Server-sent events read from a fetch() body, for streams EventSource cannot open (a POST's
// answer) or should not (resuming with our own backoff). Each block's `id:`, `event:` and
// `data:` lines become {id, event, data}; a block with only comments is a heartbeat.

/// Cut the complete blocks off `buffer`: {events: [{id, event, data}], beats, rest}. `data` is
/// the parsed JSON (or the raw text when it is not JSON); `id` a number when it is one.
export function parseSse(buffer) {
  const events = [];
  let beats = 0;
  let rest = buffer.replace(/\r\n?/g, '\n');
  let end;
  while ((end = rest.indexOf('\n\n')) >= 0) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let id = null;
    let event = 'message';
    const data = [];
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith(':') || line === '') continue;
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      fields += 1;
      if (name === 'id') id = /^\d+$/.test(value) ? Number(value) : value;
      else if (name === 'event') event = value;
      else if (name === 'data') data.push(value);
    }
    if (fields === 0 || data.length === 0) {
      beats += 1;
      continue;
    }
    const text = data.join('\n');
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    events.push({ id, event, data: parsed });
  }
  return { events, beats, rest };
}

/// Read `response`'s body as SSE until it ends: onEvent({id, event, data}) per event, onBeat()
/// per heartbeat (a sign of life). Resolves when the stream ends; rejects when it breaks.
export async function readSse(response, { onEvent, onBeat = () => {} }) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const { events, beats, rest } = parseSse(buffer);
    buffer = rest;
    for (let i = 0; i < beats; i += 1) onBeat();
    if (value) onBeat();
    for (const e of events) {
      if (onEvent(e) === false) {
        reader.cancel().catch(() => {});
        return;
      }
    }
  }
}
