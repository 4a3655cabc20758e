/**
 * The DNS lookup the guarded sockets connect through (net's `lookup` option): the name is
 * resolved once, each answer is checked against the policy, and only the permitted addresses are
 * handed to the socket. There is no second resolution between the check and the connect, so a
 * name that answers a public address to one query and 127.0.0.1 to the next (DNS rebinding) is
 * judged on the answer it is connected with.
 */
import dns from 'node:dns';
import type net from 'node:net';
import { OutboundRefusedError } from './errors.ts';
import type { OutboundPolicy } from './policy.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a name, in the resolver's order. Injectable so tests can play DNS. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: Resolve = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export function guardedLookup(policy: OutboundPolicy, resolve: Resolve = systemResolve): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (answers) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : undefined;
        const candidates = family === undefined ? answers : answers.filter((a) => a.family === family);
        if (candidates.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          err.code = 'ENOTFOUND';
          callback(err, '', 0);
          return;
        }
        // Only the permitted addresses go on; with none left, the first refusal is the answer.
        const allowed = candidates.filter((a) => policy.refusal(a.address) === undefined);
        if (allowed.length === 0) {
          const first = candidates[0]!;
          callback(new OutboundRefusedError(hostname, first.address, policy.refusal(first.address)!), '', 0);
          return;
        }
        if (options.all) callback(null, allowed);
        else callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
