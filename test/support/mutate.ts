/** Mutations for fuzzing protocol input, reproducible from a seed. */

/** Deterministic PRNG so a failure reproduces. */
export function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const INTERESTING = [0x00, 0x0d, 0x0a, 0x20, 0x09, 0x22, 0x3c, 0x3e, 0x2c, 0x3b, 0x3a, 0x25, 0x5c, 0x40, 0xff, 0x2d, 0x30, 0x39];

/** 1–6 edits: a byte replaced, inserted or removed, or the tail cut (SIP-significant bytes favoured). */
export function mutate(buf: Buffer, rnd: () => number): Buffer {
  let out = Buffer.from(buf);
  const edits = 1 + Math.floor(rnd() * 6);
  for (let e = 0; e < edits; e++) {
    const pos = Math.floor(rnd() * Math.max(1, out.length));
    const byte = rnd() < 0.6 ? INTERESTING[Math.floor(rnd() * INTERESTING.length)]! : Math.floor(rnd() * 256);
    const op = Math.floor(rnd() * 4);
    if (op === 0) out[pos] = byte;
    else if (op === 1) out = Buffer.concat([out.subarray(0, pos), Buffer.from([byte]), out.subarray(pos)]);
    else if (op === 2) out = Buffer.concat([out.subarray(0, pos), out.subarray(pos + 1 + Math.floor(rnd() * 8))]);
    else out = out.subarray(0, pos);
  }
  return out;
}
