import type { ForbiddenKind } from './address.ts';

function article(kind: ForbiddenKind): string {
  return kind === 'unspecified' ? 'an' : 'a';
}

/** "169.254.169.254 is a link-local address", "hooks.example.com resolves to 127.0.0.1, a loopback address". */
export function describeTarget(host: string, address: string, kind: ForbiddenKind): string {
  const what = `${article(kind)} ${kind} address`;
  return host === address ? `${address} is ${what}` : `${host} resolves to ${address}, ${what}`;
}

/**
 * A connection the outbound guard refused: the name or literal leads to an address that customer
 * URLs may not reach. Permanent for this address; the message names the host and the address
 * (never a path, query or credential of the URL).
 */
export class OutboundRefusedError extends Error {
  readonly code = 'OUTBOUND_REFUSED';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly kind: ForbiddenKind,
  ) {
    super(`refused to connect: ${describeTarget(host, address, kind)} (customer URLs may only reach public addresses)`);
    this.name = 'OutboundRefusedError';
  }
}

/** The refusal behind an error, as the guarded fetch and the sockets report it. */
export function outboundRefusal(err: unknown): OutboundRefusedError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof OutboundRefusedError) return e;
  }
  return undefined;
}
