/*
 * The spectral denoiser's per-hop work in C: src/audio/denoise-spectral-core.ts (SpectralCore.hop)
 * and the two transforms of src/audio/fft.ts it uses (RealFft.forwardPower, inverseWindowed).
 *
 * Same arithmetic, bit for bit: every table (windows, twiddles, the LSA gain table) and every
 * constant comes from the TypeScript side (createBand), so no libm function is evaluated here,
 * and each value is computed by the same IEEE operations in the same order (+, −, ×, ÷, sqrt,
 * floor on doubles; built with -ffp-contract=off, so no multiply-add is fused, and nothing is
 * reassociated). test/unit/denoise/native-core.test.ts holds the two to identical output.
 *
 * Where it differs is the layout, for SSE2 (x86-64's baseline): the per-bin state is one array
 * per quantity rather than interleaved, and the per-bin loops (MCRA, the gain's divisions and
 * square roots) and the FFT's butterflies run two doubles per instruction. A packed operation
 * rounds each lane exactly as the scalar one, so the lanes compute TypeScript's values; the
 * packed min/max stand for the scalar selects only where no NaN and no ±0 tie can occur (noted
 * there). About 3.7× faster than the TypeScript core per frame (bench/denoise.ts). Other
 * architectures do not build the module (dsp.h) and run the TypeScript core.
 *
 * Objects: a band (one per rate and backend: sizes, tables and scratch, like SpectralBand) and
 * cores (one per stream: the MCRA and overlap-add state, like SpectralCore). A core keeps its
 * band alive (a count, freed when the last of band and cores is collected). Everything runs on
 * the thread that made it: the scratch is shared by the band's cores, as in TypeScript.
 */
#include "dsp.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <emmintrin.h>

/* createBand's `params`, in this order (nativeParams() in denoise-spectral-core.ts). */
enum {
  P_HOP, P_WIN, P_NFFT, P_BINS, P_GAIN_FLOOR, P_SKIP_EDGE, P_SKIP_ABS,
  P_ALPHA_S, P_ALPHA_D, P_ALPHA_P, P_DELTA, P_SUB_WINDOWS, P_SUB_HOPS,
  P_ALPHA_DD, P_XI_MIN, P_NOISE_FLOOR, P_NB_RATIO, P_NB_EXIT, P_NB_HOPS,
  P_LSA_STEP, P_LSA_MAX_V, P_COUNT
};

typedef struct {
  int refs; /* the band's own JS object, plus one per core */
  int hop, win, nfft, bins, half, skip_edge;
  double gain_floor, skip_abs;
  double alpha_s, alpha_d, alpha_p, delta, alpha_dd, xi_min, noise_floor, nb_ratio;
  int sub_windows, sub_hops, nb_exit, nb_hops;
  double lsa_step, lsa_max_v;
  int lsa_len;
  double *window, *lsa;
  uint32_t *rev;
  /* Stage twiddles (RealFft st*), each `half` long, and the split rotations (m + 1 each). */
  double *st_re, *st_im, *st_im_inv, *st3_re, *st3_im, *st3_re_inv, *st3_im_inv, *sp_re, *sp_im;
  /* Scratch shared by the band's cores; gamma, root and lsa_v hold the gain's intermediate
     values per bin, so its divisions and square roots run as vector instructions. */
  double *frame, *re, *im, *power, *gain, *time, *z_re, *z_im, *gamma, *root, *lsa_v;
  double *mem;
} Band;

/*
 * One stream. The per-bin state is TypeScript's S_* values, one array each rather than
 * interleaved, so the per-bin loops vectorise; past_minima is [sub-window][bin].
 */
typedef struct {
  Band *band;
  int hops, narrow_hops, wide_hops;
  double *history, *tail;
  double *smoothed, *sub_minimum, *past_minimum, *presence, *noise, *prev_snr;
  double *past_minima;
  double *mem;
} Core;

static void band_release(Band *b) {
  if (--b->refs > 0) return;
  free(b->mem);
  free(b->rev);
  free(b);
}

/* ---- the FFT (RealFft), for one band's size ---- */

