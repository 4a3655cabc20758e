/*
 * The receive path's two pure cores (rtp_inbound.h): src/media/jitter-buffer.ts (JitterBuffer,
 * its EntryList, and the kthSmallest of src/util/kth-smallest.ts it ranks with) and
 * src/media/rtp-receiver-stats.ts (RtpReceiverStats), ported statement for statement.
 *
 * Same results, number for number: every double is computed by the same IEEE operations in the
 * same order as the TypeScript (no multiply-add is fused: see the pragma below), and where
 * JavaScript's semantics differ from C's they are spelt out (js_min / js_max keep Math.min /
 * Math.max's NaN and ±0 rules, js_round is Math.round, js_to_uint32 is `>>> 0`). Extended
 * sequence numbers and timestamps (JavaScript doubles that grow without bound) are int64_t here:
 * integers below 2^53 either way, so every sum, comparison and modulo agrees. The k-th smallest
 * is the same Hoare selection as kthSmallest, so even ties between -0 and +0 resolve alike.
 * test/unit/media/native-inbound.test.ts runs both on the same packets.
 *
 * Memory. A buffer holds at most max_packets entries plus, after a restart, up to max_packets of
 * the old stream's tail (`drain`), and one more while a push is between its insert and its
 * overflow drop: 2 x max_packets + 1 payload slots of max_payload bytes, allocated by jb_new and
 * never per packet. Free slots are a LIFO stack of slot numbers (kept apart from the slots, so
 * building it touches none of them): a buffer that holds a few packets keeps reusing the same few
 * slots, and the pages of the others are never touched (their memory stays virtual). The slots
 * are mapped from the kernel rather than malloc'ed: with the defaults they are just under glibc's
 * mmap threshold, so malloc would carve them from the heap, where a reused chunk may already be
 * resident and a freed one fragments the heap as calls come and go; a mapping starts untouched
 * and is returned whole when the call ends.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "rtp_inbound.h"

#include <math.h>
#include <stdlib.h>

/*
 * Built with AddressSanitizer (native/rtp-udp/fuzz): every slot is followed by a poisoned
 * redzone, and only the bytes of the payload it holds are readable, so a write past a slot or a
 * read past what a pull hands out is reported. The module's own build has neither: its slots
 * are max_payload bytes apart.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SLOT_STRIDE(max) ((((size_t)(max) + 7) & ~(size_t)7) + 32)
#define SLOT_HOLDS(p, length, max) (ASAN_POISON_MEMORY_REGION((p), SLOT_STRIDE(max)), ASAN_UNPOISON_MEMORY_REGION((p), (length) < (size_t)(max) ? (length) : (size_t)(max)))
#else
#define SLOT_STRIDE(max) ((size_t)(max))
#define SLOT_HOLDS(p, length, max) ((void)0)
#endif
#include <string.h>
#include <sys/mman.h>

/* A fused multiply-add rounds once where the TypeScript rounds twice (e.g. arrival − ts × msPerTick):
 * keep every product and sum separate, as V8 does. (-ffp-contract=off in binding.gyp says the same
 * for the whole module; this keeps the file right on its own.) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* ---- JavaScript's arithmetic where C's differs ---- */

