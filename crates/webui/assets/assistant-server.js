// The in-app assistant's line to the wright server (assistant.js talks to it through this):
// the server's address, who this visitor is (the session cookie on the same origin, or a
// visitor token got with an embed key and kept in localStorage, fetched afresh once on a 401)
// and the language to answer in; and the server's words when an answer failed.

import { storageKeys } from './assistant-core.js';

/// A failed answer: its HTTP status, and the server's message.
export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/// The server: its address, who this visitor is (the session cookie, or a visitor token got
/// with the embed key and kept in localStorage) and the language to answer in.
export class Server {
  constructor(endpoint, embedKey, lang) {
    this.endpoint = String(endpoint || '').replace(/\/+$/, '');
    this.embedKey = embedKey || null;
    this.lang = lang;
    this.keys = storageKeys(this.embedKey);
  }

  stored() {
    try {
      return localStorage.getItem(this.keys.token);
    } catch {
      return null;
    }
  }

  async visitorToken(fresh) {
    if (!this.embedKey) return null;
    if (!fresh) {
      const have = this.stored();
      if (have) return have;
    }
    const res = await fetch(`${this.endpoint}/api/embed/visitors`, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'X-Wright-Embed-Key': this.embedKey, Accept: 'application/json' },
    });
    if (!res.ok) throw new HttpError(res.status, await messageOf(res));
    const body = await res.json();
    if (!body?.token) throw new HttpError(res.status, 'no visitor token in the answer');
    try {
      localStorage.setItem(this.keys.token, body.token);
    } catch {
      // Private mode: the token lives as long as the page.
    }
    this.token = body.token;
    return body.token;
  }

  /// fetch() on the server with this visitor's credentials; a 401 gets a fresh visitor token
  /// once. Rejects only when the network fails; an error status comes back as the response.
  async request(path, { method = 'GET', body, stream = false } = {}) {
    const send = async (fresh) => {
      const headers = { Accept: stream ? 'text/event-stream' : 'application/json', 'Accept-Language': this.lang };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const token = this.embedKey ? (fresh ? await this.visitorToken(true) : this.token || (await this.visitorToken(false))) : null;
      if (token) headers.Authorization = `Bearer ${token}`;
      return fetch(`${this.endpoint}${path}`, {
        method,
        headers,
        credentials: this.embedKey ? 'omit' : 'include',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    };
    let res = await send(false);
    if (res.status === 401 && this.embedKey) res = await send(true);
    return res;
  }

  /// A JSON call: the parsed answer, or an HttpError with the server's message.
  async json(path, options) {
    const res = await this.request(path, options);
    if (!res.ok) throw new HttpError(res.status, await messageOf(res));
    if (res.status === 204) return null;
    const type = res.headers.get('content-type') || '';
    return type.includes('json') ? res.json() : null;
  }
}

/// The server's words for a failed answer (its {"error": {message}}), or the status.
export async function messageOf(res) {
  try {
    const type = res.headers.get('content-type') || '';
    if (type.includes('json')) {
      const body = await res.json();
      const m = body?.error?.message || body?.message || (typeof body?.error === 'string' ? body.error : '');
      if (m) return `${m} (HTTP ${res.status})`;
    }
  } catch {
    // fall through to the status
  }
  return `HTTP ${res.status}`;
}
