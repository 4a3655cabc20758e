/*
 * The inbound ring's common case, taken in C on the event-loop thread.
 *
 * Every datagram the RTP I/O thread receives crosses to the event-loop thread as a record of the
 * inbound ring (src/media/rtp-io/ring.ts, records.ts). For most of a call, nearly all of them are
 * the same thing: an RTP packet from the source the call latched to, with the call's audio
 * payload type and a plain 12-byte header. In JavaScript each one cost a Buffer, an address
 * object, an event, a parse, the source filter, the receiver statistics and the jitter buffer's
 * push, on objects gone cold since the call's last packet: about a seventh of the event loop at
 * 100 calls (docs/bench-history.md, 2026-11-28 10:05).
 *
 * A call's inbound path (src/media/rtp-session-inbound.ts) attaches its socket here once its
 * source is locked (src/media/source-filter.ts; a lock that moves detaches first), with the jitter buffer and
 * receiver statistics it already uses (rtp_inbound.c, through inbound_napi.c) and a block of
 * shared numbers (the FAST_* words below, a Float64Array the inbound path reads too). From then
 * on fastDrain() takes that socket's plain audio packets from the ring itself: source check,
 * counters, receiver statistics, the ptime watch, jitter buffer: exactly what
 * InboundPath.receive() does for such a packet. Anything else (another payload type: DTMF,
 * comfort noise; RTCP multiplexed; a header with CSRCs, an extension or padding; another
 * source; a record that is not a packet; a socket not attached) stops the drain at that record,
 * for the JavaScript drain to take as before; then it calls fastDrain() again. So records are
 * still handled strictly in ring order.
 *
 * A packet whose timing would make InboundPath rebuild its jitter buffer for another ptime is
 * left to JavaScript too, untouched: the ptime watch's state lives in the shared words, so
 * InboundPath makes the same decision on it, and detaches.
 *
 * Threading: the attached table is per thread (only the event-loop thread calls these), keyed
 * by the ring and the socket id, so several rings (RtpIoThreads in one process, tests) coexist.
 */
#define NAPI_VERSION 8
#include "fast_drain.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inbound_napi.h"
#include "napi_util.h"

#define RING_HEADER_BYTES 16
#define RING_WRITE 0
#define RING_READ 1
#define RING_WRAP (-1)
#define RECORD_HEADER 16
#define KIND_PACKET 1
#define MAX_ADDRESS 255

/* The shared words (src/media/rtp-session-inbound.ts: FAST). */
enum {
  FAST_PACKETS = 0,     /* packets taken here and not yet folded into InboundPath's counters */
  FAST_BYTES = 1,       /* their payload bytes */
  FAST_LAST_MEDIA = 2,  /* session time of the last audio or DTMF packet (InboundPath's lastMediaMs) */
  FAST_LAST_SEQ = 3,    /* the ptime watch: last audio packet's sequence number (-1: none) */
  FAST_LAST_TS = 4,     /*   and its timestamp */
  FAST_ODD_TICKS = 5,   /*   the odd duration seen */
  FAST_ODD_RUN = 6,     /*   and how many in a row */
  FAST_OFFSET = 7,      /* session time minus the ring's time base (performance.now()) */
  FAST_FRAME_MS = 8,    /* the jitter buffer's frame duration */
  FAST_CLOCK_RATE = 9,  /* the audio codec's RTP clock rate */
  FAST_WORDS = 10
};
/* Consecutive packets with one odd duration before InboundPath rebuilds (PTIME_EVIDENCE). */
#define PTIME_EVIDENCE 3

typedef struct Attached {
  const uint8_t *ring; /* NULL: a free slot; TOMBSTONE: a deleted one */
  uint32_t id;
  JitterBuffer *jb;
  RxStats *rx;
  double *words;
  void *jb_pin; /* jb_unpin() at release */
  napi_ref jb_ref, rx_ref, words_ref;
  uint8_t address[MAX_ADDRESS];
  uint8_t address_length;
  uint16_t port;
  uint8_t payload_type;
} Attached;

