/*
 * N-API bindings of rtp_inbound.h, for src/media/native-inbound.ts (NativeJitterBuffer,
 * NativeReceiverStats) and for fast_drain.c, which finds the C objects behind the same handles.
 *
 * Handles: a buffer or a statistics object is an external (an opaque JavaScript value) whose
 * finalizer frees it when collected, type-tagged (napi_type_tag_object) so that jb_of / rx_of can
 * tell their own handles from any other value, another module's externals included. A jitter
 * buffer is freed earlier by jbClose(h), when its call ends (its payload slots are a mapping of
 * their own): the handle stays, and anything but jbClose on it again is an Error. The native drain
 * pins the buffers it holds (jb_pin), and jbClose refuses a pinned one.
 *
 * Arguments: numbers are checked, not coerced: not a number is a TypeError, an integer argument
 * that is not an integer in its range (a sequence number in 0..65535, ...) a RangeError, each
 * naming the function and the argument. Outputs go into caller-owned typed arrays (a Uint8Array
 * for payload bytes, a Float64Array for numbers), so a pull or a snapshot allocates nothing.
 *
 * jbPull(h, nowMs) writes into the outBytes and outInfo given to jbCreate (outInfo a Float64Array
 * of at least 6, outBytes at least maxPayload long):
 *   JB_FRAME (1): [0] length (the payload is outBytes[0 .. length)), [1] sequence number,
 *                 [2] timestamp, [3] ssrc, [4] payload type or -1 for none.
 *   JB_LOST (2):  [2] timestamp, [5] length of the next payload (copied into outBytes), or -1
 *                 when it is not buffered. Other slots are left as they were.
 *   JB_EMPTY (0): nothing written.
 * jbStats's out (12): pushed, played, late, duplicates, lost, concealed, shrunk, overflow,
 *   resyncs, targetDelayMs, currentDelayMs, buffered (JbStats order).
 * rxSnapshot's out (8): hasSsrc (0/1), ssrc, extendedHighestSeq, expected, received,
 *   cumulativeLost, jitter, jitterMs.
 * rxReportBlock's out (7, written when it returns 1): ssrc, fractionLost, cumulativeLost,
 *   extendedHighestSeq, jitter, lastSr, delaySinceLastSr.
 */
#define NAPI_VERSION 8
#include "inbound_napi.h"
#include "napi_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Random, fixed: what marks an external as one of ours, and which kind. */
static const napi_type_tag JB_TAG = {0x6a1f3c2e9b7d4a51ULL, 0x8e2b6f0d13c95a74ULL};
static const napi_type_tag RX_TAG = {0x3d94b17a5c0e62f8ULL, 0xa7c3e1584f29b06dULL};

#define U32_MAX_D 4294967295.0

/* ---- argument checks: 1 when fine; 0 with a TypeError or RangeError thrown ---- */

static int throw_type(napi_env env, const char *fn, const char *what) {
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s", fn, what);
  napi_throw_type_error(env, NULL, msg);
  return 0;
}

static int throw_range(napi_env env, const char *fn, const char *what) {
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s", fn, what);
  napi_throw_range_error(env, NULL, msg);
  return 0;
}

/* The call's arguments; missing ones are undefined (and fail their own check). */
static int get_args(napi_env env, napi_callback_info info, size_t count, napi_value *argv) {
  size_t argc = count;
  return napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok;
}

static int get_number(napi_env env, const char *fn, const char *name, napi_value v, double *out) {
  napi_valuetype type;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_number) {
    char what[120];
    snprintf(what, sizeof what, "%s must be a number", name);
    return throw_type(env, fn, what);
  }
  napi_get_value_double(env, v, out);
  return 1;
}

