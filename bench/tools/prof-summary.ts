/**
 * Summarise a V8 .cpuprofile (from `bench/calls.ts --cpu-prof DIR`): self time by function and by
 * file, top N. Usage: node --import tsx bench/tools/prof-summary.ts FILE.cpuprofile [top=30]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
if (!file) throw new Error('usage: prof-summary.ts FILE.cpuprofile [top]');
const top = Number(process.argv[3] ?? 30);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const short = (url: string) => url.replace(/^file:\/\/.*?\/(src|bench|test|node_modules)\//, '$1/').replace(/^node:/, 'node:');
const byFn = new Map<string, number>();
const byFile = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const f = `${n.callFrame.functionName || '(anonymous)'}  ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  byFn.set(f, (byFn.get(f) ?? 0) + us);
  const fileKey = short(n.callFrame.url) || n.callFrame.functionName;
  byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + us);
}
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 1e6).toFixed(1)} s sampled)`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
};
print('self time by function', byFn);
print('self time by file', byFile);
