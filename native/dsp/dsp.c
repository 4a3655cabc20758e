/* The module: the spectral denoiser's core (spectral.c). */
#include "dsp.h"

NAPI_MODULE_INIT() {
  spectral_register(env, exports);
  return exports;
}
