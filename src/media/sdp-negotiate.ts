/**
 * RFC 3264 offer/answer for one audio stream, as pure functions: SDP text and our local media
 * settings in, the negotiated media and the SDP to send out. Sockets, ports and re-INVITE
 * handling stay with the caller; the SdpSession it hands back carries the o= version forward.
 */
import { DEFAULT_CODEC_PREFERENCE, resolveCodecs } from './codecs/codecs.ts';
import type { Codec } from './codecs/codec.ts';
import {
  canSend,
  intersectDirections,
  isHoldAddress,
  mirrorDirection,
  parseSdp,
  SdpNegotiationError,
  type MediaDirection,
  type SdpFormat,
  type SdpMedia,
} from './sdp.ts';
import { writeSdp, type SdpSession, type WrittenFormat, type WrittenMedia } from './sdp-write.ts';
import { newMasterKey, offerCryptos, parseCryptoAttribute, writeCryptoAttribute, type CryptoAttribute, type SrtpPolicy } from './srtp/sdes.ts';
import type { MasterKey } from './srtp/srtp-session.ts';
import type { SrtpSuiteName } from './srtp/suites.ts';

export interface LocalMedia {
  /** Our RTP address, written in c= and o=. */
  address: string;
  port: number;
  /** Advertised with a=rtcp when set (otherwise RTCP is implicitly port + 1). */
  rtcpPort?: number;
  /** Codecs we accept, in our preference order (used for our offers). */
  codecs?: readonly Codec[];
  /** Offer and accept RFC 4733 telephone-event (default true). */
  dtmf?: boolean;
  /** Payload type for telephone-event in our offers (default 101). */
  dtmfPayloadType?: number;
  /** Preferred packet time (default 20). */
  ptimeMs?: number;
  /** What we want; 'sendonly' or 'inactive' puts the call on hold from our side. */
  direction?: MediaDirection;
  /** Answer with only the chosen codec, so the far end cannot switch mid-call. */
  singleCodecAnswer?: boolean;
  sessionName?: string;
  /** SDES-SRTP (RFC 4568): 'off' (default) plain RTP only, 'offered' best-effort, 'required'. */
  srtp?: SrtpPolicy;
  /** The SRTP in force (re-INVITE): our key is kept when the same suite is chosen again. */
  currentSrtp?: NegotiatedSrtp;
}

/** The SRTP of a call: the suite, our master key (what we send) and theirs (what we receive). */
export interface NegotiatedSrtp {
  suite: SrtpSuiteName;
  local: MasterKey;
  remote: MasterKey;
}

export interface NegotiatedMedia {
  remote: { address: string; port: number; rtcpPort: number };
  /** The codec we send with. */
  codec: Codec;
  payloadType: number;
  /** Every payload type the far end may send us, the sending one included. */
  receiveCodecs: ReadonlyMap<number, Codec>;
  dtmfPayloadType?: number;
  /** telephone-event clock from the SDP (8000 unless it matched the audio clock). */
  dtmfClockRate?: number;
  ptimeMs: number;
  /** Our direction: whether we should send and expect to receive. */
  direction: MediaDirection;
  /** The far end has put us on hold (sendonly/inactive, or c=0.0.0.0). */
  remoteHold: boolean;
  /** The far end's fmtp for the chosen codec (e.g. opus useinbandfec). */
  remoteFmtp?: string;
  /** Index of the audio m= line. */
  mediaIndex: number;
  /** Set when the stream is SRTP (SDES keys); absent for plain RTP. */
  srtp?: NegotiatedSrtp;
}

export interface AnswerResult extends NegotiatedMedia {
  answerSdp: string;
  session: SdpSession;
}

export interface OfferedMedia {
  formats: ReadonlyArray<{ payloadType: number; codec: Codec }>;
  dtmfPayloadType?: number;
  ptimeMs: number;
  direction: MediaDirection;
  /** The crypto lines we offered (each with our key for it), and our policy. */
  srtp?: { policy: SrtpPolicy; cryptos: readonly CryptoAttribute[] };
}

export interface OfferResult {
  offerSdp: string;
  session: SdpSession;
  offered: OfferedMedia;
}

const DTMF_NAME = 'telephone-event';
const DTMF_EVENTS = '0-16';
const SUPPORTED_PROTOCOLS = new Set(['RTP/AVP', 'RTP/AVPF', 'RTP/SAVP', 'RTP/SAVPF']);
const SECURE_PROTOCOLS = new Set(['RTP/SAVP', 'RTP/SAVPF']);

