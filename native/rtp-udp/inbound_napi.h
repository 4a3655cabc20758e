/* N-API bindings of rtp_inbound.h (inbound_napi.c), and what fast_drain.c needs of them. */
#ifndef INBOUND_NAPI_H
#define INBOUND_NAPI_H

#include <node_api.h>
#include "rtp_inbound.h"

/* Adds jbCreate, jbPush, jbPull, jbStats, jbReset, jbClose, rxCreate, rxUpdate, rxSenderReport,
 * rxSnapshot, rxReportBlock to the module's exports. */
void inbound_define(napi_env env, napi_value exports);

/* The buffer or statistics behind a handle jbCreate / rxCreate returned; NULL for anything else. */
JitterBuffer *jb_of(napi_env env, napi_value handle);
RxStats *rx_of(napi_env env, napi_value handle);

/* As jb_of, for a holder that keeps the buffer (and a reference to its handle): jbClose refuses
 * the buffer until jb_unpin(*pin). NULL (nothing pinned) for anything but an open buffer. */
JitterBuffer *jb_pin(napi_env env, napi_value handle, void **pin);
void jb_unpin(void *pin);

#endif