static void pack_first_stages(Band *b, const double *input) {
  const int m = b->half;
  double *zr = b->z_re, *zi = b->z_im;
  const uint32_t *rev = b->rev;
  const int o1 = m, o2 = m >> 1, o3 = o1 + o2;
  for (int p = 0; p < m; p += 4) {
    const int i0 = 2 * (int)rev[p];
    const double x0r = input[i0], x0i = input[i0 + 1];
    const double x1r = input[i0 + o1], x1i = input[i0 + o1 + 1];
    const double x2r = input[i0 + o2], x2i = input[i0 + o2 + 1];
    const double x3r = input[i0 + o3], x3i = input[i0 + o3 + 1];
    const double ar = x0r + x1r, ai = x0i + x1i;
    const double br = x0r - x1r, bi = x0i - x1i;
    const double cr = x2r + x3r, ci = x2i + x3i;
    const double dr = x2i - x3i, di = -(x2r - x3r);
    zr[p] = ar + cr;
    zi[p] = ai + ci;
    zr[p + 2] = ar - cr;
    zi[p + 2] = ai - ci;
    zr[p + 1] = br + dr;
    zi[p + 1] = bi + di;
    zr[p + 3] = br - dr;
    zi[p + 3] = bi - di;
  }
}

static void first_stages_inverse(Band *b) {
  const int m = b->half;
  double *zr = b->z_re, *zi = b->z_im;
  /* RealFft.firstStages(true): s = −1. */
  for (int p = 0; p < m; p += 4) {
    const double ar = zr[p] + zr[p + 1], ai = zi[p] + zi[p + 1];
    const double br = zr[p] - zr[p + 1], bi = zi[p] - zi[p + 1];
    const double cr = zr[p + 2] + zr[p + 3], ci = zi[p + 2] + zi[p + 3];
    const double dr = -1.0 * (zi[p + 2] - zi[p + 3]);
    const double di = 1.0 * (zr[p + 2] - zr[p + 3]);
    zr[p] = ar + cr;
    zi[p] = ai + ci;
    zr[p + 2] = ar - cr;
    zi[p + 2] = ai - ci;
    zr[p + 1] = br + dr;
    zi[p + 1] = bi + di;
    zr[p + 3] = br - dr;
    zi[p + 3] = bi - di;
  }
}

static void later_stages(Band *b, int inverse) {
  const int m = b->half;
  double *zr = b->z_re, *zi = b->z_im;
  const double *tw_re = b->st_re;
  const double *tw_im = inverse ? b->st_im_inv : b->st_im;
  const double *tw3_re = inverse ? b->st3_re_inv : b->st3_re;
  const double *tw3_im = inverse ? b->st3_im_inv : b->st3_im;
  int half = 4;
  /* Butterflies j and j + 1 of a group side by side (adjacent data, adjacent twiddles): each lane
     does the scalar loop's operations. half is even from the first pass on. */
  for (; half * 4 <= m; half <<= 2) {
    const int len = half << 2;
    for (int a0 = 0; a0 < m; a0 += len) {
      for (int j = 0; j < half; j += 2) {
        const __m128d w1r = _mm_loadu_pd(tw_re + half + j), w1i = _mm_loadu_pd(tw_im + half + j);
        const __m128d w2r = _mm_loadu_pd(tw_re + 2 * half + j), w2i = _mm_loadu_pd(tw_im + 2 * half + j);
        const __m128d w3r = _mm_loadu_pd(tw3_re + 2 * half + j), w3i = _mm_loadu_pd(tw3_im + 2 * half + j);
        const int a = a0 + j, bb = a + half, c = bb + half, d = c + half;
        __m128d xr = _mm_loadu_pd(zr + bb), xi = _mm_loadu_pd(zi + bb);
        __m128d tr = _mm_sub_pd(_mm_mul_pd(xr, w1r), _mm_mul_pd(xi, w1i));
        __m128d ti = _mm_add_pd(_mm_mul_pd(xr, w1i), _mm_mul_pd(xi, w1r));
        const __m128d zar = _mm_loadu_pd(zr + a), zai = _mm_loadu_pd(zi + a);
        const __m128d ar = _mm_add_pd(zar, tr), ai = _mm_add_pd(zai, ti);
        const __m128d br = _mm_sub_pd(zar, tr), bi = _mm_sub_pd(zai, ti);
        xr = _mm_loadu_pd(zr + d);
        xi = _mm_loadu_pd(zi + d);
        tr = _mm_sub_pd(_mm_mul_pd(xr, w1r), _mm_mul_pd(xi, w1i));
        ti = _mm_add_pd(_mm_mul_pd(xr, w1i), _mm_mul_pd(xi, w1r));
        const __m128d zcr = _mm_loadu_pd(zr + c), zci = _mm_loadu_pd(zi + c);
        const __m128d cr = _mm_add_pd(zcr, tr), ci = _mm_add_pd(zci, ti);
        const __m128d dr = _mm_sub_pd(zcr, tr), di = _mm_sub_pd(zci, ti);
        tr = _mm_sub_pd(_mm_mul_pd(cr, w2r), _mm_mul_pd(ci, w2i));
        ti = _mm_add_pd(_mm_mul_pd(cr, w2i), _mm_mul_pd(ci, w2r));
        _mm_storeu_pd(zr + a, _mm_add_pd(ar, tr));
        _mm_storeu_pd(zi + a, _mm_add_pd(ai, ti));
        _mm_storeu_pd(zr + c, _mm_sub_pd(ar, tr));
        _mm_storeu_pd(zi + c, _mm_sub_pd(ai, ti));
        tr = _mm_sub_pd(_mm_mul_pd(dr, w3r), _mm_mul_pd(di, w3i));
        ti = _mm_add_pd(_mm_mul_pd(dr, w3i), _mm_mul_pd(di, w3r));
        _mm_storeu_pd(zr + bb, _mm_add_pd(br, tr));
        _mm_storeu_pd(zi + bb, _mm_add_pd(bi, ti));
        _mm_storeu_pd(zr + d, _mm_sub_pd(br, tr));
        _mm_storeu_pd(zi + d, _mm_sub_pd(bi, ti));
      }
    }
  }
  if (half < m) {
    const int len = half << 1;
    for (int p0 = 0; p0 < m; p0 += len) {
      for (int j = 0; j < half; j += 2) {
        const __m128d wr = _mm_loadu_pd(tw_re + half + j), wi = _mm_loadu_pd(tw_im + half + j);
        const int p = p0 + j, q = p + half;
        const __m128d xr = _mm_loadu_pd(zr + q), xi = _mm_loadu_pd(zi + q);
        const __m128d tr = _mm_sub_pd(_mm_mul_pd(xr, wr), _mm_mul_pd(xi, wi));
        const __m128d ti = _mm_add_pd(_mm_mul_pd(xr, wi), _mm_mul_pd(xi, wr));
        const __m128d ur = _mm_loadu_pd(zr + p), ui = _mm_loadu_pd(zi + p);
        _mm_storeu_pd(zr + p, _mm_add_pd(ur, tr));
        _mm_storeu_pd(zi + p, _mm_add_pd(ui, ti));
        _mm_storeu_pd(zr + q, _mm_sub_pd(ur, tr));
        _mm_storeu_pd(zi + q, _mm_sub_pd(ui, ti));
      }
    }
  }
}

