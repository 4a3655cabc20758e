/**
 * ITU-T G.711 companding. Both laws are defined on sign-magnitude; like the ITU reference
 * software (G.191) a negative sample's magnitude is its one's complement (~x), so -1..-4 map to
 * "negative zero" rather than to the first non-zero level. Encoding goes through 64 KiB lookup
 * tables built once, so the per-packet cost is one load per sample.
 */

/** μ-law code for a 16-bit sample, computed from the segment definition (table builder only). */
function ulawFromLinear(x: number): number {
  const negative = x < 0;
  const magnitude = negative ? ~x : x; // 0..32767
  // μ-law is specified on 14-bit magnitudes, biased by 33 so every segment starts at a power of 2.
  const biased = Math.min((magnitude >> 2) + 33, 0x1fff);
  const segment = 31 - Math.clz32(biased) - 5; // 0..7
  const step = (biased >> (segment + 1)) & 0x0f;
  // The transmitted octet inverts every bit; the sign bit is set for positive samples.
  return ((negative ? 0x00 : 0x80) | ((7 - segment) << 4) | (15 - step)) & 0xff;
}

function linearFromUlaw(code: number): number {
  const inverted = ~code & 0xff;
  const segment = (inverted >> 4) & 0x07;
  const step = inverted & 0x0f;
  // Reconstruct at the middle of the quantisation interval, removing the bias, in 16-bit scale.
  const magnitude = (((step << 3) + 0x84) << segment) - 0x84;
  return inverted & 0x80 ? -magnitude : magnitude;
}

/** A-law code for a 16-bit sample (table builder only). */
function alawFromLinear(x: number): number {
  const negative = x < 0;
  const magnitude = (negative ? ~x : x) >> 4; // 12-bit magnitude, 0..2047
  let segment = 0;
  let step: number;
  if (magnitude < 16) {
    step = magnitude;
  } else {
    segment = 31 - Math.clz32(magnitude) - 3; // 1..7
    step = (magnitude >> (segment - 1)) & 0x0f;
  }
  // Positive samples carry the sign bit; even bits are inverted on the line (XOR 0x55).
  return ((negative ? 0x00 : 0x80) | (segment << 4) | step) ^ 0x55;
}

function linearFromAlaw(code: number): number {
  const c = code ^ 0x55;
  const segment = (c >> 4) & 0x07;
  let magnitude = ((c & 0x0f) << 4) + 8; // middle of the interval
  if (segment > 0) magnitude += 0x100;
  if (segment > 1) magnitude <<= segment - 1;
  return c & 0x80 ? magnitude : -magnitude;
}

function buildEncodeTable(fn: (x: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let x = -32768; x < 32768; x++) table[x & 0xffff] = fn(x);
  return table;
}

function buildDecodeTable(fn: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let c = 0; c < 256; c++) table[c] = fn(c);
  return table;
}

const ULAW_ENCODE = buildEncodeTable(ulawFromLinear);
const ULAW_DECODE = buildDecodeTable(linearFromUlaw);
const ALAW_ENCODE = buildEncodeTable(alawFromLinear);
const ALAW_DECODE = buildDecodeTable(linearFromAlaw);

export interface CompandingLaw {
  encode(pcm: Int16Array): Buffer;
  /** encode() into `out` at `offset` (pcm.length octets); returns pcm.length. */
  encodeInto(pcm: Int16Array, out: Uint8Array, offset: number): number;
  decode(payload: Uint8Array): Int16Array;
  /** decode() into `out` (payload.length samples); returns `out`. */
  decodeInto(payload: Uint8Array, out: Int16Array): Int16Array;
  encodeSample(x: number): number;
  decodeSample(code: number): number;
}

function law(encodeTable: Uint8Array, decodeTable: Int16Array): CompandingLaw {
  // Closures rather than methods using `this`: callers pass law.decode around on its own.
  const decodeInto = (payload: Uint8Array, out: Int16Array): Int16Array => {
    for (let i = 0; i < payload.length; i++) out[i] = decodeTable[payload[i]!]!;
    return out;
  };
  const encodeInto = (pcm: Int16Array, out: Uint8Array, offset: number): number => {
    for (let i = 0; i < pcm.length; i++) out[offset + i] = encodeTable[pcm[i]! & 0xffff]!;
    return pcm.length;
  };
  return {
    encode(pcm) {
      const out = Buffer.allocUnsafe(pcm.length);
      encodeInto(pcm, out, 0);
      return out;
    },
    encodeInto,
    decode: (payload) => decodeInto(payload, new Int16Array(payload.length)),
    decodeInto,
    encodeSample: (x) => encodeTable[x & 0xffff]!,
    decodeSample: (code) => decodeTable[code & 0xff]!,
  };
}

export const ulaw: CompandingLaw = law(ULAW_ENCODE, ULAW_DECODE);
export const alaw: CompandingLaw = law(ALAW_ENCODE, ALAW_DECODE);
