/*
 * N-API bindings of srtp_transform.h (src/media/srtp/cipher-native.ts is the only caller).
 *
 * srtpCreate(kind, key, salt, auth, rtpTag, rtcpTag) -> handle (an external, type-tagged, whose
 * finalizer frees the transform and wipes its keys). The packet calls take the handle, a
 * Uint8Array (or Buffer) worked on in place, and numbers; they return the new length or -1 when
 * authentication fails. Wrong argument types are a TypeError, lengths that do not fit the array a
 * RangeError: checked, never trusted, since a length comes from the network.
 */
#define NAPI_VERSION 8
#include "srtp_napi.h"
#include "srtp_transform.h"

#include <stdbool.h>
#include <stdio.h>

static const napi_type_tag SRTP_TAG = {0x51c7e3a0d28b4f96ULL, 0x2f6a90b1c4e8d375ULL};

static napi_value fail_type(napi_env env, const char *fn, const char *what) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: %s", fn, what);
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

static napi_value fail_range(napi_env env, const char *fn, const char *what) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: %s", fn, what);
  napi_throw_range_error(env, NULL, msg);
  return NULL;
}

static bool bytes_of(napi_env env, napi_value v, uint8_t **data, size_t *len) {
  bool is;
  napi_typedarray_type type;
  size_t length, offset;
  napi_value ab;
  void *p;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return false;
  if (napi_get_typedarray_info(env, v, &type, &length, &p, &ab, &offset) != napi_ok || type != napi_uint8_array) return false;
  *data = p;
  *len = length;
  return true;
}

static bool number_of(napi_env env, napi_value v, double lo, double hi, double *out) {
  napi_valuetype type;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_number) return false;
  napi_get_value_double(env, v, out);
  return *out >= lo && *out <= hi && *out == (double)(int64_t)*out;
}

static SrtpTransform *transform_of(napi_env env, napi_value v) {
  napi_valuetype type;
  bool tagged = false;
  void *data = NULL;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_external) return NULL;
  if (napi_check_object_type_tag(env, v, &SRTP_TAG, &tagged) != napi_ok || !tagged) return NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok) return NULL;
  return data;
}

static void finalize(napi_env env, void *data, void *hint) { srtp_transform_free(data); }

static napi_value result(napi_env env, long n) {
  napi_value out;
  napi_create_int64(env, n, &out);
  return out;
}

static napi_value Create(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  double kind, rtp_tag, rtcp_tag;
  uint8_t *key, *salt, *auth;
  size_t key_len, salt_len, auth_len;
  if (argc < 6) return fail_type(env, "srtpCreate", "needs 6 arguments");
  if (!number_of(env, argv[0], 0, 1, &kind)) return fail_type(env, "srtpCreate", "kind must be 0 or 1");
  if (!bytes_of(env, argv[1], &key, &key_len) || !bytes_of(env, argv[2], &salt, &salt_len) || !bytes_of(env, argv[3], &auth, &auth_len))
    return fail_type(env, "srtpCreate", "key, salt and auth must be Uint8Arrays");
  if (!number_of(env, argv[4], 4, 16, &rtp_tag) || !number_of(env, argv[5], 4, 16, &rtcp_tag))
    return fail_range(env, "srtpCreate", "tag lengths must be 4..16");
  SrtpTransform *t = srtp_transform_new((int)kind, key, key_len, salt, salt_len, auth, auth_len, (int)rtp_tag, (int)rtcp_tag);
  if (!t) return fail_range(env, "srtpCreate", "key, salt or auth key of the wrong length (or no memory)");
  napi_value handle;
  if (napi_create_external(env, t, finalize, NULL, &handle) != napi_ok) {
    srtp_transform_free(t);
    napi_throw_error(env, NULL, "srtpCreate: cannot create a handle");
    return NULL;
  }
  if (napi_type_tag_object(env, handle, &SRTP_TAG) != napi_ok) {
    napi_throw_error(env, NULL, "srtpCreate: cannot tag a handle");
    return NULL;
  }
  return handle;
}