/* RealFft.split with the power spectrum. */
static void split_power(Band *b) {
  const int m = b->half;
  const double *zr = b->z_re, *zi = b->z_im, *spr = b->sp_re, *spi = b->sp_im;
  double *out_re = b->re, *out_im = b->im, *pw = b->power;
  {
    const double ar = zr[0], ai = zi[0];
    const double er = 0.5 * (ar + ar), ei = 0.5 * (ai - ai);
    const double or_ = 0.5 * (ai + ai), oi = -0.5 * (ar - ar);
    double wr = spr[0], wi = spi[0];
    double r = er + wr * or_ - wi * oi;
    double i = ei + wr * oi + wi * or_;
    out_re[0] = r;
    out_im[0] = i;
    pw[0] = r * r + i * i;
    wr = spr[m];
    wi = spi[m];
    r = er + wr * or_ - wi * oi;
    i = ei + wr * oi + wi * or_;
    out_re[m] = r;
    out_im[m] = i;
    pw[m] = r * r + i * i;
  }
  const int mid = m >> 1;
  for (int k = 1; k <= mid; k++) {
    const int j = m - k;
    const double ar = zr[k], ai = zi[k], br = zr[j], bi = zi[j];
    const double er = 0.5 * (ar + br), ei = 0.5 * (ai - bi);
    const double or_ = 0.5 * (ai + bi), oi = -0.5 * (ar - br);
    double wr = spr[k], wi = spi[k];
    double r = er + wr * or_ - wi * oi;
    double i = ei + wr * oi + wi * or_;
    out_re[k] = r;
    out_im[k] = i;
    pw[k] = r * r + i * i;
    if (j == k) break;
    wr = spr[j];
    wi = spi[j];
    r = er + wr * or_ + wi * oi;
    i = -ei - wr * oi + wi * or_;
    out_re[j] = r;
    out_im[j] = i;
    pw[j] = r * r + i * i;
  }
}

