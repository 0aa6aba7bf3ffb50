// Following a build's events: from `after` on, in order, each event once, across any number
// of dropped connections. The stream is read with fetch (not EventSource) so the heartbeat
// comments count as signs of life: a connection that goes silent (a laptop lid closed, a
// proxy that dropped it) is noticed and resumed from the last seq shown, never replayed from
// the start and never skipped.

import { api } from './dom.js';

const SILENCE_MS = 40000; // the server sends a heartbeat every 15 s
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];

/// Whether the build has ended, by its record.
async function ended(id) {
  try {
    const b = await api(`/api/builds/${encodeURIComponent(id)}`);
    return b.status === 'published' || b.status === 'failed';
  } catch {
    return false;
  }
}

/// follow(buildId, {after, onEvent, onState}) → {stop()}.
/// onEvent(event) is called once per seq, in order; onState('live' | 'reconnecting' | 'done').
export function follow(id, { after = 0, onEvent, onState }) {
  let last = after;
  let stopped = false;
  let controller = null;
  let failures = 0;

  async function connect() {
    while (!stopped) {
      controller = new AbortController();
      let timer = null;
      const alive = () => {
        clearTimeout(timer);
        timer = setTimeout(() => controller.abort(), SILENCE_MS);
      };
      try {
        alive();
        const res = await fetch(`/api/builds/${encodeURIComponent(id)}/events?after=${last}`, {
          headers: { Accept: 'text/event-stream' },
          credentials: 'same-origin',
          signal: controller.signal,
        });
        if (res.status === 401 || res.status === 403 || res.status === 404) {
          onState('gone', res.status);
          return;
        }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        onState('live');
        let got = 0;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          alive();
          buf += value;
          let end;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, end);
            buf = buf.slice(end + 2);
            const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
            if (!data) continue; // a heartbeat comment
            const event = JSON.parse(data);
            if (event.seq <= last) continue; // already shown
            last = event.seq;
            got += 1;
            failures = 0;
            onEvent(event);
            if (event.type === 'complete') {
              stopped = true;
              clearTimeout(timer);
              controller.abort();
              onState('done');
              return;
            }
          }
        }
        // The server ended the stream without `complete` and with nothing new: if the build has
        // ended (its `complete` was never stored), there is nothing left to wait for.
        if (got === 0 && (await ended(id))) {
          stopped = true;
          onState('done');
          return;
        }
      } catch (err) {
        if (stopped) return;
      } finally {
        clearTimeout(timer);
      }
      if (stopped) return;
      onState('reconnecting');
      const wait = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)];
      failures += 1;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  connect();
  return {
    stop() {
      stopped = true;
      if (controller) controller.abort();
    },
    get last() {
      return last;
    },
  };
}
