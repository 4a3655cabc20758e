// Helper threads lower their own priority and nobody else's, and name themselves.
import { readFileSync, readlinkSync } from 'node:fs';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { HELPER_THREAD_NICE } from '../../../src/util/thread-priority.mjs';

const linux = process.platform === 'linux';

describe('niceThisThread', () => {
  it.runIf(linux)('renices the calling worker thread only', async () => {
    const url = new URL('../../../src/util/thread-priority.mjs', import.meta.url).href;
    const source = `
      import { parentPort } from 'node:worker_threads';
      import { readFileSync, readlinkSync } from 'node:fs';
      import { getPriority } from 'node:os';
      const { niceThisThread } = await import(${JSON.stringify(url)});
      const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
      const done = niceThisThread();
      parentPort.postMessage({ done, tid, nice: getPriority(tid) });
    `;
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`));
    const reply = await new Promise<{ done: boolean; tid: number; nice: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(reply.done).toBe(true);
    expect(reply.nice).toBe(HELPER_THREAD_NICE);
    const self = Number(readlinkSync('/proc/thread-self').split('/').pop());
    expect(reply.tid).not.toBe(self);
    // This thread, and the process as a whole, keep their priority.
    expect(getPriority(self)).toBe(getPriority(process.pid));
    expect(getPriority(self)).toBeLessThan(HELPER_THREAD_NICE);
  });
});

describe('nameThisThread', () => {
  it.runIf(linux)('names the calling worker thread only', async () => {
    const url = new URL('../../../src/util/thread-priority.mjs', import.meta.url).href;
    const source = `
      import { parentPort } from 'node:worker_threads';
      import { readFileSync } from 'node:fs';
      const { nameThisThread } = await import(${JSON.stringify(url)});
      const done = nameThisThread('sb-a-rather-long-name');
      parentPort.postMessage({ done, comm: readFileSync('/proc/thread-self/comm', 'utf8').trim() });
    `;
    const before = readFileSync('/proc/thread-self/comm', 'utf8');
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`));
    const reply = await new Promise<{ done: boolean; comm: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    // Linux keeps 15 bytes of it.
    expect(reply).toEqual({ done: true, comm: 'sb-a-rather-lon' });
    expect(readFileSync('/proc/thread-self/comm', 'utf8')).toBe(before);
  });
});