/* RealFft.unsplit with a gain per bin. */
static void unsplit_gain(Band *b) {
  const int m = b->half;
  double *zr = b->z_re, *zi = b->z_im;
  const double *re = b->re, *im = b->im, *gain = b->gain, *spr = b->sp_re, *spi = b->sp_im;
  const uint32_t *rev = b->rev;
  {
    const double g0 = gain[0], gm = gain[m];
    const double ar = re[0] * g0, ai = im[0] * g0, br = re[m] * gm, bi = im[m] * gm;
    const double er = 0.5 * (ar + br), ei = 0.5 * (ai - bi);
    const double dr = 0.5 * (ar - br), di = 0.5 * (ai + bi);
    const double wr = spr[0], wi = -spi[0];
    const double or_ = dr * wr - di * wi;
    const double oi = dr * wi + di * wr;
    zr[0] = er - oi;
    zi[0] = ei + or_;
  }
  const int mid = m >> 1;
  for (int k = 1; k <= mid; k++) {
    const int j = m - k;
    const double gk = gain[k], gj = gain[j];
    const double ar = re[k] * gk, ai = im[k] * gk, br = re[j] * gj, bi = im[j] * gj;
    const double er = 0.5 * (ar + br), ei = 0.5 * (ai - bi);
    const double dr = 0.5 * (ar - br), di = 0.5 * (ai + bi);
    double wr = spr[k], wi = -spi[k];
    double or_ = dr * wr - di * wi;
    double oi = dr * wi + di * wr;
    uint32_t r = rev[k];
    zr[r] = er - oi;
    zi[r] = ei + or_;
    if (j == k) break;
    wr = spr[j];
    wi = -spi[j];
    or_ = -dr * wr - di * wi;
    oi = -dr * wi + di * wr;
    r = rev[j];
    zr[r] = er - oi;
    zi[r] = -ei + or_;
  }
}

/* ---- the suppressor (SpectralCore) ---- */

static inline double pos(double x) { return (x + fabs(x)) * 0.5; }
static inline double max_of(double a, double b) { return a < b ? b : a; }

static inline double lsa(const Band *b, double v) {
  if (v >= b->lsa_max_v) return sqrt(v);
  const double x = v * b->lsa_step;
  const int i = (int)x;
  const double t = b->lsa[i];
  return t + (x - i) * (b->lsa[i + 1] - t);
}

static void start_noise(Core *c) {
  const Band *b = c->band;
  const double *power = b->power;
  const int bins = b->bins, last = bins - 1;
  for (int k = 0; k <= last; k++) {
    const double lo = power[k == 0 ? 1 : k - 1];
    const double hi = power[k == last ? last - 1 : k + 1];
    const double sf = 0.25 * lo + 0.5 * power[k] + 0.25 * hi;
    c->smoothed[k] = sf;
    c->sub_minimum[k] = sf;
    c->past_minimum[k] = sf;
    for (int u = 0; u < b->sub_windows; u++) c->past_minima[u * bins + k] = sf;
    c->noise[k] = max_of(sf, b->noise_floor);
  }
}

/* MCRA for bin k, with its frequency-smoothed periodogram `sf` and its own `pk`. */
static inline void track(Core *c, const Band *b, int k, double sf, double pk) {
  const double sm = b->alpha_s * c->smoothed[k] + (1 - b->alpha_s) * sf;
  c->smoothed[k] = sm;
  const double sub = c->sub_minimum[k] < sm ? c->sub_minimum[k] : sm;
  c->sub_minimum[k] = sub;
  const double mn = c->past_minimum[k] < sub ? c->past_minimum[k] : sub;
  const double speech = sm > b->delta * mn ? 1.0 : 0.0;
  const double p = b->alpha_p * c->presence[k] + (1 - b->alpha_p) * speech;
  c->presence[k] = p;
  const double a = b->alpha_d + (1 - b->alpha_d) * p;
  c->noise[k] = max_of(a * c->noise[k] + (1 - a) * pk, b->noise_floor);
}

