'use strict';
// wright's egress bridge. It runs inside the sandbox, in front of the real command: the
// command's network namespace has loopback only, so this listens on 127.0.0.1:<port> there
// and carries every connection to wright's filtering proxy through a Unix socket mounted into
// the sandbox. It then runs the command with the same stdio and exits as the command exits.
// Usage: node bridge.js <port> <socket> <program> [args...]
const net = require('net');
const os = require('os');
const { spawn } = require('child_process');

const [port, socket, program, ...args] = process.argv.slice(2);
const server = net.createServer({ allowHalfOpen: true }, (inside) => {
  const outside = net.connect({ path: socket, allowHalfOpen: true });
  inside.pipe(outside);
  outside.pipe(inside);
  const close = () => { inside.destroy(); outside.destroy(); };
  inside.on('error', close);
  outside.on('error', close);
  inside.on('close', () => outside.destroy());
  outside.on('close', () => inside.destroy());
});

let child = null;
function run() {
  if (child) return;
  child = spawn(program, args, { stdio: 'inherit' });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(sig, () => { try { child.kill(sig); } catch (_) { /* already gone */ } });
  }
  child.on('error', (e) => {
    process.stderr.write(`${program}: ${e.code === 'ENOENT' ? 'command not found' : e.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    process.exit(code === null ? 128 + (os.constants.signals[signal] || 1) : code);
  });
}

server.on('error', (e) => {
  // The command still runs, only without the outside.
  process.stderr.write(`wright: the outside-access bridge could not listen on port ${port}: ${e.message}\n`);
  run();
});
server.listen(Number(port), '127.0.0.1', run);