/* An integer number in [lo, hi]. */
static int get_integer(napi_env env, const char *fn, const char *name, napi_value v, double lo, double hi, int64_t *out) {
  double d;
  if (!get_number(env, fn, name, v, &d)) return 0;
  if (!(d >= lo && d <= hi) || floor(d) != d) {
    char what[160];
    snprintf(what, sizeof what, "%s must be an integer in %.0f..%.0f (got %g)", name, lo, hi, d);
    return throw_range(env, fn, what);
  }
  *out = (int64_t)d;
  return 1;
}

static int get_int(napi_env env, const char *fn, const char *name, napi_value v, int *out) {
  int64_t n;
  if (!get_integer(env, fn, name, v, -2147483648.0, 2147483647.0, &n)) return 0;
  *out = (int)n;
  return 1;
}

static int get_u32(napi_env env, const char *fn, const char *name, napi_value v, uint32_t *out) {
  int64_t n;
  if (!get_integer(env, fn, name, v, 0, U32_MAX_D, &n)) return 0;
  *out = (uint32_t)n;
  return 1;
}

static int get_u16(napi_env env, const char *fn, const char *name, napi_value v, uint16_t *out) {
  int64_t n;
  if (!get_integer(env, fn, name, v, 0, 65535, &n)) return 0;
  *out = (uint16_t)n;
  return 1;
}

/* A typed array of the given type: its first element and length (in elements). */
static int get_typed(napi_env env, const char *fn, const char *name, napi_value v, napi_typedarray_type want,
                     const char *type_name, void **data, size_t *length) {
  bool is_typed = false;
  napi_typedarray_type type;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, v, &type, length, data, NULL, NULL) != napi_ok || type != want) {
    char what[120];
    snprintf(what, sizeof what, "%s must be a %s", name, type_name);
    return throw_type(env, fn, what);
  }
  return 1;
}

static int get_bytes(napi_env env, const char *fn, const char *name, napi_value v, uint8_t **data, size_t *length) {
  void *p = NULL;
  if (!get_typed(env, fn, name, v, napi_uint8_array, "Uint8Array", &p, length)) return 0;
  *data = p;
  return 1;
}

/* A Float64Array of at least `min` numbers. */
static int get_doubles(napi_env env, const char *fn, const char *name, napi_value v, size_t min, double **data) {
  void *p = NULL;
  size_t length = 0;
  if (!get_typed(env, fn, name, v, napi_float64_array, "Float64Array", &p, &length)) return 0;
  if (length < min) {
    char what[120];
    snprintf(what, sizeof what, "%s must hold at least %zu numbers", name, min);
    return throw_range(env, fn, what);
  }
  *data = p;
  return 1;
}


static RxStats *get_rx(napi_env env, const char *fn, napi_value v) {
  RxStats *rx = rx_of(env, v);
  if (!rx) throw_type(env, fn, "the first argument must be a handle from rxCreate");
  return rx;
}

/* ---- handles ---- */

/* The C object behind one of our externals with this tag; NULL (and nothing thrown) otherwise. */
static void *tagged_external(napi_env env, napi_value v, const napi_type_tag *tag) {
  napi_valuetype type;
  bool tagged = false;
  void *data = NULL;
  if (!v || napi_typeof(env, v, &type) != napi_ok || type != napi_external) return NULL;
  if (napi_check_object_type_tag(env, v, tag, &tagged) != napi_ok || !tagged) return NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok) return NULL;
  return data;
}

/*
 * What a jitter buffer's handle holds: the buffer, and where jbPull writes (the adapter's scratch,
 * given once to jbCreate, so that a pull, once per call every 20 ms, converts no typed array).
 */
typedef struct JbHandle {
  JitterBuffer *jb; /* NULL once closed */
  int pins;         /* fast_drain.c entries holding jb */
  uint8_t *bytes; /* at least max_payload bytes */
  double *info;   /* at least PULL_INFO numbers */
  napi_ref bytes_ref, info_ref;
} JbHandle;

#define PULL_INFO 6

static JbHandle *jb_handle_of(napi_env env, napi_value handle) { return tagged_external(env, handle, &JB_TAG); }

