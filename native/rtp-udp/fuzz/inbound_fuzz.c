/*
 * Random and hostile streams through rtp_inbound.c, for a build with AddressSanitizer and
 * UndefinedBehaviorSanitizer (test/unit/media/native-inbound-fuzz.test.ts compiles and runs it):
 * sequence numbers that jump, wrap and repeat; timestamps that jump; SSRC flips; payloads from
 * empty to longer than a slot; payload types out of range; arrival and pull times that go back,
 * or are NaN or infinite (a time is only a number to the N-API layer); tiny and odd buffer
 * options. What it checks is that nothing reads or writes out of bounds, no conversion overflows
 * and no payload handed out is unreadable; the results themselves are the parity tests' business.
 *
 *   inbound_fuzz OPERATIONS SEED → "ok frames F lost L refused R" on stdout, exit 0
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../rtp_inbound.h"

static uint64_t state = 88172645463325252ull;

static uint64_t rnd(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

/* Mostly `base`; now and then a time from the past, or one that is no time at all. */
static double hostile_time(double base) {
  switch (rnd() % 40) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -1e300;
    case 4: return 1e300;
    case 5: return base - (double)(rnd() % 100000);
    default: return base;
  }
}

/* Every byte of what a pull hands out, read (ASan checks it is all inside a live allocation). */
static unsigned touch(const uint8_t *p, uint32_t n) {
  unsigned x = 0;
  for (uint32_t i = 0; i < n; i++) x ^= p[i];
  return x;
}

int main(int argc, char **argv) {
  long operations = argc > 1 ? atol(argv[1]) : 1000000;
  if (argc > 2) state ^= strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull;
  static uint8_t payload[4096];
  for (int i = 0; i < 4096; i++) payload[i] = (uint8_t)rnd();
  long frames = 0, lost = 0, refused = 0;
  unsigned sink = 0;
  const int streams = 200;
  for (int round = 0; round < streams; round++) {
    JbOptions o;
    jb_default_options(&o, rnd() % 3 ? 8000 : (rnd() % 2 ? 16000 : 48000));
    if (rnd() % 4 == 0) {
      o.max_packets = 1 + (int)(rnd() % 8);
      o.history_packets = 1 + (int)(rnd() % 8);
      o.max_payload = 1 + (int)(rnd() % 200);
    }
    if (rnd() % 4 == 0) {
      o.frame_ms = (double)(5 + rnd() % 60);
      o.max_conceal_frames = (int)(rnd() % 10);
      o.resync_seq_jump = 1 + (int)(rnd() % 100);
    }
    if (jb_options_error(&o)) continue;
    JitterBuffer *jb = jb_new(&o);
    RxStats *rx = rx_new(o.clock_rate, 1 + (int)(rnd() % 3), 1 + (int)(rnd() % 3000), 1 + (int)(rnd() % 100));
    if (!jb || !rx) return 2;
    uint16_t seq = (uint16_t)rnd();
    uint32_t ts = (uint32_t)rnd(), ssrc = (uint32_t)rnd();
    double now = (double)(rnd() % 1000000);
    for (long k = 0; k < operations / streams; k++) {
      switch (rnd() % 16) {
        case 0: seq += (uint16_t)(rnd() % 70000); break;
        case 1: ts += (uint32_t)rnd(); break;
        case 2: ssrc = (uint32_t)(rnd() % 3); break;
        case 3: seq -= (uint16_t)(rnd() % 50); break;
        default:
          seq++;
          ts += (uint32_t)(o.clock_rate / 50);
      }
      now += (double)(rnd() % 40);
      uint32_t length = rnd() % 8 ? (uint32_t)(rnd() % 400) : (uint32_t)(rnd() % 4096);
      int payload_type = (int)(rnd() % 130) - 1;
      if (jb_push(jb, ssrc, seq, ts, payload_type, payload, length, hostile_time(now)) == JB_REFUSED) refused++;
      rx_update(rx, ssrc, seq, ts, hostile_time(now));
      if (rnd() % 3 == 0) {
        JbOut out;
        int kind = jb_pull(jb, hostile_time(now), &out);
        if (kind == JB_FRAME) {
          frames++;
          sink ^= touch(out.payload, out.length);
        } else if (kind == JB_LOST) {
          lost++;
          if (out.next) sink ^= touch(out.next, out.next_length);
        }
      }
      if (rnd() % 500 == 0) rx_sender_report(rx, (uint32_t)rnd(), (uint32_t)rnd(), hostile_time(now));
      if (rnd() % 200 == 0) {
        RxReportBlock block;
        RxSnapshot snapshot;
        JbStats stats;
        rx_report_block(rx, hostile_time(now), &block);
        rx_snapshot(rx, &snapshot);
        jb_stats(jb, &stats);
      }
      if (rnd() % 5000 == 0) jb_reset(jb);
    }
    jb_free(jb);
    rx_free(rx);
  }
  printf("ok frames %ld lost %ld refused %ld (%u)\n", frames, lost, refused, sink & 1);
  return 0;
}
