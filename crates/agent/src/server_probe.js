// wright's server check, run with `node -e` inside the same sandbox (and so the same private
// network) as the server: start the server like a person would, ask it for `/`, report once.
// argv: entry port startupMs answerMs pollMs; an entry that is a JSON array is the whole
// command (["python3", "app.py"]), anything else a file node runs. The report is the last line, prefixed with
// WRIGHT_SERVER_PROBE and a JSON object: {status}, {notHttp}, {silent}, {refused} or {exited}.
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');

const [entry, port, startupMs, answerMs, pollMs] = process.argv.slice(1);
const command = entry.startsWith('[') ? JSON.parse(entry) : [process.execPath, entry];
const child = spawn(command[0], command.slice(1), {
  env: { ...process.env, PORT: port },
  stdio: ['ignore', 'inherit', 'inherit'],
});
let exited = null;
child.on('exit', (code, signal) => {
  exited = { exited: code === null ? -1 : code, signal };
});
child.on('error', (e) => {
  exited = { exited: -1, signal: String(e.message) };
});

let reported = false;
function report(result) {
  if (reported) return;
  reported = true;
  process.stdout.write('\nWRIGHT_SERVER_PROBE ' + JSON.stringify(result) + '\n');
  child.kill('SIGKILL');
  process.exit(0);
}

const deadline = Date.now() + Number(startupMs);
const hosts = ['127.0.0.1', '::1'];

function attempt(h) {
  if (exited) return report(exited);
  const socket = net.connect({ host: hosts[h], port: Number(port) });
  let head = '';
  let connected = false;
  socket.setTimeout(Number(answerMs));
  socket.on('connect', () => {
    connected = true;
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  });
  socket.on('data', (d) => {
    head += d.toString('latin1');
    const nl = head.indexOf('\n');
    if (nl < 0 && head.length < 4096) return;
    const line = (nl < 0 ? head : head.slice(0, nl)).trim();
    socket.destroy();
    const m = /^HTTP\/\S+\s+(\d{3})/.exec(line);
    report(m ? { status: Number(m[1]) } : { notHttp: line.slice(0, 120) });
  });
  socket.on('timeout', () => {
    socket.destroy();
    report({ silent: true });
  });
  socket.on('end', () => {
    if (connected) report(head ? { notHttp: head.trim().slice(0, 120) } : { silent: true });
  });
  socket.on('error', () => {
    if (connected) return report({ silent: true });
    if (h + 1 < hosts.length) return attempt(h + 1);
    if (exited) return report(exited);
    if (Date.now() < deadline) return setTimeout(() => attempt(0), Number(pollMs));
    report({ refused: true });
  });
}

setTimeout(() => attempt(0), 0);
