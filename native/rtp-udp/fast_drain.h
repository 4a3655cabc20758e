/* The inbound ring's common case taken in C on the event-loop thread (fast_drain.c). */
#ifndef FAST_DRAIN_H
#define FAST_DRAIN_H

#include <node_api.h>

/* Adds fastAttach, fastDetach and fastDrain to the module's exports. */
void fast_drain_define(napi_env env, napi_value exports);

#endif
