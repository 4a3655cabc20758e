/* N-API bindings of srtp_transform.h, for src/media/srtp/cipher-native.ts. */
#ifndef SRTP_NAPI_H
#define SRTP_NAPI_H

#include <node_api.h>

/* Adds srtpCreate, srtpProtectRtp, srtpUnprotectRtp, srtpProtectRtcp, srtpUnprotectRtcp. */
void srtp_define(napi_env env, napi_value exports);

#endif
