/**
 * Digest authentication of INVITEs for `auth` trunks arriving from somewhere other than the
 * trunk's registrar (a PBX or softphone that holds the trunk's credentials). We challenge with
 * SHA-256 and MD5 (RFC 8760 §2.4: one header per algorithm, the preferred first).
 *
 * Unknown username and wrong password get the same answer (403) after the same work: a digest is
 * always computed, against a throwaway password when the username does not match, so neither the
 * response nor its timing tells a guesser which half was wrong.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { formatChallenge, parseCredentials } from './digest.ts';
import { createChallenge, DigestNonces, verifyCredentials } from './digest-server.ts';
import { header, type SipHeader, type SipRequest } from './message.ts';

export type TrunkAuthResult = 'ok' | 'missing' | 'stale' | 'failed';

export interface TrunkCredentials {
  username: string;
  password: string;
}

export class TrunkAuthenticator {
  private readonly nonces: DigestNonces;
  /** Never matches a real password: used to spend the same time on unknown usernames. */
  private readonly decoy = randomBytes(24).toString('base64url');

  constructor(
    clock: Clock,
    readonly realm: string,
  ) {
    // Nonces are HMAC-signed and stateless; a per-process key is enough for one node.
    this.nonces = new DigestNonces({ secret: randomBytes(32), clock });
  }

  /** WWW-Authenticate headers for a 401; `stale` tells a client with a good password to retry. */
  challengeHeaders(stale = false): SipHeader[] {
    return ['SHA-256', 'MD5'].map((algorithm) => ({
      name: 'www-authenticate',
      value: formatChallenge(createChallenge(this.realm, this.nonces, { algorithm, stale })),
    }));
  }

  verify(req: SipRequest, trunk: TrunkCredentials): TrunkAuthResult {
    const value = header(req, 'authorization');
    if (value === undefined) return 'missing';
    const creds = parseCredentials(value);
    if (!creds) return 'failed';
    const known = creds.username === trunk.username;
    const result = verifyCredentials(creds, {
      realm: this.realm,
      method: req.method,
      nonces: this.nonces,
      password: known ? trunk.password : this.decoy,
      requestUri: req.uri,
      body: req.body,
    });
    if (result.ok) return known ? 'ok' : 'failed';
    // Stale only when the response itself was right (digest-server.ts), i.e. a known user.
    if (result.reason === 'stale' && known) return 'stale';
    return 'failed';
  }
}
