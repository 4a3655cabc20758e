/**
 * native/rtp-udp/rtp_udp.c calls its inbound hook from a libuv poll, with no JavaScript on the
 * stack. It does so as Node's own handles call into JavaScript, through napi_make_callback in an
 * async context of its own (created when the module is initialised): the hook runs as an async
 * resource (async_hooks, AsyncLocalStorage) of whoever set the module up, not in no context at
 * all, and what it queues runs before the loop goes on. Only the module's own sockets take part
 * (its send is synchronous), so no other callback of this thread runs in between.
 */
import { AsyncLocalStorage, executionAsyncId } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { loadNativeUdp } from '../../../../src/media/rtp-io/native-udp.ts';
import { hrOriginMs } from '../../../../src/media/rtp-io/protocol.ts';
import { SpscRing } from '../../../../src/media/rtp-io/ring.ts';

describe('native UDP inbound hook', () => {
  it('runs in the async context of the module set-up, and its microtasks before the loop goes on', async () => {
    const order: string[] = [];
    const seen: Array<{ asyncId: number; store: string | undefined }> = [];
    const als = new AsyncLocalStorage<string>();
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const udp = als.run('set-up', () =>
      loadNativeUdp(SpscRing.create(1 << 12), hrOriginMs(), () => {
        seen.push({ asyncId: executionAsyncId(), store: als.getStore() });
        order.push('hook');
        queueMicrotask(() => order.push('microtask'));
        setImmediate(() => {
          order.push('immediate');
          done();
        });
      }),
    );
    expect(udp, 'native/rtp-udp is built in every test run').toBeDefined();
    const [receiverFd, receiverPort] = udp!.open('127.0.0.1', 0) as [number, number];
    const [senderFd] = udp!.open('127.0.0.1', 0) as [number, number];
    const receiver = udp!.startReceiving(receiverFd, 1) as object;
    const sender = udp!.startReceiving(senderFd, 2) as object;
    try {
      expect(udp!.send(senderFd, Uint8Array.of(0x80, 0, 0, 1), receiverPort, '127.0.0.1')).toBe(0);
      await finished;
      expect(order).toEqual(['hook', 'microtask', 'immediate']);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.asyncId).toBeGreaterThan(0);
      expect(seen[0]!.store).toBe('set-up');
    } finally {
      udp!.close(receiver);
      udp!.close(sender);
    }
  });
});
