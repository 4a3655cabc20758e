/* Switchboard's DSP kernels in C (src/audio/native-dsp.ts): one N-API module, a file per kernel
   (today one: the spectral denoiser's core). */
#ifndef SWITCHBOARD_DSP_H
#define SWITCHBOARD_DSP_H
#define NAPI_VERSION 8
#include <node_api.h>

#ifndef __SSE2__
#error "the kernels are written for SSE2 (x86-64); elsewhere the TypeScript code runs"
#endif

/* Each adds its functions to the module's exports. */
void spectral_register(napi_env env, napi_value exports);

#endif