/**
 * The SRTP answer to one offered stream: their first crypto line we can honour (RFC 4568 §7.1.2
 * leaves the choice to the answerer; the offerer's order is its preference), with our key under
 * the same tag. Undefined with a reason when the stream cannot be (or, by policy, must not be)
 * answered with what it offers.
 */
function answerCrypto(m: SdpMedia, local: LocalMedia): { crypto?: { theirs: CryptoAttribute; ours: CryptoAttribute }; refusal?: string } {
  const policy = local.srtp ?? 'off';
  const secure = SECURE_PROTOCOLS.has(m.protocol);
  if (policy === 'off') return secure ? { refusal: 'SRTP is off for this trunk' } : {};
  const reasons: string[] = [];
  for (const line of m.cryptos) {
    const parsed = parseCryptoAttribute(line);
    if (!parsed.ok) {
      reasons.push(parsed.reason);
      continue;
    }
    const theirs = parsed.crypto;
    const kept = local.currentSrtp?.suite === theirs.suite.name ? local.currentSrtp.local : undefined;
    return { crypto: { theirs, ours: { tag: theirs.tag, suite: theirs.suite, master: kept ?? newMasterKey(theirs.suite) } } };
  }
  if (secure || policy === 'required') {
    return { refusal: m.cryptos.length === 0 ? 'SRTP is required but the stream offers no crypto attribute' : `no usable crypto attribute (${reasons.join('; ')})` };
  }
  return {};
}

function localCodecs(local: LocalMedia): readonly Codec[] {
  return local.codecs ?? resolveCodecs(DEFAULT_CODEC_PREFERENCE);
}

function matchCodec(format: SdpFormat, codecs: readonly Codec[]): Codec | undefined {
  const name = format.name.toLowerCase();
  return codecs.find(
    (c) =>
      c.name.toLowerCase() === name &&
      c.clockRate === format.clockRate &&
      // opus is always written /2 (RFC 7587) but old stacks omit it; either way we decode mono.
      (name === 'opus' || c.channels === format.channels),
  );
}

/** RFC 4733 events should share the audio clock; fall back to the classic 8 kHz. */
function pickDtmf(formats: readonly SdpFormat[], clockRate: number): SdpFormat | undefined {
  const events = formats.filter((f) => f.name.toLowerCase() === DTMF_NAME);
  return events.find((f) => f.clockRate === clockRate) ?? events.find((f) => f.clockRate === 8000);
}

/** Their ptime if the codec can produce it, else the nearest shorter one, else its default. */
function pickPtime(codec: Codec, wanted: number | undefined, maxptime: number | undefined, preferred: number): number {
  const limit = Math.min(maxptime ?? Infinity, wanted ?? preferred);
  if (codec.ptimesMs.includes(limit)) return limit;
  const shorter = codec.ptimesMs.filter((p) => p <= limit).sort((a, b) => b - a)[0];
  return shorter ?? codec.ptimesMs[0] ?? 20;
}

function remoteOf(media: SdpMedia): NegotiatedMedia['remote'] {
  if (media.address === undefined) {
    throw new SdpNegotiationError('MALFORMED_SDP', `m= line ${media.index} has no connection address`);
  }
  return { address: media.address, port: media.port, rtcpPort: media.rtcpPort ?? media.port + 1 };
}

function writtenFormat(payloadType: number, codec: Codec): WrittenFormat {
  return {
    payloadType,
    name: codec.name,
    clockRate: codec.clockRate,
    channels: codec.channels,
    ...(codec.fmtp ? { fmtp: codec.fmtp } : {}),
  };
}

