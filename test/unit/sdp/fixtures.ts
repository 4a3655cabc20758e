/** SDP offers as typical stacks send them (addresses from documentation ranges). */
const crlf = (lines: string[]): string => lines.join('\r\n') + '\r\n';

export const baresipOffer = crlf([
  'v=0',
  'o=- 1730216133 2906393123 IN IP4 192.0.2.10',
  's=-',
  'c=IN IP4 192.0.2.10',
  't=0 0',
  'm=audio 10002 RTP/AVP 111 9 0 8 101',
  'b=AS:107',
  'a=rtpmap:111 opus/48000/2',
  'a=fmtp:111 stereo=1;sprop-stereo=1',
  'a=rtpmap:9 G722/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-15',
  'a=sendrecv',
  'a=label:1',
  'a=ssrc:2733093210 cname:2c8ad1b8-0a3c-4b1e-9d77-f0fa7b2f3e71',
  'a=rtcp-rsize',
]);

/** Carrier SBC: G.711 only, media-level c=, no rtpmap for static types, a=rtcp given. */
export const carrierOffer = crlf([
  'v=0',
  'o=Sonus_UAC 28532 12346 IN IP4 198.51.100.7',
  's=SIP Media Capabilities',
  't=0 0',
  'm=audio 21860 RTP/AVP 0 8 100',
  'c=IN IP4 198.51.100.20',
  'a=rtpmap:100 telephone-event/8000',
  'a=fmtp:100 0-15',
  'a=rtcp:21865',
  'a=sendrecv',
  'a=maxptime:20',
]);

export const pcmaOnlyOffer = crlf([
  'v=0',
  'o=root 1821 1821 IN IP4 203.0.113.5',
  's=Asterisk PBX',
  'c=IN IP4 203.0.113.5',
  't=0 0',
  'm=audio 14036 RTP/AVP 8 101',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=sendrecv',
]);

export const g729OnlyOffer = crlf([
  'v=0',
  'o=- 4 4 IN IP4 203.0.113.9',
  's=-',
  'c=IN IP4 203.0.113.9',
  't=0 0',
  'm=audio 5004 RTP/AVP 18 101',
  'a=rtpmap:18 G729/8000',
  'a=fmtp:18 annexb=no',
  'a=rtpmap:101 telephone-event/8000',
]);

export function withLines(sdp: string, replace: Record<string, string>): string {
  return Object.entries(replace).reduce((text, [from, to]) => text.replace(from, to), sdp);
}

export const audioVideoOffer = crlf([
  'v=0',
  'o=linphone 2341 678 IN IP4 192.0.2.44',
  's=Talk',
  'c=IN IP4 192.0.2.44',
  't=0 0',
  'm=audio 7078 RTP/AVP 96 0 8 101',
  'a=rtpmap:96 opus/48000/2',
  'a=fmtp:96 useinbandfec=1',
  'a=rtpmap:101 telephone-event/48000',
  'a=rtpmap:102 telephone-event/8000',
  'm=video 9078 RTP/AVP 97 98',
  'a=rtpmap:97 H264/90000',
  'a=rtpmap:98 VP8/90000',
]);
