/* BatchNorm in training followed by a ReLU, for compiled graphs where nothing else reads
   the normalised values (lowerings.batch_norm_relu_train, batch_norm_relu_grad): the ReLU
   is applied as the normalisation writes, and its gradient (g * (y > 0)) is taken as the
   backward's loops read g, so neither the normalised array nor the masked gradient is
   written and read back (two passes of the W10 conv step's largest arrays, forward, and
   two backward). The statistics are batch_norm.c's loops, included here.

   Sizes: as batch_norm.c's (C the channels, L a sample's elements of a channel, PARALLEL 1
   to split the channels over the cores). */
#include "batch_norm.c"

/* (x, mean, alpha, beta, out): out = relu((x - mean) * alpha + beta) per channel. */
static void normalize_relu_loop(const T *x, const T *mean, const T *alpha, const T *beta,
                                T *out, npy_intp n) {
  normalize_channels(x, mean, alpha, beta, out, n, 1);
}

/* The gradient reaching the normalised values: the ReLU's rule g * (y > 0) (an infinite
   g where y <= 0 gives NaN, as NumPy's product does). */
#define MASKED(gc, yc, l) ((gc)[l] * (T)((yc)[l] > 0))

/* (gy, y, x, mean, sum_g, dot): each channel's sum of g and of g * (x - mean), g the
   masked gy. */
static void sums_relu_loop(const T *gy, const T *y, const T *x, const T *mean, T *sum_g,
                           T *dot, npy_intp n) {
  CHANNELS {
    const T mu = mean[c];
    double s = 0, d = 0;
    for (npy_intp i = 0; i < n; i++) {
      const npy_intp at = i * PLANE + c * L;
      const T *gc = gy + at, *yc = y + at, *xc = x + at;
      _Pragma("omp simd reduction(+:s, d)")
      for (npy_intp l = 0; l < L; l++) {
        const T g = MASKED(gc, yc, l);
        s += g;
        d += (double)g * (xc[l] - mu);
      }
    }
    sum_g[c] = (T)s;
    dot[c] = (T)d;
  }
}

/* (gy, y, x, mean, scale, k, shift, gx): gx = g * scale - (x - mean) * k - shift per
   channel, g the masked gy. */
static void grad_relu_loop(const T *gy, const T *y, const T *x, const T *mean,
                           const T *scale, const T *k, const T *shift, T *gx, npy_intp n) {
  CHANNELS {
    const T mu = mean[c], sc = scale[c], kc = k[c], sh = shift[c];
    for (npy_intp i = 0; i < n; i++) {
      const npy_intp at = i * PLANE + c * L;
      const T *gc = gy + at, *yc = y + at, *xc = x + at;
      T *oc = gx + at;
      _Pragma("omp simd")
      for (npy_intp l = 0; l < L; l++) oc[l] = MASKED(gc, yc, l) * sc - (xc[l] - mu) * kc - sh;
    }
  }
}

BN_FUNCTION(batch_norm_relu_normalize, 5, "xcccx", 4,
            normalize_relu_loop(D(0), D(1), D(2), D(3), D(4), n);)
BN_FUNCTION(batch_norm_relu_sums, 6, "xxxccc", 4,
            sums_relu_loop(D(0), D(1), D(2), D(3), D(4), D(5), n);)
BN_FUNCTION(batch_norm_relu_grad, 8, "xxxccccx", 7,
            grad_relu_loop(D(0), D(1), D(2), D(3), D(4), D(5), D(6), D(7), n);)