static const uint8_t TOMBSTONE_MARK;
#define TOMBSTONE (&TOMBSTONE_MARK)

/* Open addressing, linear probing; grows at half full. Per thread: see the header comment. */
static __thread Attached *table;
static __thread uint32_t table_size; /* a power of two, or 0 */
static __thread uint32_t table_used; /* live and tombstones */

static uint32_t slot_hash(const uint8_t *ring, uint32_t id) {
  uint64_t h = ((uint64_t)(uintptr_t)ring >> 4) ^ ((uint64_t)id * 0x9E3779B97F4A7C15ull);
  return (uint32_t)(h ^ (h >> 32));
}

static Attached *find(const uint8_t *ring, uint32_t id) {
  if (table_size == 0) return NULL;
  uint32_t mask = table_size - 1;
  for (uint32_t i = slot_hash(ring, id) & mask;; i = (i + 1) & mask) {
    Attached *a = &table[i];
    if (a->ring == NULL) return NULL;
    if (a->ring == ring && a->id == id) return a;
  }
}

static int grow(void) {
  uint32_t size = table_size ? table_size * 2 : 64;
  Attached *next = calloc(size, sizeof *next);
  if (!next) return 0;
  uint32_t used = 0;
  for (uint32_t i = 0; i < table_size; i++) {
    Attached *a = &table[i];
    if (a->ring == NULL || a->ring == TOMBSTONE) continue;
    for (uint32_t j = slot_hash(a->ring, a->id) & (size - 1);; j = (j + 1) & (size - 1)) {
      if (next[j].ring == NULL) {
        next[j] = *a;
        used++;
        break;
      }
    }
  }
  free(table);
  table = next;
  table_size = size;
  table_used = used;
  return 1;
}

static void release(napi_env env, Attached *a) {
  jb_unpin(a->jb_pin);
  napi_delete_reference(env, a->jb_ref);
  napi_delete_reference(env, a->rx_ref);
  napi_delete_reference(env, a->words_ref);
  memset(a, 0, sizeof *a);
  a->ring = TOMBSTONE;
}


/* The data of a Uint8Array (type 0) or Float64Array (type 1) argument, or NULL. */
static void *typed_data(napi_env env, napi_value v, napi_typedarray_type want, size_t *length) {
  napi_typedarray_type type;
  void *data;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, length, &data, &buffer, &offset) != napi_ok || type != want) return NULL;
  return data;
}

static int get_u32(napi_env env, napi_value v, uint32_t *out) {
  return napi_get_value_uint32(env, v, out) == napi_ok;
}

/*
 * fastAttach(ring, id, jb, rx, words, address, port, payloadType): true once the socket's plain
 * audio packets are taken here. `ring` is the whole inbound ring (a Uint8Array over its
 * SharedArrayBuffer, header included), `address` the latched source's ASCII bytes, `words` a
 * Float64Array of FAST_WORDS numbers over an ArrayBuffer or SharedArrayBuffer (never moved).
 * Attaching an attached socket replaces what it had.
 */