static void update(Core *c, int bins) {
  const Band *b = c->band;
  const double *power = b->power;
  double *gain = b->gain;
  const double floor_ = b->gain_floor;
  const int all_bins = b->bins, last = all_bins - 1;
  if (c->hops > 0) {
    /* TypeScript rolls lo/pk/hi along the bins; the same neighbours, read directly: bin 0 and
       the last bin mirror their missing neighbour. */
    const int inner = bins < last ? bins : last;
    track(c, b, 0, 0.25 * power[1] + 0.5 * power[0] + 0.25 * power[1], power[0]);
    int k = 1;
    /* Two bins at a time: the same operations, as SSE2's packed ones (min/max give exactly the
       scalar selects' values here: no NaN, and the floors are positive). */
    const __m128d q = _mm_set1_pd(0.25), h = _mm_set1_pd(0.5), one = _mm_set1_pd(1.0);
    const __m128d as = _mm_set1_pd(b->alpha_s), as1 = _mm_set1_pd(1 - b->alpha_s);
    const __m128d ap = _mm_set1_pd(b->alpha_p), ap1 = _mm_set1_pd(1 - b->alpha_p);
    const __m128d ad = _mm_set1_pd(b->alpha_d), ad1 = _mm_set1_pd(1 - b->alpha_d);
    const __m128d delta = _mm_set1_pd(b->delta), nf = _mm_set1_pd(b->noise_floor);
    for (; k + 1 < inner; k += 2) {
      const __m128d pk = _mm_loadu_pd(power + k);
      const __m128d sf = _mm_add_pd(_mm_add_pd(_mm_mul_pd(q, _mm_loadu_pd(power + k - 1)), _mm_mul_pd(h, pk)), _mm_mul_pd(q, _mm_loadu_pd(power + k + 1)));
      const __m128d sm = _mm_add_pd(_mm_mul_pd(as, _mm_loadu_pd(c->smoothed + k)), _mm_mul_pd(as1, sf));
      _mm_storeu_pd(c->smoothed + k, sm);
      const __m128d sub = _mm_min_pd(_mm_loadu_pd(c->sub_minimum + k), sm);
      _mm_storeu_pd(c->sub_minimum + k, sub);
      const __m128d mn = _mm_min_pd(_mm_loadu_pd(c->past_minimum + k), sub);
      const __m128d speech = _mm_and_pd(_mm_cmpgt_pd(sm, _mm_mul_pd(delta, mn)), one);
      const __m128d p = _mm_add_pd(_mm_mul_pd(ap, _mm_loadu_pd(c->presence + k)), _mm_mul_pd(ap1, speech));
      _mm_storeu_pd(c->presence + k, p);
      const __m128d a = _mm_add_pd(ad, _mm_mul_pd(ad1, p));
      const __m128d a1 = _mm_sub_pd(one, a);
      _mm_storeu_pd(c->noise + k, _mm_max_pd(_mm_add_pd(_mm_mul_pd(a, _mm_loadu_pd(c->noise + k)), _mm_mul_pd(a1, pk)), nf));
    }
    for (; k < inner; k++) track(c, b, k, 0.25 * power[k - 1] + 0.5 * power[k] + 0.25 * power[k + 1], power[k]);
    if (bins > last) track(c, b, last, 0.25 * power[last - 1] + 0.5 * power[last] + 0.25 * power[last - 1], power[last]);
  }
  /* The gain in three passes: divisions and square roots (vectorised), the LSA table lookups,
     then the rest; per bin the same operations in the same order as TypeScript's. */
  const double add = b->alpha_dd, xi_min = b->xi_min;
  double *gamma = b->gamma, *root = b->root, *lsa_v = b->lsa_v, *prev_snr = c->prev_snr;
  const double *noise = c->noise;
  int k = 0;
  {
    const __m128d one = _mm_set1_pd(1.0), half = _mm_set1_pd(0.5), vadd = _mm_set1_pd(add), vadd1 = _mm_set1_pd(1 - add), vxi = _mm_set1_pd(xi_min);
    /* xi_min and the gain floor are positive and no value here is NaN (the noise is floored),
       so the packed max/min select exactly what max_of and the scalar min select. */
    const __m128d abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
    for (; k + 1 < bins; k += 2) {
      const __m128d g = _mm_div_pd(_mm_loadu_pd(power + k), _mm_loadu_pd(noise + k));
      const __m128d gm1 = _mm_sub_pd(g, one);
      const __m128d pos_ = _mm_mul_pd(_mm_add_pd(gm1, _mm_and_pd(gm1, abs_mask)), half);
      const __m128d xi = _mm_max_pd(_mm_add_pd(_mm_mul_pd(vadd, _mm_loadu_pd(prev_snr + k)), _mm_mul_pd(vadd1, pos_)), vxi);
      const __m128d w = _mm_div_pd(xi, _mm_add_pd(one, xi));
      _mm_storeu_pd(gamma + k, g);
      _mm_storeu_pd(lsa_v + k, _mm_mul_pd(w, g));
      _mm_storeu_pd(root + k, _mm_sqrt_pd(_mm_div_pd(w, g)));
    }
  }
  for (; k < bins; k++) {
    const double g = power[k] / noise[k];
    const double xi = max_of(add * prev_snr[k] + (1 - add) * pos(g - 1), xi_min);
    const double w = xi / (1 + xi);
    gamma[k] = g;
    lsa_v[k] = w * g;
    root[k] = sqrt(w / g);
  }
  for (k = 0; k < bins; k++) lsa_v[k] = lsa(b, lsa_v[k]);
  k = 0;
  {
    const __m128d one = _mm_set1_pd(1.0), zero = _mm_setzero_pd(), fl = _mm_set1_pd(floor_);
    for (; k + 1 < bins; k += 2) {
      const __m128d g = _mm_min_pd(_mm_mul_pd(_mm_loadu_pd(root + k), _mm_loadu_pd(lsa_v + k)), one);
      _mm_storeu_pd(prev_snr + k, _mm_mul_pd(_mm_mul_pd(g, g), _mm_loadu_pd(gamma + k)));
      const __m128d silent = _mm_cmpeq_pd(_mm_loadu_pd(power + k), zero);
      _mm_storeu_pd(gain + k, _mm_or_pd(_mm_and_pd(silent, fl), _mm_andnot_pd(silent, _mm_max_pd(g, fl))));
    }
  }
  for (; k < bins; k++) {
    const double x = root[k] * lsa_v[k];
    const double g = x < 1 ? x : 1;
    prev_snr[k] = g * g * gamma[k];
    gain[k] = power[k] == 0 ? floor_ : max_of(g, floor_);
  }
  for (k = bins; k < all_bins; k++) gain[k] = floor_;
  /* Spectral smoothing: TypeScript does it in place with a one-bin lag, which reads the very
     values this copy keeps. */
  double *smooth = b->root;
  memcpy(smooth, gain, all_bins * sizeof(double));
  for (k = 1; k < last; k++) gain[k] = 0.25 * smooth[k - 1] + 0.5 * smooth[k] + 0.25 * smooth[k + 1];
}

