// The kitchen: a small server with Node's built-in http module (nothing to install).
// It serves the page in client/ and answers JSON under /api/notes:
//   GET    /api/notes      the notes, newest first
//   POST   /api/notes      add one: { "text": "...", "name": "..." } (name is optional)
//   DELETE /api/notes/ID   remove one
// Notes are kept in server/data/notes.json (or the file named by NOTES_FILE).
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

const MAX_LENGTH = {{ max_length|tojson }};
const MAX_NAME = 40;
const MAX_NOTES = 500;
const MAX_BODY_BYTES = 16 * 1024;
const LANGUAGE = {{ language|tojson }};

const ERRORS = {
  en: {
    json: 'Send the note as JSON, like {"text": "Hello"}.',
    text: 'The note needs some text.',
    long: 'The note is too long: at most ' + MAX_LENGTH + ' characters.',
    name: 'The name must be text of at most ' + MAX_NAME + ' characters.',
    big: 'That is too much data.',
    notFound: 'Not found',
    method: 'Method not allowed',
    server: 'Something went wrong on the server.',
  },
  pt: {
    json: 'Envie o recado em JSON, como {"text": "Olá"}.',
    text: 'O recado precisa de algum texto.',
    long: 'O recado é longo demais: no máximo ' + MAX_LENGTH + ' caracteres.',
    name: 'O nome deve ser um texto de no máximo ' + MAX_NAME + ' caracteres.',
    big: 'Dados demais.',
    notFound: 'Não encontrado',
    method: 'Método não permitido',
    server: 'Algo deu errado no servidor.',
  },
}[LANGUAGE === 'pt' ? 'pt' : 'en'];

const CLIENT_DIR = path.join(__dirname, '..', 'client');
const PAGES = { '/': 'index.html', '/index.html': 'index.html', '/styles.css': 'styles.css', '/app.js': 'app.js' };
const TYPES = { html: 'text/html; charset=utf-8', css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };

function dataFile() {
  return process.env.NOTES_FILE || path.join(__dirname, 'data', 'notes.json');
}

function readNotes() {
  try {
    const notes = JSON.parse(fs.readFileSync(dataFile(), 'utf8'));
    return Array.isArray(notes) ? notes : [];
  } catch (e) {
    return []; // no file yet (or a broken one): start empty
  }
}

function writeNotes(notes) {
  const file = dataFile();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = file + '.tmp';
  fs.writeFileSync(temp, JSON.stringify(notes, null, 2));
  fs.renameSync(temp, file);
}

// Checks what the page sent. Gives { error } or { text, name }.
function validateNote(body) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { error: ERRORS.json };
  if (typeof body.text !== 'string' || body.text.trim() === '') return { error: ERRORS.text };
  const text = body.text.trim();
  if ([...text].length > MAX_LENGTH) return { error: ERRORS.long };
  let name = '';
  if (body.name !== undefined && body.name !== null) {
    if (typeof body.name !== 'string' || [...body.name.trim()].length > MAX_NAME) return { error: ERRORS.name };
    name = body.name.trim();
  }
  return { text, name };
}

function sendJson(res, status, data) {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(data));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks = [];
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk); // past the limit: read on, keep nothing
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) reject(Object.assign(new Error('too big'), { status: 413 }));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

async function handleApi(req, res, url) {
  if (url === '/api/notes') {
    if (req.method === 'GET') return sendJson(res, 200, readNotes());
    if (req.method === 'POST') {
      let body;
      try {
        body = JSON.parse(await readBody(req));
      } catch (e) {
        if (e.status === 413) return sendJson(res, 413, { error: ERRORS.big });
        return sendJson(res, 400, { error: ERRORS.json });
      }
      const checked = validateNote(body);
      if (checked.error) return sendJson(res, 400, { error: checked.error });
      const note = { id: crypto.randomUUID(), text: checked.text, name: checked.name, createdAt: new Date().toISOString() };
      writeNotes([note, ...readNotes()].slice(0, MAX_NOTES));
      return sendJson(res, 201, note);
    }
    return sendJson(res, 405, { error: ERRORS.method });
  }
  const match = url.match(/^\/api\/notes\/([^/]+)$/);
  if (match) {
    if (req.method !== 'DELETE') return sendJson(res, 405, { error: ERRORS.method });
    const id = decodeURIComponent(match[1]);
    const notes = readNotes();
    const kept = notes.filter((note) => note.id !== id);
    if (kept.length === notes.length) return sendJson(res, 404, { error: ERRORS.notFound });
    writeNotes(kept);
    res.writeHead(204);
    return res.end();
  }
  return sendJson(res, 404, { error: ERRORS.notFound });
}

const server = http.createServer(async (req, res) => {
  const url = req.url.split('?')[0];
  try {
    if (url.startsWith('/api/')) return await handleApi(req, res, url);
    const name = PAGES[url];
    if (!name || req.method !== 'GET') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return res.end(ERRORS.notFound);
    }
    res.writeHead(200, { 'Content-Type': TYPES[name.split('.').pop()] });
    res.end(fs.readFileSync(path.join(CLIENT_DIR, name)));
  } catch (e) {
    console.error(e);
    if (!res.headersSent) sendJson(res, 500, { error: ERRORS.server });
    else res.end();
  }
});

if (require.main === module) {
  const port = process.env.PORT || 3000;
  server.listen(port, () => console.log('Open http://localhost:' + port));
}

module.exports = { server, validateNote, dataFile, MAX_LENGTH };