JitterBuffer *jb_of(napi_env env, napi_value handle) {
  JbHandle *h = jb_handle_of(env, handle);
  return h ? h->jb : NULL;
}

JitterBuffer *jb_pin(napi_env env, napi_value handle, void **pin) {
  JbHandle *h = jb_handle_of(env, handle);
  if (!h || !h->jb) return NULL;
  h->pins++;
  *pin = h;
  return h->jb;
}

void jb_unpin(void *pin) {
  if (pin) ((JbHandle *)pin)->pins--;
}

RxStats *rx_of(napi_env env, napi_value handle) { return tagged_external(env, handle, &RX_TAG); }

static void free_jb_handle(napi_env env, JbHandle *h) {
  jb_free(h->jb);
  if (h->bytes_ref) napi_delete_reference(env, h->bytes_ref);
  if (h->info_ref) napi_delete_reference(env, h->info_ref);
  free(h);
}

static void finalize_jb(napi_env env, void *data, void *hint) { free_jb_handle(env, data); }

static void finalize_rx(napi_env env, void *data, void *hint) { rx_free(data); }

/* An external that frees `object` when collected, tagged; NULL with an Error thrown if that fails. */
static napi_value make_handle(napi_env env, void *object, napi_finalize finalize, const napi_type_tag *tag) {
  napi_value handle;
  if (napi_create_external(env, object, finalize, NULL, &handle) != napi_ok) {
    finalize(env, object, NULL);
    napi_throw_error(env, NULL, "cannot create a handle");
    return NULL;
  }
  /* From here the finalizer owns the object, whatever happens. */
  if (napi_type_tag_object(env, handle, tag) != napi_ok) {
    napi_throw_error(env, NULL, "cannot tag a handle");
    return NULL;
  }
  return handle;
}

static JbHandle *get_jb_handle(napi_env env, const char *fn, napi_value v) {
  JbHandle *h = jb_handle_of(env, v);
  if (!h) throw_type(env, fn, "the first argument must be a handle from jbCreate");
  return h;
}

/* An open buffer's handle; NULL with a TypeError (not a handle) or an Error (closed) thrown. */
static JbHandle *get_open_jb_handle(napi_env env, const char *fn, napi_value v) {
  JbHandle *h = get_jb_handle(env, fn, v);
  if (h && !h->jb) {
    char message[96];
    snprintf(message, sizeof message, "%s: the jitter buffer is closed", fn);
    napi_throw_error(env, NULL, message);
    return NULL;
  }
  return h;
}

static JitterBuffer *get_jb(napi_env env, const char *fn, napi_value v) {
  JbHandle *h = get_open_jb_handle(env, fn, v);
  return h ? h->jb : NULL;
}

/* ---- jitter buffer ---- */

/* jbCreate(clockRate, frameMs, minDelayMs, maxDelayMs, initialDelayMs, historyPackets,
 *          maxConcealFrames, resyncSeqJump, resyncTimeJumpMs, maxPackets, maxPayload,
 *          outBytes, outInfo) → handle; jbPull writes into outBytes and outInfo */