static void roll_sub_window(Core *c) {
  const Band *b = c->band;
  const int sw = b->sub_windows, bins = b->bins;
  const int slot = (c->hops / b->sub_hops) % sw;
  double *pm = c->past_minima;
  memcpy(pm + slot * bins, c->sub_minimum, bins * sizeof(double));
  for (int k = 0; k < bins; k++) {
    double m = pm[k];
    for (int u = 1; u < sw; u++) m = pm[u * bins + k] < m ? pm[u * bins + k] : m;
    c->past_minimum[k] = m;
  }
  memcpy(c->sub_minimum, c->smoothed, bins * sizeof(double));
}

static void hop(Core *c, const int16_t *input, int16_t *out) {
  Band *b = c->band;
  const int h = b->hop, all_bins = b->bins, skip_edge = b->skip_edge;
  const double *window = b->window;
  double *frame = b->frame, *history = c->history;
  for (int n = 0; n < h; n++) {
    frame[n] = history[n] * window[n];
    const double x = input[n];
    frame[h + n] = x * window[h + n];
    history[n] = x;
  }
  pack_first_stages(b, frame);
  later_stages(b, 0);
  split_power(b);
  int bins = all_bins;
  if (skip_edge < all_bins) {
    const double *power = b->power;
    double low = 0, high = 0;
    for (int k = 0; k < skip_edge; k++) low += power[k];
    for (int k = skip_edge; k < all_bins; k++) high += power[k];
    if (high <= low * b->nb_ratio || high <= b->skip_abs) {
      c->wide_hops = 0;
      if (c->narrow_hops < b->nb_hops) c->narrow_hops++;
    } else if (++c->wide_hops >= b->nb_exit) c->narrow_hops = 0;
    if (c->hops > 0 && c->narrow_hops >= b->nb_hops) bins = skip_edge;
  }
  if (c->hops == 0) start_noise(c);
  update(c, bins);
  if (c->hops > 0 && c->hops % b->sub_hops == 0) roll_sub_window(c);

  unsplit_gain(b);
  first_stages_inverse(b);
  later_stages(b, 1);
  const double scale = 1.0 / b->half;
  const int pairs = b->win >> 1;
  double *time = b->time;
  const double *zr = b->z_re, *zi = b->z_im;
  for (int n = 0; n < pairs; n++) {
    time[2 * n] = zr[n] * scale * window[2 * n];
    time[2 * n + 1] = zi[n] * scale * window[2 * n + 1];
  }
  double *tail = c->tail;
  for (int n = 0; n < h; n++) {
    const double y = tail[n] + time[n];
    tail[n] = time[h + n];
    double v = floor(y + 0.5);
    if (v - 0.5 > y) v -= 1;
    out[n] = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
  }
  c->hops++;
}

/* ---- N-API ---- */

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, NULL, "spectral_denoise: " #call " failed"); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

static int typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *length) {
  bool is;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, v, &type, length, data, NULL, NULL) != napi_ok) return 0;
  return type == want;
}

static void band_finalize(napi_env env, void *data, void *hint) { band_release((Band *)data); }

/* Tags on the two kinds of handle, so neither can be passed for the other (or anything else). */
static const napi_type_tag BAND_TAG = {0x5b1c0a7e2d3f4e61ULL, 0x9a8b7c6d5e4f3a21ULL};
static const napi_type_tag CORE_TAG = {0x5b1c0a7e2d3f4e62ULL, 0x9a8b7c6d5e4f3a22ULL};

