/**
 * Summarise a V8 sampling heap profile (from `bench/calls.ts --heap-prof DIR`, which keeps the
 * samples of objects the GC has collected since): bytes allocated by function, by function with
 * its caller, and by file, top N. With the window's length it also prints the allocation rate.
 * Usage: node --import tsx bench/tools/heap-summary.ts FILE.heapprofile [top=30] [seconds]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: heap-summary.ts FILE.heapprofile [top] [seconds]');
const top = Number(process.argv[3] ?? 30);
const seconds = Number(process.argv[4] ?? NaN);
const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: Node };
const short = (url: string) => url.replace(/^file:\/\/.*?\/(src|bench|test|node_modules)\//, '$1/');
const name = (n: Node) => `${n.callFrame.functionName || '(anonymous)'}  ${short(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
const byFn = new Map<string, number>();
const byPair = new Map<string, number>();
const byFile = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
let total = 0;
const walk = (n: Node, parent: Node | undefined) => {
  if (n.selfSize > 0) {
    total += n.selfSize;
    add(byFn, name(n), n.selfSize);
    add(byPair, `${name(n)}  ← ${parent ? name(parent) : '(root)'}`, n.selfSize);
    add(byFile, short(n.callFrame.url) || n.callFrame.functionName, n.selfSize);
  }
  for (const c of n.children) walk(c, n);
};
walk(head, undefined);
const rate = Number.isFinite(seconds) ? `, ${(total / seconds / 2 ** 20).toFixed(1)} MiB/s over ${seconds} s` : '';
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 2 ** 20).toFixed(1)} MiB sampled${rate})`);
  for (const [k, b] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((b / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
};
print('allocated by function', byFn);
print('allocated by function ← caller', byPair);
print('allocated by file', byFile);
