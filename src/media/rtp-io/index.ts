/**
 * RTP socket I/O, chosen once by the composition root: in its own thread (thread-io.ts, the
 * default) or on the event-loop thread (dgram-io.ts, SWITCHBOARD_RTP_THREAD=0). See types.ts for the seam.
 */
import { inThreadRtpIo } from './dgram-io.ts';
import { sharedRtpIoThread } from './thread-io.ts';
import type { RtpIo } from './types.ts';

export type { RtpIo, RtpSocket } from './types.ts';
export { inThreadRtpIo } from './dgram-io.ts';
export { RtpIoThread, sharedRtpIoThread } from './thread-io.ts';

/**
 * SWITCHBOARD_RTP_THREAD as parsed into the config: a handle on the process's I/O thread (its
 * close() ends the thread once no other handle is open), or in-thread dgram.
 */
export function rtpIoFor(thread: boolean): RtpIo {
  return thread ? sharedRtpIoThread().retain() : inThreadRtpIo;
}
