/**
 * The RTP socket I/O the loopback media tests run on: the process's I/O thread (the engine's
 * default) with the native socket module, or as the environment says: SWITCHBOARD_RTP_NATIVE=0
 * the thread with dgram, SWITCHBOARD_RTP_THREAD=0 the in-thread dgram path. So the same tests
 * cover each implementation (.ci/run runs the media and call suites all three ways).
 */
import { rtpIoFor, sharedRtpIoThread } from '../../src/media/rtp-io/index.ts';

export const RTP_THREAD = process.env['SWITCHBOARD_RTP_THREAD'] !== '0';
export const RTP_NATIVE = RTP_THREAD && process.env['SWITCHBOARD_RTP_NATIVE'] !== '0';
sharedRtpIoThread().preferNative(RTP_NATIVE);
export const testRtpIo = rtpIoFor(RTP_THREAD);