/* The common head of the packet calls: handle, buffer, length; `n` more numbers after them. */
typedef struct {
  SrtpTransform *t;
  uint8_t *buf;
  size_t cap;
  size_t len;
  double num[3];
} Args;

static bool packet_args(napi_env env, napi_callback_info info, const char *fn, size_t more, const double *max, Args *a) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3 + more) return fail_type(env, fn, "too few arguments"), false;
  a->t = transform_of(env, argv[0]);
  if (!a->t) return fail_type(env, fn, "not an SRTP handle"), false;
  if (!bytes_of(env, argv[1], &a->buf, &a->cap)) return fail_type(env, fn, "buffer must be a Uint8Array"), false;
  double len;
  if (!number_of(env, argv[2], 0, (double)a->cap, &len)) return fail_range(env, fn, "length must be an integer within the buffer"), false;
  a->len = (size_t)len;
  for (size_t i = 0; i < more; i++) {
    if (!number_of(env, argv[3 + i], 0, max[i], &a->num[i])) return fail_range(env, fn, "an argument is out of range"), false;
  }
  return true;
}

static const double RTP_MAX[3] = {65535.0, 4294967295.0, 281474976710655.0};
static const double RTCP_MAX[3] = {4294967295.0, 2147483647.0, 1.0};

static napi_value ProtectRtp(napi_env env, napi_callback_info info) {
  Args a;
  if (!packet_args(env, info, "srtpProtectRtp", 3, RTP_MAX, &a)) return NULL;
  if ((size_t)a.num[0] > a.len) return fail_range(env, "srtpProtectRtp", "header longer than the packet");
  return result(env, srtp_protect_rtp(a.t, a.buf, a.cap, a.len, (size_t)a.num[0], (uint32_t)a.num[1], (uint64_t)a.num[2]));
}

static napi_value UnprotectRtp(napi_env env, napi_callback_info info) {
  Args a;
  if (!packet_args(env, info, "srtpUnprotectRtp", 3, RTP_MAX, &a)) return NULL;
  return result(env, srtp_unprotect_rtp(a.t, a.buf, a.len, (size_t)a.num[0], (uint32_t)a.num[1], (uint64_t)a.num[2]));
}

static napi_value ProtectRtcp(napi_env env, napi_callback_info info) {
  Args a;
  if (!packet_args(env, info, "srtpProtectRtcp", 2, RTCP_MAX, &a)) return NULL;
  return result(env, srtp_protect_rtcp(a.t, a.buf, a.cap, a.len, (uint32_t)a.num[0], (uint32_t)a.num[1]));
}

static napi_value UnprotectRtcp(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  Args a;
  if (!packet_args(env, info, "srtpUnprotectRtcp", 2, RTCP_MAX, &a)) return NULL;
  bool encrypted = false;
  if (argc < 6 || napi_get_value_bool(env, argv[5], &encrypted) != napi_ok) return fail_type(env, "srtpUnprotectRtcp", "encrypted must be a boolean");
  return result(env, srtp_unprotect_rtcp(a.t, a.buf, a.len, (uint32_t)a.num[0], (uint32_t)a.num[1], encrypted));
}

void srtp_define(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    {"srtpCreate", NULL, Create, NULL, NULL, NULL, napi_default, NULL},
    {"srtpProtectRtp", NULL, ProtectRtp, NULL, NULL, NULL, napi_default, NULL},
    {"srtpUnprotectRtp", NULL, UnprotectRtp, NULL, NULL, NULL, napi_default, NULL},
    {"srtpProtectRtcp", NULL, ProtectRtcp, NULL, NULL, NULL, napi_default, NULL},
    {"srtpUnprotectRtcp", NULL, UnprotectRtcp, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}