static napi_value JbCreate(napi_env env, napi_callback_info info) {
  static const char *fn = "jbCreate";
  napi_value argv[13];
  if (!get_args(env, info, 13, argv)) return NULL;
  JbOptions o;
  uint8_t *bytes;
  size_t bytes_length;
  double *out;
  if (!get_int(env, fn, "clockRate", argv[0], &o.clock_rate) || !get_number(env, fn, "frameMs", argv[1], &o.frame_ms) ||
      !get_number(env, fn, "minDelayMs", argv[2], &o.min_delay_ms) || !get_number(env, fn, "maxDelayMs", argv[3], &o.max_delay_ms) ||
      !get_number(env, fn, "initialDelayMs", argv[4], &o.initial_delay_ms) ||
      !get_int(env, fn, "historyPackets", argv[5], &o.history_packets) ||
      !get_int(env, fn, "maxConcealFrames", argv[6], &o.max_conceal_frames) ||
      !get_int(env, fn, "resyncSeqJump", argv[7], &o.resync_seq_jump) ||
      !get_number(env, fn, "resyncTimeJumpMs", argv[8], &o.resync_time_jump_ms) ||
      !get_int(env, fn, "maxPackets", argv[9], &o.max_packets) || !get_int(env, fn, "maxPayload", argv[10], &o.max_payload) ||
      !get_bytes(env, fn, "outBytes", argv[11], &bytes, &bytes_length) || !get_doubles(env, fn, "outInfo", argv[12], PULL_INFO, &out))
    return NULL;
  const char *error = jb_options_error(&o);
  if (error) {
    throw_range(env, fn, error);
    return NULL;
  }
  /* A pull cannot be undone, so any payload must fit where it goes. */
  if (bytes_length < (size_t)o.max_payload) {
    throw_range(env, fn, "outBytes must hold at least maxPayload bytes");
    return NULL;
  }
  JbHandle *h = calloc(1, sizeof *h);
  if (!h || !(h->jb = jb_new(&o))) {
    free(h);
    napi_throw_error(env, NULL, "jbCreate: out of memory");
    return NULL;
  }
  h->bytes = bytes;
  h->info = out;
  /* The scratch lives as long as the handle (the memory of a typed array never moves). */
  if (napi_create_reference(env, argv[11], 1, &h->bytes_ref) != napi_ok || napi_create_reference(env, argv[12], 1, &h->info_ref) != napi_ok) {
    free_jb_handle(env, h);
    napi_throw_error(env, NULL, "jbCreate: cannot keep its scratch");
    return NULL;
  }
  return make_handle(env, h, finalize_jb, &JB_TAG);
}

/* jbPush(h, ssrc, seq, timestamp, payloadType (-1: none), payload, arrivalMs) → JB_* code */
static napi_value JbPush(napi_env env, napi_callback_info info) {
  static const char *fn = "jbPush";
  napi_value argv[7];
  if (!get_args(env, info, 7, argv)) return NULL;
  JitterBuffer *jb = get_jb(env, fn, argv[0]);
  uint32_t ssrc, timestamp;
  uint16_t seq;
  int64_t payload_type;
  uint8_t *payload;
  size_t length;
  double arrival_ms;
  if (!jb || !get_u32(env, fn, "ssrc", argv[1], &ssrc) || !get_u16(env, fn, "seq", argv[2], &seq) ||
      !get_u32(env, fn, "timestamp", argv[3], &timestamp) ||
      !get_integer(env, fn, "payloadType", argv[4], -1, 127, &payload_type) ||
      !get_bytes(env, fn, "payload", argv[5], &payload, &length) || !get_number(env, fn, "arrivalMs", argv[6], &arrival_ms))
    return NULL;
  /* Longer than any slot: refused (and counted) by jb_push, without truncating to 32 bits first. */
  uint32_t len32 = length > UINT32_MAX ? UINT32_MAX : (uint32_t)length;
  return int_value(env, jb_push(jb, ssrc, seq, timestamp, (int)payload_type, payload, len32, arrival_ms));
}

/* jbPull(h, nowMs) → JB_EMPTY / JB_FRAME / JB_LOST, into the scratch jbCreate was given (layout at the top) */
static napi_value JbPull(napi_env env, napi_callback_info info) {
  static const char *fn = "jbPull";
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  JbHandle *h = get_open_jb_handle(env, fn, argv[0]);
  double now_ms;
  if (!h || !get_number(env, fn, "nowMs", argv[1], &now_ms)) return NULL;
  JbOut o;
  int kind = jb_pull(h->jb, now_ms, &o);
  double *out = h->info;
  if (kind == JB_FRAME) {
    if (o.length > 0) memcpy(h->bytes, o.payload, o.length);
    out[0] = o.length;
    out[1] = o.sequence_number;
    out[2] = o.timestamp;
    out[3] = o.ssrc;
    out[4] = o.payload_type;
  } else if (kind == JB_LOST) {
    out[2] = o.timestamp;
    if (o.next) {
      if (o.next_length > 0) memcpy(h->bytes, o.next, o.next_length);
      out[5] = o.next_length;
    } else {
      out[5] = -1;
    }
  }
  return int_value(env, kind);
}

