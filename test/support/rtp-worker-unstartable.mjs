// An RTP I/O thread entry that cannot start (as when the native socket module fails to load):
// for the lost-thread fallback tests (test/integration/media/rtp-io-fallback.test.ts).
throw new Error('this RTP I/O thread cannot start');