/** Answer an offer (initial INVITE or re-INVITE). Throws SdpNegotiationError (488) when nothing fits. */
export function answerOffer(offerSdp: string, local: LocalMedia, session: SdpSession): AnswerResult {
  const offer = parseSdp(offerSdp);
  const codecs = localCodecs(local);
  let chosen: { negotiated: NegotiatedMedia; media: WrittenMedia } | undefined;
  let sawAudio = false;
  let srtpRefusal: string | undefined;

  const written = offer.media.map((m): WrittenMedia => {
    const rejected: WrittenMedia = { kind: 'rejected', type: m.type, protocol: m.protocol, formatList: m.formatList };
    if (chosen || m.type !== 'audio' || m.port === 0 || !SUPPORTED_PROTOCOLS.has(m.protocol)) return rejected;
    sawAudio = true;
    const security = answerCrypto(m, local);
    if (security.refusal !== undefined) {
      srtpRefusal ??= security.refusal;
      return rejected;
    }
    const common = m.formats
      .map((f) => ({ format: f, codec: matchCodec(f, codecs) }))
      .filter((x): x is { format: SdpFormat; codec: Codec } => x.codec !== undefined);
    const first = common[0];
    if (!first) return rejected;

    const remote = remoteOf(m);
    const heldByAddress = isHoldAddress(remote.address);
    // c=0.0.0.0 means "do not send to me" whatever the direction attribute says.
    const offered = heldByAddress ? intersectDirections(m.direction, 'sendonly') : m.direction;
    const direction = intersectDirections(mirrorDirection(offered), local.direction ?? 'sendrecv');
    const dtmf = local.dtmf === false ? undefined : pickDtmf(m.formats, first.codec.clockRate);
    const ptimeMs = pickPtime(first.codec, m.ptimeMs, m.maxptimeMs, local.ptimeMs ?? 20);
    const answered = local.singleCodecAnswer ? [first] : common;

    const formats: WrittenFormat[] = answered.map(({ format, codec }) => writtenFormat(format.payloadType, codec));
    if (dtmf) {
      formats.push({ payloadType: dtmf.payloadType, name: dtmf.name, clockRate: dtmf.clockRate, channels: 1, fmtp: dtmf.fmtp ?? DTMF_EVENTS });
    }
    const media: WrittenMedia = {
      kind: 'active',
      type: 'audio',
      port: local.port,
      protocol: m.protocol,
      formats,
      ptimeMs,
      direction,
      ...(local.rtcpPort !== undefined ? { rtcpPort: local.rtcpPort } : {}),
      ...(security.crypto ? { cryptos: [writeCryptoAttribute(security.crypto.ours)] } : {}),
    };
    chosen = {
      media,
      negotiated: {
        remote,
        codec: first.codec,
        payloadType: first.format.payloadType,
        receiveCodecs: new Map(answered.map(({ format, codec }) => [format.payloadType, codec])),
        ...(dtmf ? { dtmfPayloadType: dtmf.payloadType, dtmfClockRate: dtmf.clockRate } : {}),
        ptimeMs,
        direction,
        remoteHold: heldByAddress || !canSend(mirrorDirection(m.direction)),
        ...(first.format.fmtp !== undefined ? { remoteFmtp: first.format.fmtp } : {}),
        mediaIndex: m.index,
        ...(security.crypto
          ? { srtp: { suite: security.crypto.ours.suite.name, local: security.crypto.ours.master, remote: security.crypto.theirs.master } }
          : {}),
      },
    };
    return media;
  });

  if (!chosen) {
    if (srtpRefusal !== undefined) throw new SdpNegotiationError('SRTP_NOT_ACCEPTABLE', srtpRefusal);
    throw sawAudio
      ? new SdpNegotiationError('NO_COMMON_CODEC', `no common audio codec; we support ${codecs.map((c) => c.name).join(', ')}`)
      : new SdpNegotiationError('NO_AUDIO_STREAM', 'the offer has no usable RTP/AVP audio stream');
  }
  const { negotiated } = chosen as { negotiated: NegotiatedMedia };
  const { sdp, session: next } = writeSdp(
    { address: local.address, sessionName: local.sessionName ?? 'Switchboard', media: written },
    session,
  );
  return { ...negotiated, answerSdp: sdp, session: next };
}

/** Our offer for an outbound call (or a re-INVITE, e.g. to hold with direction 'sendonly'). */
export function createOffer(local: LocalMedia, session: SdpSession): OfferResult {
  const codecs = localCodecs(local);
  if (codecs.length === 0) throw new RangeError('cannot offer without codecs');
  const used = new Set(codecs.map((c) => c.payloadType));
  const formats = codecs.map((codec) => ({ payloadType: codec.payloadType, codec }));
  const written: WrittenFormat[] = formats.map(({ payloadType, codec }) => writtenFormat(payloadType, codec));
  let dtmfPayloadType: number | undefined;
  if (local.dtmf !== false) {
    dtmfPayloadType = local.dtmfPayloadType ?? 101;
    // Never collide with a codec's payload type; dynamic types live in 96..127.
    while (used.has(dtmfPayloadType)) dtmfPayloadType = dtmfPayloadType >= 127 ? 96 : dtmfPayloadType + 1;
    written.push({ payloadType: dtmfPayloadType, name: DTMF_NAME, clockRate: 8000, channels: 1, fmtp: DTMF_EVENTS });
  }
  const ptimeMs = local.ptimeMs ?? 20;
  const direction = local.direction ?? 'sendrecv';
  const policy = local.srtp ?? 'off';
  // 'offered' is best-effort SRTP: RTP/AVP with a=crypto lines. A peer without SRTP ignores them
  // and answers plain RTP, one with it answers a crypto line (common SBC and softswitch practice;
  // RFC 5939 capability negotiation is rarely implemented, and two m= lines confuse many stacks).
  // 'required' offers RTP/SAVP, which a peer without SRTP must refuse.
  const cryptos = policy === 'off' ? undefined : offerCryptos().map((c) => (local.currentSrtp?.suite === c.suite.name ? { ...c, master: local.currentSrtp.local } : c));
  const media: WrittenMedia = {
    kind: 'active',
    type: 'audio',
    port: local.port,
    protocol: policy === 'required' ? 'RTP/SAVP' : 'RTP/AVP',
    formats: written,
    ptimeMs,
    direction,
    ...(local.rtcpPort !== undefined ? { rtcpPort: local.rtcpPort } : {}),
    ...(cryptos ? { cryptos: cryptos.map(writeCryptoAttribute) } : {}),
  };
  const { sdp, session: next } = writeSdp(
    { address: local.address, sessionName: local.sessionName ?? 'Switchboard', media: [media] },
    session,
  );
  return {
    offerSdp: sdp,
    session: next,
    offered: {
      formats,
      ...(dtmfPayloadType !== undefined ? { dtmfPayloadType } : {}),
      ptimeMs,
      direction,
      ...(cryptos ? { srtp: { policy, cryptos } } : {}),
    },
  };
}