/* jbStats(h, out: Float64Array(12)) */
static napi_value JbStatsFn(napi_env env, napi_callback_info info) {
  static const char *fn = "jbStats";
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  JitterBuffer *jb = get_jb(env, fn, argv[0]);
  double *out;
  if (!jb || !get_doubles(env, fn, "out", argv[1], 12, &out)) return NULL;
  JbStats s;
  jb_stats(jb, &s);
  out[0] = s.pushed;
  out[1] = s.played;
  out[2] = s.late;
  out[3] = s.duplicates;
  out[4] = s.lost;
  out[5] = s.concealed;
  out[6] = s.shrunk;
  out[7] = s.overflow;
  out[8] = s.resyncs;
  out[9] = s.target_delay_ms;
  out[10] = s.current_delay_ms;
  out[11] = s.buffered;
  return NULL;
}

/* jbReset(h) */
/* jbClose(h): frees the buffer now (its handle stays, closed); again: nothing. An Error while the
 * native drain holds it (fastDetach first). */
static napi_value JbClose(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  JbHandle *h = get_jb_handle(env, "jbClose", argv[0]);
  if (!h || !h->jb) return NULL;
  if (h->pins > 0) {
    napi_throw_error(env, NULL, "jbClose: the native drain holds this jitter buffer (fastDetach first)");
    return NULL;
  }
  jb_free(h->jb);
  h->jb = NULL;
  return NULL;
}

static napi_value JbReset(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  JitterBuffer *jb = get_jb(env, "jbReset", argv[0]);
  if (jb) jb_reset(jb);
  return NULL;
}

/* ---- receiver statistics ---- */

/* rxCreate(clockRate, minSequential, maxDropout, maxMisorder) → handle */
static napi_value RxCreate(napi_env env, napi_callback_info info) {
  static const char *fn = "rxCreate";
  napi_value argv[4];
  if (!get_args(env, info, 4, argv)) return NULL;
  int clock_rate, min_sequential, max_dropout, max_misorder;
  if (!get_int(env, fn, "clockRate", argv[0], &clock_rate) || !get_int(env, fn, "minSequential", argv[1], &min_sequential) ||
      !get_int(env, fn, "maxDropout", argv[2], &max_dropout) || !get_int(env, fn, "maxMisorder", argv[3], &max_misorder))
    return NULL;
  const char *error = rx_options_error(clock_rate, min_sequential, max_dropout, max_misorder);
  if (error) {
    throw_range(env, fn, error);
    return NULL;
  }
  RxStats *rx = rx_new(clock_rate, min_sequential, max_dropout, max_misorder);
  if (!rx) {
    napi_throw_error(env, NULL, "rxCreate: out of memory");
    return NULL;
  }
  return make_handle(env, rx, finalize_rx, &RX_TAG);
}

/* rxUpdate(h, ssrc, seq, timestamp, arrivalMs) → RX_* verdict */
static napi_value RxUpdate(napi_env env, napi_callback_info info) {
  static const char *fn = "rxUpdate";
  napi_value argv[5];
  if (!get_args(env, info, 5, argv)) return NULL;
  RxStats *rx = get_rx(env, fn, argv[0]);
  uint32_t ssrc, timestamp;
  uint16_t seq;
  double arrival_ms;
  if (!rx || !get_u32(env, fn, "ssrc", argv[1], &ssrc) || !get_u16(env, fn, "seq", argv[2], &seq) ||
      !get_u32(env, fn, "timestamp", argv[3], &timestamp) || !get_number(env, fn, "arrivalMs", argv[4], &arrival_ms))
    return NULL;
  return int_value(env, rx_update(rx, ssrc, seq, timestamp, arrival_ms));
}

