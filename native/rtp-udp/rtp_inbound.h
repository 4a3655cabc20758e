/*
 * The receive path's two pure cores in C, for calls whose packets the event-loop thread takes
 * straight from the inbound ring (fast_drain.c): the adaptive jitter buffer of
 * src/media/jitter-buffer.ts and the RFC 3550 receiver statistics of
 * src/media/rtp-receiver-stats.ts, each the same algorithm with the same results, number for
 * number (test/unit/media/native-inbound.test.ts runs both on the same packets).
 *
 * No allocation per packet, no locks, no clock: the caller passes every time, in ms, as doubles.
 */
#ifndef RTP_INBOUND_H
#define RTP_INBOUND_H

#include <stdint.h>

/* ---- jitter buffer (src/media/jitter-buffer.ts) ---- */

/* push() results, as PushResult; JB_REFUSED: a payload longer than the buffer's slots (counted
 * as pushed and late, and otherwise ignored: it neither restarts nor times the stream). */
enum { JB_QUEUED = 0, JB_RESYNC = 1, JB_LATE = 2, JB_DUPLICATE = 3, JB_REFUSED = -1 };
/* pull() kinds, as JitterOutput['kind']. */
enum { JB_EMPTY = 0, JB_FRAME = 1, JB_LOST = 2 };

typedef struct JbOptions {
  int clock_rate;
  double frame_ms;            /* 20 */
  double min_delay_ms;        /* 20 */
  double max_delay_ms;        /* 200 */
  double initial_delay_ms;    /* 60 */
  int history_packets;        /* 150 */
  int max_conceal_frames;     /* 5 */
  int resync_seq_jump;        /* 50 */
  double resync_time_jump_ms; /* 2000 */
  int max_packets;            /* 50 */
  /* Longest payload a slot holds (longer: JB_REFUSED); 1280 by default. The slots a buffer has
   * are allocated once, but only those in use are touched, so the memory a call really uses
   * follows what it buffers (a free list reuses the same few), not max_packets x max_payload. */
  int max_payload;
} JbOptions;

/* The defaults JitterBuffer's constructor uses, for this clock rate. */
void jb_default_options(JbOptions *o, int clock_rate);

typedef struct JitterBuffer JitterBuffer;

/* NULL when out of memory or the options are out of range (see jb_options_error). */
JitterBuffer *jb_new(const JbOptions *o);
/* Why these options cannot make a buffer, or NULL when they can. */
const char *jb_options_error(const JbOptions *o);
void jb_free(JitterBuffer *jb);
/* The options the buffer was made with (e.g. max_payload, to size a copy of what jb_pull gives). */
const JbOptions *jb_options_of(const JitterBuffer *jb);

/* payload_type: -1 for none (JitterPacket.payloadType undefined). */
int jb_push(JitterBuffer *jb, uint32_t ssrc, uint16_t seq, uint32_t timestamp, int payload_type,
            const uint8_t *payload, uint32_t length, double arrival_ms);

typedef struct JbOut {
  int kind;
  /* JB_FRAME: the packet. JB_LOST: timestamp only, and next/next_length when the following
   * payload is already buffered (next NULL otherwise). Pointers stay valid until the next call on
   * this buffer. */
  const uint8_t *payload;
  uint32_t length;
  uint16_t sequence_number;
  uint32_t timestamp;
  uint32_t ssrc;
  int payload_type;
  const uint8_t *next;
  uint32_t next_length;
} JbOut;

int jb_pull(JitterBuffer *jb, double now_ms, JbOut *out);
void jb_reset(JitterBuffer *jb);

typedef struct JbStats {
  double pushed, played, late, duplicates, lost, concealed, shrunk, overflow, resyncs;
  double target_delay_ms, current_delay_ms, buffered;
} JbStats;
void jb_stats(const JitterBuffer *jb, JbStats *out);

/* ---- receiver statistics (src/media/rtp-receiver-stats.ts) ---- */

/* update() verdicts, as SeqVerdict. */
enum { RX_VALID = 0, RX_REORDERED = 1, RX_PROBATION = 2, RX_BAD_SEQ = 3, RX_RESTART = 4 };

typedef struct RxStats RxStats;

/* Defaults as RtpReceiverStats: min_sequential 2, max_dropout 3000, max_misorder 100. NULL when out
 * of memory or the options are out of range (see rx_options_error). */
RxStats *rx_new(int clock_rate, int min_sequential, int max_dropout, int max_misorder);
/* Why these options cannot make statistics, or NULL when they can. */
const char *rx_options_error(int clock_rate, int min_sequential, int max_dropout, int max_misorder);
void rx_free(RxStats *rx);
int rx_update(RxStats *rx, uint32_t ssrc, uint16_t seq, uint32_t timestamp, double arrival_ms);
void rx_sender_report(RxStats *rx, uint32_t ntp_seconds, uint32_t ntp_fraction, double arrival_ms);

typedef struct RxSnapshot {
  int has_ssrc;
  uint32_t ssrc;
  double extended_highest_seq, expected, received, cumulative_lost;
  double jitter; /* floored, RTP timestamp units */
  double jitter_ms;
} RxSnapshot;
void rx_snapshot(const RxStats *rx, RxSnapshot *out);

typedef struct RxReportBlock {
  uint32_t ssrc;
  uint32_t fraction_lost;
  int32_t cumulative_lost;
  uint32_t extended_highest_seq, jitter, last_sr, delay_since_last_sr;
} RxReportBlock;
/* 1 and the block, or 0 (no confirmed source yet); consumes the interval counters as reportBlock(). */
int rx_report_block(RxStats *rx, double now_ms, RxReportBlock *out);

#endif
