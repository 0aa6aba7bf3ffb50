// wright's preview bridge, run with `node -e` inside a full-stack build's sandbox: start the
// app's server the way a person would (`node <entry>` with PORT set), and carry every
// connection made to a Unix socket (which wright, outside the sandbox, can reach) to that port
// (which only the sandbox's own network can). When the server exits, so does the bridge.
// argv: entry socketDir socketName port
// The socket is bound through a descriptor of its folder (/proc/self/fd/N/NAME), a path that
// fits in a socket address however long the folder's own path is.
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
const fs = require('node:fs');

const [entry, socketDir, socketName, port] = process.argv.slice(1);
const socketPath = `/proc/self/fd/${fs.openSync(socketDir, 'r')}/${socketName}`;
const child = spawn(process.execPath, [entry], {
  env: { ...process.env, PORT: port },
  stdio: ['ignore', 'inherit', 'inherit'],
});
child.on('exit', (code) => process.exit(code === null ? 1 : code));
child.on('error', () => process.exit(1));

try { fs.unlinkSync(socketPath); } catch (_) { /* not there yet */ }
net.createServer((client) => {
  const upstream = net.connect({ host: '127.0.0.1', port: Number(port) });
  client.pipe(upstream).pipe(client);
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('error', close);
  upstream.on('error', close);
}).listen(socketPath);

const stop = () => { child.kill('SIGTERM'); setTimeout(() => process.exit(0), 500); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
