/**
 * The SDP offer of a call we place, per host we advertise: the INVITE asks for one (OfferFor)
 * when it knows where it goes, so a carrier reached over IPv6 gets `c=IN IP6 <SIP_PUBLIC_HOST6>`
 * and one over IPv4 `c=IN IP4 <SIP_PUBLIC_HOST>`, whatever the media session was created with.
 * Each host's offer is made once and kept (its SRTP keys are fresh per offer), so the answer is
 * read against the very offer that went out.
 */
import { createOffer, type LocalMedia, type OfferResult } from '../media/sdp-negotiate.ts';
import type { SdpSession } from '../media/sdp-write.ts';
import type { OfferFor } from '../sip/user-agent-outgoing-invite.ts';

export class OutboundOffers {
  private readonly byHost = new Map<string, OfferResult>();

  constructor(
    private readonly local: LocalMedia,
    private readonly session: SdpSession,
  ) {}

  readonly offerFor: OfferFor = (host) => this.made(host).offerSdp;

  /** The offer made for `host` and our media as it described it (for the answer and re-offers). */
  sent(host: string): { offer: OfferResult; local: LocalMedia } {
    return { offer: this.made(host), local: { ...this.local, address: host } };
  }

  private made(host: string): OfferResult {
    let offer = this.byHost.get(host);
    if (!offer) {
      offer = createOffer({ ...this.local, address: host }, this.session);
      this.byHost.set(host, offer);
    }
    return offer;
  }
}