/* rxSenderReport(h, ntpSeconds, ntpFraction, arrivalMs) */
static napi_value RxSenderReport(napi_env env, napi_callback_info info) {
  static const char *fn = "rxSenderReport";
  napi_value argv[4];
  if (!get_args(env, info, 4, argv)) return NULL;
  RxStats *rx = get_rx(env, fn, argv[0]);
  uint32_t seconds, fraction;
  double arrival_ms;
  if (!rx || !get_u32(env, fn, "ntpSeconds", argv[1], &seconds) || !get_u32(env, fn, "ntpFraction", argv[2], &fraction) ||
      !get_number(env, fn, "arrivalMs", argv[3], &arrival_ms))
    return NULL;
  rx_sender_report(rx, seconds, fraction, arrival_ms);
  return NULL;
}

/* rxSnapshot(h, out: Float64Array(8)) */
static napi_value RxSnapshotFn(napi_env env, napi_callback_info info) {
  static const char *fn = "rxSnapshot";
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  RxStats *rx = get_rx(env, fn, argv[0]);
  double *out;
  if (!rx || !get_doubles(env, fn, "out", argv[1], 8, &out)) return NULL;
  RxSnapshot s;
  rx_snapshot(rx, &s);
  out[0] = s.has_ssrc;
  out[1] = s.ssrc;
  out[2] = s.extended_highest_seq;
  out[3] = s.expected;
  out[4] = s.received;
  out[5] = s.cumulative_lost;
  out[6] = s.jitter;
  out[7] = s.jitter_ms;
  return NULL;
}

/* rxReportBlock(h, nowMs, out: Float64Array(7)) → 1 with the block in `out`, or 0 (no source yet) */
static napi_value RxReportBlockFn(napi_env env, napi_callback_info info) {
  static const char *fn = "rxReportBlock";
  napi_value argv[3];
  if (!get_args(env, info, 3, argv)) return NULL;
  RxStats *rx = get_rx(env, fn, argv[0]);
  double now_ms;
  double *out;
  if (!rx || !get_number(env, fn, "nowMs", argv[1], &now_ms) || !get_doubles(env, fn, "out", argv[2], 7, &out)) return NULL;
  RxReportBlock b;
  if (!rx_report_block(rx, now_ms, &b)) return int_value(env, 0);
  out[0] = b.ssrc;
  out[1] = b.fraction_lost;
  out[2] = b.cumulative_lost;
  out[3] = b.extended_highest_seq;
  out[4] = b.jitter;
  out[5] = b.last_sr;
  out[6] = b.delay_since_last_sr;
  return int_value(env, 1);
}

void inbound_define(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"jbCreate", NULL, JbCreate, NULL, NULL, NULL, napi_default, NULL},
      {"jbPush", NULL, JbPush, NULL, NULL, NULL, napi_default, NULL},
      {"jbPull", NULL, JbPull, NULL, NULL, NULL, napi_default, NULL},
      {"jbStats", NULL, JbStatsFn, NULL, NULL, NULL, napi_default, NULL},
      {"jbReset", NULL, JbReset, NULL, NULL, NULL, napi_default, NULL},
      {"jbClose", NULL, JbClose, NULL, NULL, NULL, napi_default, NULL},
      {"rxCreate", NULL, RxCreate, NULL, NULL, NULL, napi_default, NULL},
      {"rxUpdate", NULL, RxUpdate, NULL, NULL, NULL, napi_default, NULL},
      {"rxSenderReport", NULL, RxSenderReport, NULL, NULL, NULL, napi_default, NULL},
      {"rxSnapshot", NULL, RxSnapshotFn, NULL, NULL, NULL, napi_default, NULL},
      {"rxReportBlock", NULL, RxReportBlockFn, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}
