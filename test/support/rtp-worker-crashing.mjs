// The real RTP I/O thread (src/media/rtp-io/worker-entry.mjs), ending with code 1 a moment after
// it started, as a thread that faults would: for the lost-thread fallback tests.
import '../../src/media/rtp-io/worker-entry.mjs';

setTimeout(() => process.exit(1), 300);
