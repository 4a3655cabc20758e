/**
 * HTTP Range requests (RFC 9110 §14) for downloads: one `bytes=` range, resolved against the
 * object's size. Several ranges (multipart/byteranges) are not served: the whole object is, as
 * the RFC allows a server to ignore Range.
 */
import type { ByteRange } from './blob-store.ts';

export type RangeDecision =
  | { kind: 'whole' }
  | { kind: 'partial'; range: ByteRange }
  /** 416 with `Content-Range: bytes *\/size`. */
  | { kind: 'unsatisfiable' };

export function resolveRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined) return { kind: 'whole' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  // Another unit, a list of ranges or garbage: ignored, the whole object is served.
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'whole' };
  const first = m[1] === '' ? undefined : Number(m[1]);
  const last = m[2] === '' ? undefined : Number(m[2]);
  if ((first !== undefined && !Number.isSafeInteger(first)) || (last !== undefined && !Number.isSafeInteger(last))) return { kind: 'whole' };
  if (first === undefined) {
    // Suffix range: the last `last` bytes.
    if (last === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - last!), end: size - 1 } };
  }
  if (last !== undefined && last < first) return { kind: 'whole' }; // invalid: ignored (RFC 9110 §14.1.1)
  if (first >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start: first, end: Math.min(last ?? size - 1, size - 1) } };
}

export function contentRange(range: ByteRange, size: number): string {
  return `bytes ${range.start}-${range.end}/${size}`;
}
