import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts a loopback HTTP server (127.0.0.1 and a free port unless told otherwise); resolves with
 * its base URL and a closer that drops keep-alives.
 */
export async function listen(handler: http.RequestListener, at: { host?: string; port?: number } = {}): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server = http.createServer(handler);
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