/** Read the answer to an offer we made: the first answered codec we offered becomes the send codec. */
export function processAnswer(answerSdp: string, offered: OfferedMedia): NegotiatedMedia {
  const answer = parseSdp(answerSdp);
  const m = answer.media[0];
  if (!m || m.type !== 'audio') throw new SdpNegotiationError('MALFORMED_SDP', 'the answer has no audio m= line');
  if (m.port === 0) throw new SdpNegotiationError('STREAM_REJECTED', 'the far end rejected the audio stream');
  const offeredCodecs = offered.formats.map((f) => f.codec);
  const accepted = m.formats
    .map((format) => {
      // The answer must reuse our payload types (RFC 3264 §6.1); match by name when it does not.
      const byType = offered.formats.find((f) => f.payloadType === format.payloadType && matchCodec(format, [f.codec]));
      const codec = byType?.codec ?? matchCodec(format, offeredCodecs);
      return codec ? { format, codec } : undefined;
    })
    .filter((x): x is { format: SdpFormat; codec: Codec } => x !== undefined);
  const first = accepted[0];
  if (!first) throw new SdpNegotiationError('NO_COMMON_CODEC', 'the answer names no codec we offered');

  const srtp = answeredSrtp(m, offered);
  const remote = remoteOf(m);
  const heldByAddress = isHoldAddress(remote.address);
  const answered = heldByAddress ? intersectDirections(m.direction, 'sendonly') : m.direction;
  const dtmf = offered.dtmfPayloadType === undefined ? undefined : pickDtmf(m.formats, first.codec.clockRate);
  return {
    remote,
    codec: first.codec,
    payloadType: first.format.payloadType,
    receiveCodecs: new Map(accepted.map(({ format, codec }) => [format.payloadType, codec])),
    ...(dtmf ? { dtmfPayloadType: dtmf.payloadType, dtmfClockRate: dtmf.clockRate } : {}),
    ptimeMs: pickPtime(first.codec, m.ptimeMs, m.maxptimeMs, offered.ptimeMs),
    direction: intersectDirections(mirrorDirection(answered), offered.direction),
    remoteHold: heldByAddress || !canSend(mirrorDirection(m.direction)),
    ...(first.format.fmtp !== undefined ? { remoteFmtp: first.format.fmtp } : {}),
    mediaIndex: m.index,
    ...(srtp ? { srtp } : {}),
  };
}

/** The answer's crypto line must name a tag and suite we offered (RFC 4568 §7.1.3). */
function answeredSrtp(m: SdpMedia, offered: OfferedMedia): NegotiatedSrtp | undefined {
  const policy = offered.srtp?.policy ?? 'off';
  if (offered.srtp && m.cryptos.length > 0) {
    for (const line of m.cryptos) {
      const parsed = parseCryptoAttribute(line);
      if (!parsed.ok) continue;
      const ours = offered.srtp.cryptos.find((c) => c.tag === parsed.crypto.tag && c.suite.name === parsed.crypto.suite.name);
      if (ours) return { suite: ours.suite.name, local: ours.master, remote: parsed.crypto.master };
    }
    throw new SdpNegotiationError('SRTP_NOT_ACCEPTABLE', 'the answer names no crypto attribute we offered');
  }
  if (policy === 'required' || SECURE_PROTOCOLS.has(m.protocol)) {
    throw new SdpNegotiationError('SRTP_NOT_ACCEPTABLE', 'the answer has no crypto attribute for an SRTP stream');
  }
  return undefined;
}