static napi_value FastAttach(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 8) return throw_msg(env, "fastAttach(ring, id, jb, rx, words, address, port, payloadType)");
  size_t ring_length, words_length, address_length;
  const uint8_t *ring = typed_data(env, argv[0], napi_uint8_array, &ring_length);
  uint32_t id, port, pt;
  JitterBuffer *jb = jb_of(env, argv[2]);
  RxStats *rx = rx_of(env, argv[3]);
  double *words = typed_data(env, argv[4], napi_float64_array, &words_length);
  const uint8_t *address = typed_data(env, argv[5], napi_uint8_array, &address_length);
  if (!ring || ring_length <= RING_HEADER_BYTES) return throw_msg(env, "ring: a Uint8Array over the whole ring");
  if (!get_u32(env, argv[1], &id)) return throw_msg(env, "id: a socket id");
  if (!jb || !rx) return throw_msg(env, "jb, rx: handles of jbCreate (not closed) and rxCreate");
  if (!words || words_length < FAST_WORDS) return throw_msg(env, "words: a Float64Array of the shared numbers");
  if (!address || address_length == 0 || address_length > MAX_ADDRESS) return throw_msg(env, "address: the source's ASCII bytes");
  if (!get_u32(env, argv[6], &port) || port > 0xffff) return throw_msg(env, "port: 0-65535");
  if (!get_u32(env, argv[7], &pt) || pt > 127) return throw_msg(env, "payloadType: 0-127");

  Attached *a = find(ring, id);
  if (a) release(env, a);
  else if ((table_used + 1) * 2 > table_size && !grow()) return throw_msg(env, "out of memory");
  if (!a) {
    uint32_t mask = table_size - 1;
    for (uint32_t i = slot_hash(ring, id) & mask;; i = (i + 1) & mask) {
      if (table[i].ring == NULL || table[i].ring == TOMBSTONE) {
        if (table[i].ring == NULL) table_used++;
        a = &table[i];
        break;
      }
    }
  }
  a->ring = ring;
  a->id = id;
  a->jb = jb_pin(env, argv[2], &a->jb_pin);
  a->rx = rx;
  a->words = words;
  napi_create_reference(env, argv[2], 1, &a->jb_ref);
  napi_create_reference(env, argv[3], 1, &a->rx_ref);
  napi_create_reference(env, argv[4], 1, &a->words_ref);
  memcpy(a->address, address, address_length);
  a->address_length = (uint8_t)address_length;
  a->port = (uint16_t)port;
  a->payload_type = (uint8_t)pt;
  napi_value yes;
  napi_get_boolean(env, 1, &yes);
  return yes;
}

/* fastDetach(ring, id): the socket's records go to JavaScript again. A socket not attached: nothing. */
static napi_value FastDetach(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  size_t ring_length;
  const uint8_t *ring = argc >= 1 ? typed_data(env, argv[0], napi_uint8_array, &ring_length) : NULL;
  uint32_t id;
  if (!ring || argc < 2 || !get_u32(env, argv[1], &id)) return throw_msg(env, "fastDetach(ring, id)");
  Attached *a = find(ring, id);
  if (a) release(env, a);
  return NULL;
}

static uint16_t be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static uint32_t be32(const uint8_t *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }

/*
 * Whether InboundPath's ptime watch (watchPtime) would rebuild the jitter buffer on this packet;
 * when not, updates the watch's words as it does.
 */
static int ptime_watch(double *w, uint16_t seq, uint32_t ts) {
  double prev_seq = w[FAST_LAST_SEQ];
  uint32_t prev_ts = (uint32_t)w[FAST_LAST_TS];
  if (prev_seq < 0 || seq != (((uint32_t)prev_seq + 1) & 0xffff)) {
    w[FAST_LAST_SEQ] = seq;
    w[FAST_LAST_TS] = ts;
    return 0;
  }
  int32_t ticks = (int32_t)(ts - prev_ts);
  double ms = ((double)ticks * 1000) / w[FAST_CLOCK_RATE];
  double frame_ms = w[FAST_FRAME_MS];
  double diff = ms - frame_ms;
  if (ticks <= 0 || (diff < 0 ? -diff : diff) < 1 || ms > 120 || fmod(ms, 2.5) != 0) {
    w[FAST_LAST_SEQ] = seq;
    w[FAST_LAST_TS] = ts;
    w[FAST_ODD_RUN] = 0;
    return 0;
  }
  double run = w[FAST_ODD_TICKS] == (double)ticks ? w[FAST_ODD_RUN] + 1 : 1;
  if (run >= PTIME_EVIDENCE) return 1;
  w[FAST_LAST_SEQ] = seq;
  w[FAST_LAST_TS] = ts;
  w[FAST_ODD_RUN] = run;
  w[FAST_ODD_TICKS] = ticks;
  return 0;
}

