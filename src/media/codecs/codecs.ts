import type { Codec } from './codec.ts';
import { g722 } from './g722.ts';
import { opusCodec } from './opus.ts';
import { pcma } from './pcma.ts';
import { pcmu } from './pcmu.ts';

export type { Codec, CodecDecoder, CodecEncoder } from './codec.ts';

/** Every codec the engine can carry, keyed by lowercased SDP encoding name. */
export const codecRegistry: ReadonlyMap<string, Codec> = new Map<string, Codec>([
  ['pcmu', pcmu],
  ['pcma', pcma],
  ['g722', g722],
  ['opus', opusCodec],
]);

/** Our preference when we make the offer: wideband first, G.711 as the universal fallback. */
export const DEFAULT_CODEC_PREFERENCE: readonly string[] = ['opus', 'g722', 'pcmu', 'pcma'];

export function findCodec(name: string): Codec | undefined {
  return codecRegistry.get(name.toLowerCase());
}

/**
 * True for a codec that carries only the telephone band (8 kHz audio: G.711), whose 16 kHz frames
 * hold nothing above 4 kHz; false for wideband codecs and when there is no codec (virtual media).
 */
export function isNarrowbandCodec(name: string | undefined): boolean {
  const codec = name === undefined ? undefined : findCodec(name);
  return codec !== undefined && codec.sampleRate <= 8000;
}

/** Resolve a configured list of names, failing early on a typo rather than at call time. */
export function resolveCodecs(names: readonly string[], registry: ReadonlyMap<string, Codec> = codecRegistry): Codec[] {
  return names.map((name) => {
    const codec = registry.get(name.toLowerCase());
    if (!codec) throw new RangeError(`unknown codec "${name}"; known: ${[...registry.keys()].join(', ')}`);
    return codec;
  });
}
