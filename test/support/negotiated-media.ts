/** A negotiated PCMU 20 ms stream with RFC 4733 DTMF, as the media-layer tests start from. */
import { pcmu } from '../../src/media/codecs/pcmu.ts';
import type { NegotiatedMedia } from '../../src/media/sdp-negotiate.ts';

export function pcmuMedia(over: Partial<NegotiatedMedia> = {}): NegotiatedMedia {
  return {
    remote: { address: '192.0.2.1', port: 4000, rtcpPort: 4001 },
    codec: pcmu,
    payloadType: 0,
    receiveCodecs: new Map([[0, pcmu]]),
    dtmfPayloadType: 101,
    dtmfClockRate: 8000,
    ptimeMs: 20,
    direction: 'sendrecv',
    remoteHold: false,
    mediaIndex: 0,
    ...over,
  };
}