/* One record's datagram, if it is the attached socket's plain audio: taken (1), or left (0). */
static int take(Attached *a, const uint8_t *address, uint8_t address_length, uint16_t port, double time, const uint8_t *d, uint32_t length) {
  if (address_length != a->address_length || port != a->port || memcmp(address, a->address, address_length) != 0) return 0;
  /* Version 2 with no padding, extension or CSRCs; the audio payload type; not RTCP (rtcp-mux). */
  if (length < 12 || d[0] != 0x80 || (d[1] & 0x7f) != a->payload_type || (d[1] >= 192 && d[1] <= 223)) return 0;
  uint16_t seq = be16(d + 2);
  uint32_t ts = be32(d + 4);
  uint32_t ssrc = be32(d + 8);
  double *w = a->words;
  if (ptime_watch(w, seq, ts)) return 0;
  double now = time + w[FAST_OFFSET];
  w[FAST_PACKETS] += 1;
  w[FAST_BYTES] += length - 12;
  w[FAST_LAST_MEDIA] = now;
  rx_update(a->rx, ssrc, seq, ts, now);
  jb_push(a->jb, ssrc, seq, ts, a->payload_type, d + 12, length - 12, now);
  return 1;
}

/*
 * fastDrain(ring): takes records from the ring while they are attached sockets' plain audio.
 * 0: the ring is empty; 1: the next record is for the JavaScript drain.
 */
static napi_value FastDrain(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  size_t ring_length;
  uint8_t *ring = argc >= 1 ? typed_data(env, argv[0], napi_uint8_array, &ring_length) : NULL;
  if (!ring || ring_length <= RING_HEADER_BYTES) return throw_msg(env, "fastDrain(ring)");
  int32_t *header = (int32_t *)ring;
  uint8_t *data = ring + RING_HEADER_BYTES;
  uint32_t capacity = (uint32_t)(ring_length - RING_HEADER_BYTES);
  uint32_t mask = capacity - 1;
  /* Acquire: every byte the producer wrote before moving the write position is visible. */
  uint32_t read = (uint32_t)__atomic_load_n(&header[RING_READ], __ATOMIC_ACQUIRE);
  uint32_t write = (uint32_t)__atomic_load_n(&header[RING_WRITE], __ATOMIC_ACQUIRE);
  int result = 0;
  while (read != write) {
    uint32_t offset = read & mask, skipped = 0;
    int32_t length;
    memcpy(&length, data + offset, 4);
    if (length == RING_WRAP) {
      skipped = capacity - offset;
      offset = 0;
      memcpy(&length, data, 4);
    }
    const uint8_t *body = data + offset + 4;
    uint32_t id;
    memcpy(&id, body + 4, 4);
    Attached *a = length >= RECORD_HEADER && body[0] == KIND_PACKET ? find(ring, id) : NULL;
    uint8_t address_length = body[1];
    if (!a || (uint32_t)length < RECORD_HEADER + (uint32_t)address_length) {
      result = 1;
      break;
    }
    uint16_t port;
    double time;
    memcpy(&port, body + 2, 2);
    memcpy(&time, body + 8, 8);
    const uint8_t *datagram = body + RECORD_HEADER + address_length;
    if (!take(a, body + RECORD_HEADER, address_length, port, time, datagram, (uint32_t)length - RECORD_HEADER - address_length)) {
      result = 1;
      break;
    }
    read += skipped + 4 + (((uint32_t)length + 3) & ~3u);
    /* Release: the producer may reuse these bytes only after we are done reading them. */
    __atomic_store_n(&header[RING_READ], (int32_t)read, __ATOMIC_RELEASE);
  }
  return int_value(env, result);
}

void fast_drain_define(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    {"fastAttach", NULL, FastAttach, NULL, NULL, NULL, napi_default, NULL},
    {"fastDetach", NULL, FastDetach, NULL, NULL, NULL, napi_default, NULL},
    {"fastDrain", NULL, FastDrain, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}
