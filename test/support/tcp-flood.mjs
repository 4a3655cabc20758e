// A SIP-over-TCP connection flood for tests, run as a child process so its sockets do not count
// against the test process's descriptors. argv[2]: JSON {host, port, concurrency, plan: [[address,
// count], ...]}. Connections are opened in round-robin over the plan (every address connects
// once, then again...), `concurrency` in flight; each sends a keep-alive ping and is kept open
// until the server closes it.
// stdout: one JSON line when every attempt settled ({"done": ...}); stdin "close": destroy all, exit.
import net from 'node:net';

const { host, port, concurrency, plan } = JSON.parse(process.argv[2]);
const order = [];
for (let round = 0, more = true; more; round++) {
  more = false;
  for (const [address, count] of plan) {
    if (round < count) {
      order.push(address);
      more = true;
    }
  }
}

const open = new Set();
const stats = { attempted: 0, connected: 0, failed: 0, closedByServer: 0, errors: {} };
const started = performance.now();
let next = 0;

function one(address) {
  return new Promise((resolve) => {
    stats.attempted++;
    const socket = net.connect({ host, port, localAddress: address });
    let connected = false;
    socket.on('connect', () => {
      connected = true;
      // A keep-alive ping, as a client holding its connection would send (RFC 5626): without it
      // the server closes the connection at its first-message deadline.
      socket.write('\r\n\r\n');
      stats.connected++;
      open.add(socket);
      resolve();
    });
    socket.on('error', (err) => {
      stats.errors[err.code] = (stats.errors[err.code] ?? 0) + 1;
    });
    socket.on('close', () => {
      open.delete(socket);
      if (connected) stats.closedByServer++;
      else {
        stats.failed++;
        resolve();
      }
    });
  });
}

function cpuSeconds() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function worker() {
  while (next < order.length) await one(order[next++]);
}

await Promise.all(Array.from({ length: concurrency }, worker));
// Let the server's resets of the last accepted ones arrive.
await new Promise((r) => setTimeout(r, 500));
process.stdout.write(`${JSON.stringify({ done: { ...stats, open: open.size, seconds: (performance.now() - started) / 1000, cpuSeconds: cpuSeconds() } })}\n`);

process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  if (!d.includes('close')) return;
  for (const s of open) s.destroy();
  process.exit(0);
});
// Never outlive the test: the parent's end closes stdin.
process.stdin.on('end', () => process.exit(0));
