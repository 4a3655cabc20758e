/**
 * SIP over TLS (RFC 3261 §26.2, RFC 5630): the TLS side of the transport's stream seam.
 *
 * - Server: the certificate chain and key come from PEM files; `reload()` reads them again and
 *   swaps the server's secure context, so a renewed certificate takes effect for new connections
 *   without a restart (SIGHUP in the CLI). A bad file on reload keeps the old context.
 * - Client: the peer's certificate is verified against the system's store (Node's bundled roots)
 *   plus an optional CA file; the name checked is the SIP domain the request was routed to
 *   (RFC 5922 §4: the host of the URI that was the input to RFC 3263, not the SRV target), or the
 *   IP address when the URI named one. SNI carries that name. TLS 1.2 or newer only.
 *
 * Handshakes are bounded in time: a peer that opens a connection and never completes the
 * handshake is dropped after `handshakeTimeoutMs`.
 */
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

export interface SipTlsFiles {
  /** PEM certificate chain of the listener (leaf first). */
  certFile?: string;
  /** PEM private key of the listener. */
  keyFile?: string;
  /** PEM CA certificates trusted for outbound connections, beside the system's store. */
  caFile?: string;
}

export interface SipTlsOptions extends SipTlsFiles {
  /** Listen port for TLS (0: ephemeral). Only used when cert and key are given. */
  port: number;
  /** A handshake that has not completed by then is dropped (default 10 s). */
  handshakeTimeoutMs?: number;
  /** Trust only `caFile`, not the system's store (tests with a private CA). */
  caOnly?: boolean;
}

const MIN_VERSION = 'TLSv1.2';

export class SipTlsConfigError extends Error {}

/** The TLS material of one transport: the server context (reloadable) and the client trust. */
export class SipTls {
  /** The listener's certificate chain and key, checked to match; none: no listener. */
  private pair: { cert: Buffer; key: Buffer } | undefined;
  private clientCa: string[];
  private readonly servers = new Set<tls.Server>();

  constructor(private readonly opts: SipTlsOptions) {
    this.pair = loadPair(opts);
    this.clientCa = this.loadClientCa();
  }

  /** Whether a TLS listener is configured (certificate and key given). */
  get listens(): boolean {
    return this.pair !== undefined;
  }

  get port(): number {
    return this.opts.port;
  }

  /**
   * Reads the certificate, key and CA files again. Throws (keeping the current material) when a
   * file cannot be read or the key does not match the certificate.
   */
  reload(): void {
    const pair = loadPair(this.opts);
    const ca = this.loadClientCa();
    this.pair = pair;
    this.clientCa = ca;
    const options = this.serverSecureOptions();
    if (options) for (const server of this.servers) server.setSecureContext(options);
  }

  /** A TLS server whose sockets reach `onSocket` once their handshake completes. */
  createServer(onSocket: (socket: net.Socket) => void, onError: (err: Error) => void): tls.Server {
    const options = this.serverSecureOptions();
    if (!options) throw new SipTlsConfigError('SIP over TLS needs a certificate and a key');
    const server = tls.createServer({ ...options, handshakeTimeout: this.opts.handshakeTimeoutMs ?? 10_000 }, onSocket);
    // A failed handshake (bad client hello, timeout, protocol too old) is the peer's problem.
    // With a listener here Node leaves the socket open: close it.
    server.on('tlsClientError', (err, socket) => {
      socket.destroy();
      onError(new Error(`TLS handshake failed: ${err.message}`));
    });
    this.servers.add(server);
    server.on('close', () => this.servers.delete(server));
    return server;
  }

  /** Opens a verified client connection; `serverName` is the identity expected (none: the IP). */
  connect(address: string, port: number, serverName?: string): tls.TLSSocket {
    const named = serverName !== undefined && net.isIP(serverName) === 0 ? serverName : undefined;
    const socket = tls.connect({
      host: address,
      port,
      ...(named ? { servername: named } : {}),
      ca: this.clientCa,
      minVersion: MIN_VERSION,
      rejectUnauthorized: true,
      // Node checks `servername` when set, else `host`: the SIP domain, or the address itself.
      checkServerIdentity: (_host, cert) => tls.checkServerIdentity(named ?? address, cert),
    });
    const timeoutMs = this.opts.handshakeTimeoutMs ?? 10_000;
    const timer = setTimeout(() => socket.destroy(new Error(`TLS handshake with ${address}:${port} timed out`)), timeoutMs);
    timer.unref();
    socket.once('secureConnect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
    return socket;
  }

  private serverSecureOptions(): tls.SecureContextOptions | undefined {
    return this.pair ? { ...this.pair, minVersion: MIN_VERSION } : undefined;
  }

  private loadClientCa(): string[] {
    const extra = this.opts.caFile ? [readPem(this.opts.caFile, 'CA').toString('utf8')] : [];
    return this.opts.caOnly ? extra : [...tls.rootCertificates, ...extra];
  }
}

/** The listener's certificate and key, read and checked to belong together; undefined when neither is set. */
function loadPair({ certFile, keyFile }: SipTlsFiles): { cert: Buffer; key: Buffer } | undefined {
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new SipTlsConfigError('SIP over TLS needs both a certificate and a key file');
  const cert = readPem(certFile, 'certificate');
  const key = readPem(keyFile, 'key');
  try {
    // Fails when the key does not match the certificate, or either is not usable PEM.
    tls.createSecureContext({ cert, key, minVersion: MIN_VERSION });
  } catch (err) {
    throw new SipTlsConfigError(`SIP TLS certificate or key unusable: ${(err as Error).message}`);
  }
  return { cert, key };
}

function readPem(file: string, what: string): Buffer {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (err) {
    throw new SipTlsConfigError(`cannot read the SIP TLS ${what} file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!data.includes('-----BEGIN')) throw new SipTlsConfigError(`the SIP TLS ${what} file ${file} is not PEM`);
  return data;
}