/* The pointer inside `v` when it is an external tagged `tag`; NULL otherwise. */
static void *unwrap(napi_env env, napi_value v, const napi_type_tag *tag) {
  napi_valuetype t;
  bool tagged;
  void *data;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external) return NULL;
  if (napi_check_object_type_tag(env, v, tag, &tagged) != napi_ok || !tagged) return NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok) return NULL;
  return data;
}


static void core_finalize(napi_env env, void *data, void *hint) {
  Core *c = (Core *)data;
  Band *b = c->band;
  free(c->mem);
  free(c);
  band_release(b);
}

/*
 * `data` as a handle tagged `tag`, which frees it (`finalize`) when collected; NULL with an error
 * thrown when that fails (and `data` freed, or left to the collector once the external exists).
 */
static napi_value handle(napi_env env, void *data, napi_finalize finalize, const napi_type_tag *tag) {
  napi_value out;
  if (napi_create_external(env, data, finalize, NULL, &out) != napi_ok) {
    finalize(env, data, NULL);
    napi_throw_error(env, NULL, "spectral_denoise: napi_create_external failed");
    return NULL;
  }
  if (napi_type_tag_object(env, out, tag) != napi_ok) {
    napi_throw_error(env, NULL, "spectral_denoise: napi_type_tag_object failed");
    return NULL;
  }
  return out;
}

/* Copies `n` doubles of argument `v` into `dst`; 0 when it is not a Float64Array that long. */
static int take(napi_env env, napi_value v, double *dst, size_t n) {
  void *data;
  size_t len;
  if (!typed(env, v, napi_float64_array, &data, &len) || len != n) return 0;
  memcpy(dst, data, n * sizeof(double));
  return 1;
}

/*
 * createBand(params: Float64Array, window: Float64Array, lsa: Float64Array, rev: Uint32Array,
 *            stages: Float64Array (7 × m: stRe, stIm, stImInv, st3Re, st3Im, st3ReInv, st3ImInv),
 *            split: Float64Array (2 × (m + 1): spRe, spIm)) → band
 */
static napi_value create_band(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *data;
  size_t len;
  if (argc < 6 || !typed(env, argv[0], napi_float64_array, &data, &len) || len != P_COUNT) {
    napi_throw_type_error(env, NULL, "createBand: params must be a Float64Array of the band's sizes and constants");
    return NULL;
  }
  const double *p = (const double *)data;
  const int nfft = (int)p[P_NFFT], half = nfft / 2, hop_ = (int)p[P_HOP], win = (int)p[P_WIN], bins = (int)p[P_BINS];
  const int lsa_len = (int)(p[P_LSA_MAX_V] * p[P_LSA_STEP]) + 2;
  if (nfft < 8 || (nfft & (nfft - 1)) != 0 || bins != half + 1 || win != 2 * hop_ || win > nfft || hop_ < 1 ||
      p[P_SKIP_EDGE] < 1 || p[P_SKIP_EDGE] > bins || p[P_SUB_WINDOWS] < 1 || p[P_SUB_HOPS] < 1 || lsa_len < 2) {
    napi_throw_range_error(env, NULL, "createBand: inconsistent sizes");
    return NULL;
  }
  Band *b = calloc(1, sizeof(Band));
  if (!b) {
    napi_throw_error(env, NULL, "createBand: out of memory");
    return NULL;
  }
  b->refs = 1;
  b->hop = hop_;
  b->win = win;
  b->nfft = nfft;
  b->half = half;
  b->bins = bins;
  b->gain_floor = p[P_GAIN_FLOOR];
  b->skip_edge = (int)p[P_SKIP_EDGE];
  b->skip_abs = p[P_SKIP_ABS];
  b->alpha_s = p[P_ALPHA_S];
  b->alpha_d = p[P_ALPHA_D];
  b->alpha_p = p[P_ALPHA_P];
  b->delta = p[P_DELTA];
  b->sub_windows = (int)p[P_SUB_WINDOWS];
  b->sub_hops = (int)p[P_SUB_HOPS];
  b->alpha_dd = p[P_ALPHA_DD];
  b->xi_min = p[P_XI_MIN];
  b->noise_floor = p[P_NOISE_FLOOR];
  b->nb_ratio = p[P_NB_RATIO];
  b->nb_exit = (int)p[P_NB_EXIT];
  b->nb_hops = (int)p[P_NB_HOPS];
  b->lsa_step = p[P_LSA_STEP];
  b->lsa_max_v = p[P_LSA_MAX_V];
  b->lsa_len = lsa_len;
  /* Tables: window, lsa, 7 stage tables, 2 split tables; scratch: frame, time (nfft), re, im,
     power, gain (bins), z_re, z_im (half). */
  const size_t doubles = (size_t)win + lsa_len + 7 * (size_t)half + 2 * ((size_t)half + 1) + 2 * (size_t)nfft + 7 * (size_t)bins + 2 * (size_t)half;
  b->mem = calloc(doubles, sizeof(double));
  b->rev = calloc(half, sizeof(uint32_t));
  if (!b->mem || !b->rev) {
    band_release(b);
    napi_throw_error(env, NULL, "createBand: out of memory");
    return NULL;
  }
  double *at = b->mem;
#define CARVE(field, n) (b->field = at, at += (n))
  CARVE(window, win);
  CARVE(lsa, lsa_len);
  CARVE(st_re, half);
  CARVE(st_im, half);
  CARVE(st_im_inv, half);
  CARVE(st3_re, half);
  CARVE(st3_im, half);
  CARVE(st3_re_inv, half);
  CARVE(st3_im_inv, half);
  CARVE(sp_re, half + 1);
  CARVE(sp_im, half + 1);
  CARVE(frame, nfft);
  CARVE(time, nfft);
  CARVE(re, bins);
  CARVE(im, bins);
  CARVE(power, bins);
  CARVE(gain, bins);
  CARVE(gamma, bins);
  CARVE(root, bins);
  CARVE(lsa_v, bins);
  CARVE(z_re, half);
  CARVE(z_im, half);
#undef CARVE
  void *rev;
  size_t rev_len;
  int ok = take(env, argv[1], b->window, win) && take(env, argv[2], b->lsa, lsa_len) &&
           take(env, argv[4], b->st_re, 7 * (size_t)half) && take(env, argv[5], b->sp_re, 2 * ((size_t)half + 1)) &&
           typed(env, argv[3], napi_uint32_array, &rev, &rev_len) && rev_len == (size_t)half;
  if (ok) {
    memcpy(b->rev, rev, half * sizeof(uint32_t));
    for (int i = 0; i < half && ok; i++) ok = b->rev[i] < (uint32_t)half;
  }
  if (!ok) {
    band_release(b);
    napi_throw_type_error(env, NULL, "createBand: a table is missing or has the wrong type or length");
    return NULL;
  }
  return handle(env, b, band_finalize, &BAND_TAG);
}

