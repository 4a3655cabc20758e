// Helper threads lower their own priority and nobody else's.
import { readlinkSync } from 'node:fs';
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
      import { readlinkSync } from 'node:fs';
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
