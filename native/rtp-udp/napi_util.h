/* Small N-API helpers the module's files share. */
#ifndef NAPI_UTIL_H
#define NAPI_UTIL_H

#include <node_api.h>
#include <stdint.h>

/* Throws an Error with `msg`; returns NULL for the caller to return. */
static inline napi_value throw_msg(napi_env env, const char *msg) {
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static inline napi_value int_value(napi_env env, int64_t v) {
  napi_value out;
  napi_create_int64(env, v, &out);
  return out;
}

#endif
