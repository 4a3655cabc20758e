/**
 * Which addresses customer URLs may reach: public ones, plus whatever the operator's allow-list
 * opens. Used twice: at validation on the URL's host when it is an address literal (or
 * `localhost`), and at connect time on every address a name resolves to (lookup.ts), so the
 * address checked is the address connected to.
 */
import { classifyIp, parseIp, type ForbiddenKind } from './address.ts';
import { cidrContains, type Cidr } from './cidr.ts';
import { describeTarget } from './errors.ts';

export interface HostRefusal {
  host: string;
  address: string;
  kind: ForbiddenKind;
}

export class OutboundPolicy {
  constructor(readonly allow: readonly Cidr[] = []) {}

  /** Why `address` (an IP literal) may not be reached, or undefined when it may. */
  refusal(address: string): ForbiddenKind | undefined {
    const ip = parseIp(address);
    // Not an address at all: nothing a resolver should answer, nothing to connect to.
    if (!ip) return 'reserved';
    const cls = classifyIp(ip);
    if (!cls.forbidden) return undefined;
    const opened = this.allow.some((c) => cidrContains(c, ip) || (cls.embedded !== undefined && cidrContains(c, cls.embedded)));
    return opened ? undefined : cls.forbidden;
  }

  /**
   * The validation-time check of a URL's host: an address literal, or `localhost` (and
   * `*.localhost`, which resolvers answer with loopback). Other names are not resolved here: a
   * name's addresses are checked when it is connected to.
   */
  hostRefusal(hostname: string): HostRefusal | undefined {
    const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (parseIp(host)) {
      const kind = this.refusal(host);
      return kind ? { host, address: host, kind } : undefined;
    }
    const name = host.replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) {
      if (this.refusal('127.0.0.1') === undefined || this.refusal('::1') === undefined) return undefined;
      return { host: name, address: '127.0.0.1', kind: 'loopback' };
    }
    return undefined;
  }

  /**
   * For REST validation: the 422 sentence for a URL field whose host customer URLs may not
   * reach (`field` as clients see it, e.g. "webhook url"), or undefined. Unparsable URLs are
   * left to the field's own format check.
   */
  urlProblem(field: string, url: string): string | undefined {
    if (!URL.canParse(url)) return undefined;
    const r = this.hostRefusal(new URL(url).hostname);
    return r && `The ${field} field must point to a public address: ${describeTarget(r.host, r.address, r.kind)}.`;
  }
}
