/**
 * The RTP socket I/O the loopback media tests run on: the process's I/O thread (the engine's
 * default), or with SWITCHBOARD_RTP_THREAD=0 in the environment the in-thread dgram path, so the
 * same tests cover either implementation (.ci/run runs the media and call suites both ways).
 */
import { rtpIoFor } from '../../src/media/rtp-io/index.ts';

export const RTP_THREAD = process.env['SWITCHBOARD_RTP_THREAD'] !== '0';
export const testRtpIo = rtpIoFor(RTP_THREAD);
