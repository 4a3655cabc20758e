/**
 * A longer run of the edge fuzz campaign (test/support/edge-fuzz.ts through
 * test/integration/sip/edge-fuzz.test.ts): mutated SIP over UDP, TCP and TLS and mutated RTP
 * into a live SRTP call, against a real engine on loopback, then the checks that it still serves.
 *
 *   node --import tsx bench/fuzz-edge.ts [--seconds 60] [--seed 32]
 *
 * Bounded: at most 600 s of fuzzing per run; loopback addresses only. Vary --seed between runs
 * to cover new mutations; a failing seed reproduces.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, seed: { type: 'string', default: '32' } } });
const seconds = Number(values.seconds);
const seed = Number(values.seed);
if (!Number.isFinite(seconds) || seconds < 1 || seconds > 600) throw new Error('--seconds must be 1 to 600');
if (!Number.isInteger(seed)) throw new Error('--seed must be an integer');
const run = spawnSync('npx', ['vitest', 'run', 'test/integration/sip/edge-fuzz.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, EDGE_FUZZ_SECONDS: String(seconds), EDGE_FUZZ_SEED: String(seed) },
});
process.exit(run.status ?? 1);
