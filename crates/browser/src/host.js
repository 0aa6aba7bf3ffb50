// wright's browser host, run with `node -e` inside the build's sandbox (network denied): serve
// the page on a loopback port (the workspace's files, or the app's own server started with PORT
// set), start Chromium on another loopback port, and carry connections made to a Unix socket
// (which wright, outside the sandbox, can reach) to Chromium's DevTools port (which only the
// sandbox's own network can). When Chromium exits, so does the host, and the app with it.
// argv: mode(static|server) root-or-entry socketDir pagePort cdpPort chromium profileDir [flags...]
// socketDir's path can be any length; the socket is bound through a descriptor of it
// (/proc/self/fd/N/cdp.sock), which always fits in a socket address.
'use strict';
const { spawn } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');

const [mode, target, socketDir, pagePort, cdpPort, chromium, profile, ...flags] = process.argv.slice(1);
const children = [];
let madeTmp = null;
const stop = (code) => {
  for (const c of children) {
    try { c.kill('SIGKILL'); } catch (_) { /* gone */ }
  }
  if (madeTmp) {
    try { fs.rmSync(madeTmp, { recursive: true, force: true }); } catch (_) { /* best effort */ }
  }
  process.exit(code);
};

// Chromium keeps its process-singleton socket in $TMPDIR/org.chromium.Chromium.XXXXXX/ and
// dies ("Socket path too long") when that passes 107 bytes, which a build's TMPDIR under a
// long data folder does. Give it a short folder of its own in /tmp (the sandbox's private
// /tmp under bubblewrap), removed when the host stops; else TMPDIR as it is.
const chromiumTmp = () => {
  try { madeTmp = fs.mkdtempSync('/tmp/wb-'); return madeTmp; } catch (_) { /* /tmp not writable */ }
  return process.env.TMPDIR || '/tmp';
};
process.on('SIGTERM', () => stop(0));
process.on('SIGINT', () => stop(0));

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.htm': 'text/html; charset=utf-8', '.js': 'text/javascript',
  '.mjs': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif',
  '.webp': 'image/webp', '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm', '.woff2': 'font/woff2', '.woff': 'font/woff', '.map': 'application/json',
};

if (mode === 'static') {
  const root = path.resolve(target);
  http.createServer((req, res) => {
    let rel;
    try { rel = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch (_) { rel = '/'; }
    let file = path.resolve(root, '.' + rel);
    if (file !== root && !file.startsWith(root + path.sep)) { res.writeHead(403); res.end(); return; }
    try { if (fs.statSync(file).isDirectory()) file = path.join(file, 'index.html'); } catch (_) { /* 404 below */ }
    fs.readFile(file, (err, body) => {
      if (err) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not found'); return; }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream' });
      res.end(body);
    });
  }).listen(Number(pagePort), '127.0.0.1');
} else {
  const app = spawn(process.execPath, [target], {
    env: { ...process.env, PORT: pagePort, HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(app);
  app.on('exit', (code) => { process.stderr.write(`wright: the app exited (${code})\n`); });
}

const browser = spawn(chromium, [
  `--remote-debugging-port=${cdpPort}`, '--remote-debugging-address=127.0.0.1',
  `--user-data-dir=${profile}`, ...flags, '--no-startup-window',
], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TMPDIR: chromiumTmp() } });
children.push(browser);
browser.stderr.on('data', (d) => {
  // Only what explains a failed start; Chromium is chatty about D-Bus and GPUs.
  const text = d.toString();
  if (process.env.WRIGHT_BROWSER_DEBUG || /error while loading|cannot open|Permission denied|Check failed|FATAL|too long/.test(text)) process.stderr.write(text);
});
browser.on('exit', (code) => stop(code === null ? 1 : code));
browser.on('error', (e) => { process.stderr.write(`wright: cannot start ${chromium}: ${e.message}\n`); stop(1); });

const socketFd = fs.openSync(socketDir, 'r');
const socketPath = `/proc/self/fd/${socketFd}/cdp.sock`;
try { fs.unlinkSync(socketPath); } catch (_) { /* not there yet */ }
net.createServer((client) => {
  const upstream = net.connect({ host: '127.0.0.1', port: Number(cdpPort) });
  client.pipe(upstream).pipe(client);
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('error', close);
  upstream.on('error', close);
}).on('error', (e) => {
  process.stderr.write(`wright: cannot listen on ${socketDir}/cdp.sock: ${e.message}\n`);
  stop(1);
}).listen(socketPath);
