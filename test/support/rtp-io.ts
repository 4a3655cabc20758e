/**
 * The RTP socket I/O the loopback media tests run on: the in-thread dgram path (the engine's
 * default), or with SWITCHBOARD_RTP_THREAD=1 in the environment the process's I/O thread, so the
 * same tests cover either implementation (.ci/run runs the media and call suites both ways).
 */
import { rtpIoFor } from '../../src/media/rtp-io/index.ts';

export const RTP_THREAD = process.env['SWITCHBOARD_RTP_THREAD'] === '1';
export const testRtpIo = rtpIoFor(RTP_THREAD);