/* Math.max: NaN if either is; +0 over -0. */
static double js_max(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

/* Math.min: NaN if either is; -0 over +0. */
static double js_min(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* Math.round: halves go up (towards +Infinity); -0 for [-0.5, -0]. x − floor(x) is exact. */
static double js_round(double x) {
  if (!isfinite(x)) return x;
  double r = floor(x);
  if (x - r >= 0.5) r += 1;
  if (r == 0 && signbit(x)) return -0.0;
  return r;
}

/* `x >>> 0`: ToUint32 (truncate, then modulo 2^32; NaN and ±Infinity give 0). */
static uint32_t js_to_uint32(double x) {
  if (!isfinite(x)) return 0;
  double m = fmod(trunc(x), 4294967296.0);
  if (m < 0) m += 4294967296.0;
  return (uint32_t)m;
}

/* ---- rtp-packet.ts helpers ---- */

/* seqDelta: signed distance from a to b in 16-bit sequence space, -32768..32767. */
static int32_t seq_delta(int32_t a, int32_t b) {
  int32_t d = (int32_t)(((uint32_t)b - (uint32_t)a) & 0xffffu);
  return d >= 0x8000 ? d - 0x10000 : d;
}

/* timestampDelta: `(b - a) | 0`, the signed distance in 32-bit timestamp space. */
static int64_t timestamp_delta(uint32_t a, uint32_t b) {
  uint32_t d = b - a;
  return d >= 0x80000000u ? (int64_t)d - 0x100000000LL : (int64_t)d;
}

/* mod16 / mod32 of jitter-buffer.ts: the wire value of an extended number, also below zero. */
static int32_t mod16(int64_t n) { return (int32_t)(((n % 0x10000) + 0x10000) % 0x10000); }
static uint32_t mod32(int64_t n) { return (uint32_t)(((n % 0x100000000LL) + 0x100000000LL) % 0x100000000LL); }

/* ---- jitter buffer ---- */

#define RECOMPUTE_EVERY 10
/* Bounds jb_options_error enforces: the TypeScript takes any number, these keep C's arrays sane. */
#define MAX_CLOCK_RATE 1000000
#define MAX_FRAME_MS 10000.0
#define MAX_HISTORY 100000
#define MAX_PACKETS 4096
#define MAX_PAYLOAD 65536

/* A buffered packet (the TypeScript Entry): the frame it plays as, and its place in the stream.
 * Its payload is the slot of the same number in `payloads`. */
typedef struct {
  int64_t ext_seq;
  int64_t ext_ts;
  uint32_t ssrc;
  uint32_t timestamp;
  uint32_t length;
  uint16_t seq;
  int16_t payload_type; /* -1: none */
} Entry;

struct JitterBuffer {
  JbOptions o;
  double ms_per_tick;
  int64_t ts_per_frame;

  /* The stream (JitterBuffer's ssrc, highestSeq, refTs, pendingBadSeq: -1 for undefined). */
  int has_ssrc;
  uint32_t ssrc;
  int64_t highest_seq;
  int64_t ref_ts;
  int32_t pending_bad_seq;

  /* EntryList: slot numbers in ext_seq order, `count` of them (at most max_packets + 1). */
  int *order;
  int count;
  /* The previous stream's tail still to play: a ring of slot numbers, at most max_packets. */
  int *drain;
  int drain_head;
  int drain_count;

  int started;
  int64_t cursor_seq;
  int64_t cursor_ts;
  int conceal_run;

  /* Ring of relative delays, +Infinity where not written yet, and its copy to rank. */
  double *history;
  double *scratch;
  int history_count;
  int history_pos;
  int since_recompute;
  int has_min_rel;
  double min_rel;
  double target_ms;
  double last_delay_ms;

  /* The TypeScript counters, as the numbers they are there. */
  double pushed, played, late, duplicates, lost, concealed, shrunk, overflow, resyncs;

  /* Payload slots: metadata, bytes (slot_count x max_payload, mapped), and the LIFO stack of free ones. */
  int slot_count;
  Entry *slots;
  uint8_t *payloads;
  size_t payload_bytes;
  int *free_slots;
  int free_count;
};

void jb_default_options(JbOptions *o, int clock_rate) {
  o->clock_rate = clock_rate;
  o->frame_ms = 20;
  o->min_delay_ms = 20;
  o->max_delay_ms = 200;
  o->initial_delay_ms = 60;
  o->history_packets = 150;
  o->max_conceal_frames = 5;
  o->resync_seq_jump = 50;
  o->resync_time_jump_ms = 2000;
  o->max_packets = 50;
  o->max_payload = 1280;
}

const char *jb_options_error(const JbOptions *o) {
  if (o->clock_rate < 1 || o->clock_rate > MAX_CLOCK_RATE) return "clockRate must be 1..1000000";
  if (!(o->frame_ms > 0 && o->frame_ms <= MAX_FRAME_MS)) return "frameMs must be more than 0 and at most 10000";
  if (!(o->min_delay_ms >= 0 && isfinite(o->min_delay_ms))) return "minDelayMs must be a finite number >= 0";
  if (!(o->max_delay_ms >= o->min_delay_ms && isfinite(o->max_delay_ms))) return "maxDelayMs must be finite and >= minDelayMs";
  if (!isfinite(o->initial_delay_ms)) return "initialDelayMs must be finite";
  if (o->history_packets < 1 || o->history_packets > MAX_HISTORY) return "historyPackets must be 1..100000";
  if (o->max_conceal_frames < 0) return "maxConcealFrames must be >= 0";
  if (o->resync_seq_jump < 0) return "resyncSeqJump must be >= 0";
  if (!(o->resync_time_jump_ms >= 0)) return "resyncTimeJumpMs must be >= 0";
  if (o->max_packets < 1 || o->max_packets > MAX_PACKETS) return "maxPackets must be 1..4096";
  if (o->max_payload < 1 || o->max_payload > MAX_PAYLOAD) return "maxPayload must be 1..65536";
  return NULL;
}

JitterBuffer *jb_new(const JbOptions *o) {
  if (jb_options_error(o)) return NULL;
  JitterBuffer *jb = calloc(1, sizeof *jb);
  if (!jb) return NULL;
  jb->o = *o;
  jb->ms_per_tick = 1000.0 / o->clock_rate;
  jb->ts_per_frame = (int64_t)js_round((o->clock_rate * o->frame_ms) / 1000);
  jb->slot_count = 2 * o->max_packets + 1;
  jb->order = malloc(sizeof(int) * (size_t)(o->max_packets + 1));
  jb->drain = malloc(sizeof(int) * (size_t)o->max_packets);
  jb->history = malloc(sizeof(double) * (size_t)o->history_packets);
  jb->scratch = malloc(sizeof(double) * (size_t)o->history_packets);
  jb->slots = malloc(sizeof(Entry) * (size_t)jb->slot_count);
  jb->free_slots = malloc(sizeof(int) * (size_t)jb->slot_count);
  /* Untouched until a slot is used: the kernel backs a page when it is first written. */
  jb->payload_bytes = (size_t)jb->slot_count * SLOT_STRIDE(o->max_payload);
  void *payloads = mmap(NULL, jb->payload_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  jb->payloads = payloads == MAP_FAILED ? NULL : payloads;
  /* (Sanitizer builds: nothing readable until a payload is stored.) */
  for (int i = 0; jb->payloads && i < jb->slot_count; i++) SLOT_HOLDS(jb->payloads + (size_t)i * SLOT_STRIDE(o->max_payload), 0, o->max_payload);
  if (!jb->order || !jb->drain || !jb->history || !jb->scratch || !jb->slots || !jb->free_slots || !jb->payloads) {
    jb_free(jb);
    return NULL;
  }
  /* Slot 0 on top: the first packets use the lowest slots, the others stay untouched. */
  for (int i = 0; i < jb->slot_count; i++) jb->free_slots[i] = jb->slot_count - 1 - i;
  jb->free_count = jb->slot_count;
  for (int i = 0; i < o->history_packets; i++) jb->history[i] = INFINITY;
  jb->pending_bad_seq = -1;
  jb->target_ms = js_min(o->max_delay_ms, js_max(o->min_delay_ms, o->initial_delay_ms));
  return jb;
}

void jb_free(JitterBuffer *jb) {
  if (!jb) return;
  free(jb->order);
  free(jb->drain);
  free(jb->history);
  free(jb->scratch);
  free(jb->slots);
  free(jb->free_slots);
  if (jb->payloads) munmap(jb->payloads, jb->payload_bytes);
  free(jb);
}

const JbOptions *jb_options_of(const JitterBuffer *jb) { return &jb->o; }

static uint8_t *payload_of(const JitterBuffer *jb, int slot) {
  return jb->payloads + (size_t)slot * SLOT_STRIDE(jb->o.max_payload);
}

static int take_slot(JitterBuffer *jb) { return jb->free_count > 0 ? jb->free_slots[--jb->free_count] : -1; }

static void give_slot(JitterBuffer *jb, int slot) { jb->free_slots[jb->free_count++] = slot; }

/* -- EntryList: binary search over `order`; -1 when absent. -- */

static int list_index(const JitterBuffer *jb, int64_t ext_seq) {
  int lo = 0;
  int hi = jb->count - 1;
  while (lo <= hi) {
    int mid = (lo + hi) >> 1;
    int64_t at = jb->slots[jb->order[mid]].ext_seq;
    if (at == ext_seq) return mid;
    if (at < ext_seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* The slot holding ext_seq, or -1. */
static int list_get(const JitterBuffer *jb, int64_t ext_seq) {
  int i = list_index(jb, ext_seq);
  return i < 0 ? -1 : jb->order[i];
}

/* The slot with the lowest ext_seq, or -1. */
static int list_first(const JitterBuffer *jb) { return jb->count > 0 ? jb->order[0] : -1; }

/* Adds a slot whose ext_seq is not in the list yet: appended, then moved back into place. */
static void list_insert(JitterBuffer *jb, int slot) {
  int64_t ext_seq = jb->slots[slot].ext_seq;
  int i = jb->count++;
  for (; i > 0 && jb->slots[jb->order[i - 1]].ext_seq > ext_seq; i--) jb->order[i] = jb->order[i - 1];
  jb->order[i] = slot;
}

/* Takes ext_seq out of the list (its slot stays in use: the caller frees or hands it on). */
static void list_delete(JitterBuffer *jb, int64_t ext_seq) {
  int i = list_index(jb, ext_seq);
  if (i < 0) return;
  memmove(jb->order + i, jb->order + i + 1, sizeof(int) * (size_t)(jb->count - i - 1));
  jb->count--;
}

/* -- the drain ring -- */

/* Appends to the old streams' tail, dropping its oldest past max_packets (`.slice(-maxPackets)`).
 * (That drop never happens, in TypeScript either: the drain is non-empty only until the new stream
 * starts, and a restart before that start adds no tail. It is kept as the TypeScript has it.) */
static void drain_append(JitterBuffer *jb, int slot) {
  int cap = jb->o.max_packets;
  if (jb->drain_count == cap) {
    give_slot(jb, jb->drain[jb->drain_head]);
    jb->drain_head = (jb->drain_head + 1) % cap;
    jb->drain_count--;
  }
  jb->drain[(jb->drain_head + jb->drain_count) % cap] = slot;
  jb->drain_count++;
}

static int drain_shift(JitterBuffer *jb) {
  int slot = jb->drain[jb->drain_head];
  jb->drain_head = (jb->drain_head + 1) % jb->o.max_packets;
  jb->drain_count--;
  return slot;
}

/* -- the estimate -- */

static double clamp_delay(const JitterBuffer *jb, double ms) {
  return js_min(jb->o.max_delay_ms, js_max(jb->o.min_delay_ms, ms));
}

static double delay_of(const JitterBuffer *jb, int64_t ext_ts, double now_ms) {
  return now_ms - ((double)ext_ts * jb->ms_per_tick + (jb->has_min_rel ? jb->min_rel : 0));
}

/* kthSmallest, verbatim: Hoare's selection, partly reordering `a`. Never reads outside a[0..n):
 * the pivot's own value stops the first scans, and each swap leaves a stop for the next. */
static double kth_smallest(double *a, int n, int k) {
  int lo = 0;
  int hi = n - 1;
  while (lo < hi) {
    double pivot = a[(lo + hi) >> 1];
    int i = lo;
    int j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        double t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/* Min and p95 of the history every RECOMPUTE_EVERY packets; the target falls a quarter frame at most. */
static void recompute(JitterBuffer *jb) {
  if (jb->history_count < 2) return;
  int n = jb->o.history_packets;
  memcpy(jb->scratch, jb->history, sizeof(double) * (size_t)n);
  double min = kth_smallest(jb->scratch, n, 0);
  double p95 = kth_smallest(jb->scratch, n, (int)floor(0.95 * (jb->history_count - 1)));
  jb->min_rel = min;
  jb->has_min_rel = 1;
  double wanted = clamp_delay(jb, p95 - min + jb->o.frame_ms / 2);
  jb->target_ms = wanted >= jb->target_ms ? wanted : js_max(wanted, jb->target_ms - jb->o.frame_ms / 4);
}

static void observe(JitterBuffer *jb, double rel) {
  jb->history[jb->history_pos] = rel;
  if (jb->history_count < jb->o.history_packets) jb->history_count++;
  jb->history_pos = (jb->history_pos + 1) % jb->o.history_packets;
  if (!jb->has_min_rel || rel < jb->min_rel) {
    jb->min_rel = rel;
    jb->has_min_rel = 1;
  }
  /* Rise at once: this packet needed more delay than we give. */
  double needed = clamp_delay(jb, rel - jb->min_rel + jb->o.frame_ms / 2);
  if (needed > jb->target_ms) jb->target_ms = needed;
  if (++jb->since_recompute >= RECOMPUTE_EVERY) {
    jb->since_recompute = 0;
    recompute(jb);
  }
}

/* -- stream state -- */

/* reset() once the entries and the drain are gone: forget the stream and the history. */
static void forget(JitterBuffer *jb) {
  jb->has_ssrc = 0;
  jb->started = 0;
  for (int i = 0; i < jb->o.history_packets; i++) jb->history[i] = INFINITY;
  jb->history_count = 0;
  jb->history_pos = 0;
  jb->has_min_rel = 0;
  jb->conceal_run = 0;
  jb->pending_bad_seq = -1;
}

void jb_reset(JitterBuffer *jb) {
  for (int i = 0; i < jb->count; i++) give_slot(jb, jb->order[i]);
  jb->count = 0;
  while (jb->drain_count > 0) give_slot(jb, drain_shift(jb));
  jb->drain_head = 0;
  forget(jb);
}

/* A new stream: the old one's unplayed tail goes to the drain, everything else is forgotten but
 * the target delay (the network path has not changed just because the stream did). */
static void restart(JitterBuffer *jb, uint32_t ssrc, uint16_t seq, uint32_t timestamp) {
  for (int i = 0; i < jb->count; i++) {
    int slot = jb->order[i];
    if (jb->started && jb->slots[slot].ext_seq >= jb->cursor_seq) drain_append(jb, slot);
    else give_slot(jb, slot);
  }
  jb->count = 0;
  forget(jb);
  jb->has_ssrc = 1;
  jb->ssrc = ssrc;
  jb->highest_seq = seq;
  jb->ref_ts = timestamp;
}

static void drop_oldest(JitterBuffer *jb) {
  int slot = list_first(jb);
  if (slot < 0) return;
  const Entry *oldest = &jb->slots[slot];
  list_delete(jb, oldest->ext_seq);
  jb->overflow++;
  if (jb->started && oldest->ext_seq >= jb->cursor_seq) {
    jb->cursor_seq = oldest->ext_seq + 1;
    jb->cursor_ts = oldest->ext_ts + jb->ts_per_frame;
  }
  give_slot(jb, slot);
}

int jb_push(JitterBuffer *jb, uint32_t ssrc, uint16_t seq, uint32_t timestamp, int payload_type,
            const uint8_t *payload, uint32_t length, double arrival_ms) {
  jb->pushed++;
  if (length > (uint32_t)jb->o.max_payload) {
    jb->late++;
    return JB_REFUSED;
  }
  int resynced = 0;
  if (!jb->has_ssrc || ssrc != jb->ssrc) {
    resynced = jb->has_ssrc;
    restart(jb, ssrc, seq, timestamp);
  }
  int64_t ext_seq = jb->highest_seq + seq_delta(mod16(jb->highest_seq), seq);
  int64_t ext_ts = jb->ref_ts + timestamp_delta(mod32(jb->ref_ts), timestamp);
  double rel = arrival_ms - (double)ext_ts * jb->ms_per_tick;

  int timing_jump = jb->has_min_rel && fabs(rel - jb->min_rel) > jb->o.resync_time_jump_ms;
  int forward_jump = ext_seq - jb->highest_seq > jb->o.resync_seq_jump;
  int backward_jump = jb->highest_seq - ext_seq > jb->o.resync_seq_jump;
  /* A far-behind packet starts a new stream only if its successor follows it (A.1 bad_seq). */
  int confirmed_backward = backward_jump && jb->pending_bad_seq == (int32_t)seq;
  if (!resynced && (timing_jump || forward_jump || confirmed_backward)) {
    restart(jb, ssrc, seq, timestamp);
    resynced = 1;
    ext_seq = jb->highest_seq;
    ext_ts = jb->ref_ts;
    rel = arrival_ms - (double)ext_ts * jb->ms_per_tick;
  } else if (backward_jump) {
    jb->pending_bad_seq = (seq + 1) & 0xffff;
    jb->late++;
    return JB_LATE;
  }
  if (resynced) jb->resyncs++;

  if (jb->started && ext_seq < jb->cursor_seq) {
    observe(jb, rel);
    jb->late++;
    return JB_LATE;
  }
  if (list_index(jb, ext_seq) >= 0) {
    jb->duplicates++;
    return JB_DUPLICATE;
  }
  observe(jb, rel);
  /* Always one free: the entries (at most max_packets here) and the drain (at most max_packets)
   * hold fewer than slot_count. */
  int slot = take_slot(jb);
  if (slot < 0) return JB_REFUSED;
  Entry *e = &jb->slots[slot];
  e->ext_seq = ext_seq;
  e->ext_ts = ext_ts;
  e->ssrc = ssrc;
  e->timestamp = timestamp;
  e->seq = seq;
  e->payload_type = (int16_t)payload_type;
  e->length = length;
  /* memmove: a C caller may push what the last pull handed out, from the slot it just freed. */
  SLOT_HOLDS(payload_of(jb, slot), (size_t)length, jb->o.max_payload);
  if (length > 0) memmove(payload_of(jb, slot), payload, length);
  list_insert(jb, slot);
  if (ext_seq > jb->highest_seq) {
    jb->highest_seq = ext_seq;
    jb->ref_ts = ext_ts;
  }
  while (jb->count > jb->o.max_packets) drop_oldest(jb);
  return resynced ? JB_RESYNC : JB_QUEUED;
}

/* -- pull's outputs -- */

static int out_empty(JbOut *out) {
  memset(out, 0, sizeof *out);
  out->kind = JB_EMPTY;
  return JB_EMPTY;
}

/* A frame from a slot just freed: its bytes stay until the next push writes a slot. */
static int out_frame(const JitterBuffer *jb, int slot, JbOut *out) {
  const Entry *e = &jb->slots[slot];
  memset(out, 0, sizeof *out);
  out->kind = JB_FRAME;
  out->payload = payload_of(jb, slot);
  out->length = e->length;
  out->sequence_number = e->seq;
  out->timestamp = e->timestamp;
  out->ssrc = e->ssrc;
  out->payload_type = e->payload_type;
  return JB_FRAME;
}

static int out_lost(const JitterBuffer *jb, uint32_t timestamp, int next_slot, JbOut *out) {
  memset(out, 0, sizeof *out);
  out->kind = JB_LOST;
  out->timestamp = timestamp;
  out->payload_type = -1;
  if (next_slot >= 0) {
    out->next = payload_of(jb, next_slot);
    out->next_length = jb->slots[next_slot].length;
  }
  return JB_LOST;
}

/* The slot at the cursor is declared lost; `next_slot` (or -1) is the payload after it, for FEC. */
static int declare_lost(JitterBuffer *jb, int next_slot, JbOut *out) {
  uint32_t timestamp = mod32(jb->cursor_ts);
  jb->cursor_seq++;
  jb->cursor_ts += jb->ts_per_frame;
  jb->lost++;
  jb->concealed++;
  jb->conceal_run++;
  return out_lost(jb, timestamp, next_slot, out);
}

/* Waiting for a late packet: conceal, up to max_conceal_frames, then go quiet. */
static int hold(JitterBuffer *jb, JbOut *out) {
  jb->conceal_run++;
  if (jb->conceal_run > jb->o.max_conceal_frames) return out_empty(out);
  jb->concealed++;
  return out_lost(jb, mod32(jb->cursor_ts), -1, out);
}

int jb_pull(JitterBuffer *jb, double now_ms, JbOut *out) {
  if (jb->drain_count > 0) {
    int slot = drain_shift(jb);
    give_slot(jb, slot);
    jb->played++;
    return out_frame(jb, slot, out);
  }
  if (!jb->started) {
    int first = list_first(jb);
    if (first < 0 || delay_of(jb, jb->slots[first].ext_ts, now_ms) < jb->target_ms) return out_empty(out);
    jb->started = 1;
    jb->cursor_seq = jb->slots[first].ext_seq;
    jb->cursor_ts = jb->slots[first].ext_ts;
  }
  int slot = list_get(jb, jb->cursor_seq);
  if (slot < 0) {
    int later = list_first(jb);
    /* Nothing behind the gap: the stream is late or paused. Hold the cursor. */
    if (later < 0) return hold(jb, out);
    if (jb->conceal_run >= jb->o.max_conceal_frames) {
      /* Already quiet: skip the gap silently; the cursor timestamp stays for the talkspurt check. */
      jb->cursor_seq = jb->slots[later].ext_seq;
      slot = later;
    } else if (delay_of(jb, jb->cursor_ts, now_ms) < jb->target_ms) {
      return hold(jb, out);
    } else {
      return declare_lost(jb, list_get(jb, jb->cursor_seq + 1), out);
    }
  }

  const Entry *e = &jb->slots[slot];
  if ((double)(e->ext_ts - jb->cursor_ts) > (double)jb->ts_per_frame / 2) {
    /* Silence suppression ended: start the new talkspurt once it is `target` old. */
    if (delay_of(jb, e->ext_ts, now_ms) < jb->target_ms) {
      jb->conceal_run = jb->o.max_conceal_frames;
      return out_empty(out);
    }
    jb->cursor_ts = e->ext_ts;
  }

  int next = list_get(jb, jb->cursor_seq + 1);
  if (next >= 0 && delay_of(jb, jb->slots[next].ext_ts, now_ms) >= jb->target_ms + jb->o.frame_ms / 4) {
    /* Playing late by more than a frame: drop one to catch up. */
    list_delete(jb, e->ext_seq);
    give_slot(jb, slot);
    jb->shrunk++;
    slot = next;
    e = &jb->slots[slot];
  }

  list_delete(jb, e->ext_seq);
  give_slot(jb, slot);
  jb->cursor_seq = e->ext_seq + 1;
  jb->cursor_ts = e->ext_ts + jb->ts_per_frame;
  jb->conceal_run = 0;
  jb->last_delay_ms = delay_of(jb, e->ext_ts, now_ms);
  jb->played++;
  return out_frame(jb, slot, out);
}

void jb_stats(const JitterBuffer *jb, JbStats *out) {
  out->pushed = jb->pushed;
  out->played = jb->played;
  out->late = jb->late;
  out->duplicates = jb->duplicates;
  out->lost = jb->lost;
  out->concealed = jb->concealed;
  out->shrunk = jb->shrunk;
  out->overflow = jb->overflow;
  out->resyncs = jb->resyncs;
  out->target_delay_ms = jb->target_ms;
  out->current_delay_ms = jb->last_delay_ms;
  out->buffered = jb->count;
}

/* ---- receiver statistics ---- */

#define RTP_SEQ_MOD 0x10000

struct RxStats {
  int clock_rate;
  int min_sequential;
  int max_dropout;
  int max_misorder;

  int has_ssrc;
  uint32_t ssrc;
  int probation;
  int32_t max_seq;
  int64_t cycles;
  int32_t base_seq;
  int32_t bad_seq;
  int64_t received;
  int64_t expected_prior;
  int64_t received_prior;

  double jitter;
  int has_last_arrival;
  double last_arrival_ms;
  uint32_t last_timestamp;

  uint32_t last_sr_middle;
  int has_last_sr;
  double last_sr_arrival_ms;
};

const char *rx_options_error(int clock_rate, int min_sequential, int max_dropout, int max_misorder) {
  if (clock_rate < 1 || clock_rate > MAX_CLOCK_RATE) return "clockRate must be 1..1000000";
  if (min_sequential < 0) return "minSequential must be >= 0";
  if (max_dropout < 0 || max_dropout > RTP_SEQ_MOD) return "maxDropout must be 0..65536";
  if (max_misorder < 0 || max_misorder > RTP_SEQ_MOD) return "maxMisorder must be 0..65536";
  return NULL;
}

RxStats *rx_new(int clock_rate, int min_sequential, int max_dropout, int max_misorder) {
  if (rx_options_error(clock_rate, min_sequential, max_dropout, max_misorder)) return NULL;
  RxStats *rx = calloc(1, sizeof *rx);
  if (!rx) return NULL;
  rx->clock_rate = clock_rate;
  rx->min_sequential = min_sequential;
  rx->max_dropout = max_dropout;
  rx->max_misorder = max_misorder;
  rx->bad_seq = RTP_SEQ_MOD + 1;
  return rx;
}

void rx_free(RxStats *rx) { free(rx); }

static void init_seq(RxStats *rx, int32_t seq) {
  rx->base_seq = seq;
  rx->max_seq = seq;
  rx->bad_seq = RTP_SEQ_MOD + 1;
  rx->cycles = 0;
  rx->received = 0;
  rx->received_prior = 0;
  rx->expected_prior = 0;
}

static int update_seq(RxStats *rx, int32_t seq) {
  int32_t udelta = (int32_t)((uint32_t)(seq - rx->max_seq) & 0xffffu);
  if (rx->probation > 0) {
    if (seq == ((rx->max_seq + 1) & 0xffff)) {
      rx->probation--;
      rx->max_seq = seq;
      if (rx->probation == 0) {
        init_seq(rx, seq);
        rx->received++;
        return RX_RESTART;
      }
    } else {
      rx->probation = rx->min_sequential - 1;
      rx->max_seq = seq;
    }
    return RX_PROBATION;
  }
  if (udelta == 0) {
    /* A duplicate of the highest: counted, as A.1 does, but it says nothing about timing. */
    rx->received++;
    return RX_REORDERED;
  } else if (udelta < rx->max_dropout) {
    if (seq < rx->max_seq) rx->cycles += RTP_SEQ_MOD;
    rx->max_seq = seq;
  } else if (udelta <= RTP_SEQ_MOD - rx->max_misorder) {
    if (seq != rx->bad_seq) {
      /* Believe a wild jump only when the next packet continues from it. */
      rx->bad_seq = (seq + 1) & 0xffff;
      return RX_BAD_SEQ;
    }
    init_seq(rx, seq);
    rx->has_last_arrival = 0;
    rx->received++;
    return RX_RESTART;
  } else {
    rx->received++;
    return RX_REORDERED;
  }
  rx->received++;
  return RX_VALID;
}

/* A.8's D(i-1,i) as a difference of differences: neither the timestamp wrap nor the clock's size matters. */
static void update_jitter(RxStats *rx, uint32_t timestamp, double arrival_ms) {
  if (rx->has_last_arrival) {
    double arrival_delta = ((arrival_ms - rx->last_arrival_ms) * rx->clock_rate) / 1000;
    int64_t ts_delta = timestamp_delta(rx->last_timestamp, timestamp);
    double d = fabs(arrival_delta - (double)ts_delta);
    rx->jitter += (d - rx->jitter) / 16;
  }
  rx->has_last_arrival = 1;
  rx->last_arrival_ms = arrival_ms;
  rx->last_timestamp = timestamp;
}

int rx_update(RxStats *rx, uint32_t ssrc, uint16_t seq, uint32_t timestamp, double arrival_ms) {
  if (!rx->has_ssrc || ssrc != rx->ssrc) {
    /* A new SSRC is a new source: its sequence space and jitter history are unrelated. */
    rx->has_ssrc = 1;
    rx->ssrc = ssrc;
    init_seq(rx, seq);
    rx->max_seq = (seq - 1) & 0xffff;
    rx->probation = rx->min_sequential;
    rx->has_last_arrival = 0;
    rx->jitter = 0;
  }
  int verdict = update_seq(rx, seq);
  if (verdict == RX_VALID || verdict == RX_RESTART) update_jitter(rx, timestamp, arrival_ms);
  return verdict;
}

void rx_sender_report(RxStats *rx, uint32_t ntp_seconds, uint32_t ntp_fraction, double arrival_ms) {
  rx->last_sr_middle = ((ntp_seconds & 0xffffu) << 16) | (ntp_fraction >> 16);
  rx->has_last_sr = 1;
  rx->last_sr_arrival_ms = arrival_ms;
}

void rx_snapshot(const RxStats *rx, RxSnapshot *out) {
  int64_t extended_max = rx->cycles + rx->max_seq;
  int64_t expected = !rx->has_ssrc || rx->received == 0 ? 0 : extended_max - rx->base_seq + 1;
  out->has_ssrc = rx->has_ssrc;
  out->ssrc = rx->has_ssrc ? rx->ssrc : 0;
  out->extended_highest_seq = (double)extended_max;
  out->expected = (double)expected;
  out->received = (double)rx->received;
  out->cumulative_lost = (double)(expected - rx->received);
  out->jitter = floor(rx->jitter);
  out->jitter_ms = (rx->jitter * 1000) / rx->clock_rate;
}

int rx_report_block(RxStats *rx, double now_ms, RxReportBlock *out) {
  if (!rx->has_ssrc || rx->received == 0) return 0;
  RxSnapshot snap;
  rx_snapshot(rx, &snap);
  int64_t expected = (int64_t)snap.expected;
  int64_t expected_interval = expected - rx->expected_prior;
  int64_t received_interval = rx->received - rx->received_prior;
  rx->expected_prior = expected;
  rx->received_prior = rx->received;
  int64_t lost_interval = expected_interval - received_interval;
  /* In 0..256: the interval's received count is never negative. */
  double fraction_lost =
      expected_interval == 0 || lost_interval <= 0 ? 0 : floor(((double)lost_interval * 256) / (double)expected_interval);
  /* The RR field is 24-bit signed: clamp rather than wrap (A.3). */
  int64_t cumulative_lost = expected - rx->received;
  if (cumulative_lost < -0x800000) cumulative_lost = -0x800000;
  if (cumulative_lost > 0x7fffff) cumulative_lost = 0x7fffff;
  double dlsr = !rx->has_last_sr ? 0 : js_max(0, js_round(((now_ms - rx->last_sr_arrival_ms) * 65536) / 1000));
  out->ssrc = rx->ssrc;
  out->fraction_lost = (uint32_t)js_min(255, fraction_lost);
  out->cumulative_lost = (int32_t)cumulative_lost;
  out->extended_highest_seq = js_to_uint32(snap.extended_highest_seq);
  out->jitter = js_to_uint32(snap.jitter);
  out->last_sr = rx->has_last_sr ? rx->last_sr_middle : 0;
  out->delay_since_last_sr = js_to_uint32(dlsr);
  return 1;
}