static napi_value create_core(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Band *b = argc < 1 ? NULL : (Band *)unwrap(env, argv[0], &BAND_TAG);
  if (!b) {
    napi_throw_type_error(env, NULL, "createCore: expected a band");
    return NULL;
  }
  Core *c = calloc(1, sizeof(Core));
  const size_t doubles = 2 * (size_t)b->hop + (6 + (size_t)b->sub_windows) * b->bins;
  if (!c || !(c->mem = calloc(doubles, sizeof(double)))) {
    free(c);
    napi_throw_error(env, NULL, "createCore: out of memory");
    return NULL;
  }
  double *at = c->mem;
  c->history = at;
  c->tail = at += b->hop;
  c->smoothed = at += b->hop;
  c->sub_minimum = at += b->bins;
  c->past_minimum = at += b->bins;
  c->presence = at += b->bins;
  c->noise = at += b->bins;
  c->prev_snr = at += b->bins;
  c->past_minima = at += b->bins;
  c->band = b;
  b->refs++;
  return handle(env, c, core_finalize, &CORE_TAG);
}

/* process(core, input: Int16Array, output: Int16Array): input.length / hop hops, same length out. */
static napi_value process_frames(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *in, *out;
  size_t in_len, out_len;
  Core *c = argc < 3 ? NULL : (Core *)unwrap(env, argv[0], &CORE_TAG);
  if (!c || !typed(env, argv[1], napi_int16_array, &in, &in_len) || !typed(env, argv[2], napi_int16_array, &out, &out_len)) {
    napi_throw_type_error(env, NULL, "process: expected (core, Int16Array, Int16Array)");
    return NULL;
  }
  const size_t h = (size_t)c->band->hop;
  if (in_len != out_len || in_len % h != 0) {
    napi_throw_range_error(env, NULL, "process: input and output must be the same whole number of hops");
    return NULL;
  }
  const int16_t *src = (const int16_t *)in;
  int16_t *dst = (int16_t *)out;
  for (size_t at = 0; at < in_len; at += h) hop(c, src + at, dst + at);
  return NULL;
}

void spectral_register(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    {"createBand", NULL, create_band, NULL, NULL, NULL, napi_default, NULL},
    {"createCore", NULL, create_core, NULL, NULL, NULL, napi_default, NULL},
    {"process", NULL, process_frames, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}
