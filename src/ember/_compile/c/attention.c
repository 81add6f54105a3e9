/* Attention's forward, softmax(q k^T * scale + bias) v (lowerings.attention), per head:
   the scores, their softmax row by row and the output, in one pass over the head's data (in
   cache). NumPy made ~10 passes over the (heads, L, S) scores around batched matmuls of tiny
   matrices: for a tiny GPT's heads (64 of 32x16) 445 us, these loops 257 us. The backward
   stays NumPy's: the same loops for its four products took as long as OpenBLAS's batched
   ones (330 us). One thread: split over the cores, the loops' threads and OpenBLAS's
   (spinning after the matmuls around attention) took turns, and a tiny GPT's step took
   2.2x longer.

   Sizes: L query rows and S key rows a head, E the query's and key's features, EV the
   value's. */
#include "prelude.h"
#include "lowering.h"

/* out (M x N) = a (M x K, element [m][k] at a[m * a_rs + k * a_cs]) times b (K x N, rows
   contiguous), four rows of out at a time in registers: four independent chains of
   multiply-adds per column vector, where one row's chain would wait on each step. */
#define PRODUCT_ROWS(out, a, a_rs, a_cs, b, M, K, N)                                        \
  for (int r0_ = 0; r0_ < (M); r0_ += 4) {                                                  \
    const int nr_ = (M) - r0_ < 4 ? (M) - r0_ : 4;                                          \
    T acc_[4][N];                                                                           \
    for (int r_ = 0; r_ < 4; r_++)                                                          \
      for (int n_ = 0; n_ < (N); n_++) acc_[r_][n_] = 0;                                    \
    for (int k_ = 0; k_ < (K); k_++) {                                                      \
      const T *b_ = (b) + k_ * (N);                                                         \
      for (int r_ = 0; r_ < 4; r_++) {                                                      \
        const T c_ = r_ < nr_ ? (a)[(r0_ + r_) * (a_rs) + k_ * (a_cs)] : 0;                \
        _Pragma("omp simd")                                                                 \
        for (int n_ = 0; n_ < (N); n_++) acc_[r_][n_] += c_ * b_[n_];                       \
      }                                                                                     \
    }                                                                                       \
    for (int r_ = 0; r_ < nr_; r_++)                                                        \
      for (int n_ = 0; n_ < (N); n_++) (out)[(r0_ + r_) * (N) + n_] = acc_[r_][n_];         \
  }

static void attn_fwd(const T *q, const T *k, const T *v, const T *bias, const T scale,
                     T *out, T *probs, npy_intp heads) {
  for (npy_intp h = 0; h < heads; h++) {
    T kt[E * S]; /* (flat: the product reads it as one E x S block) */
    const T *qh = q + h * L * E, *kh = k + h * S * E, *vh = v + h * S * EV;
    T *p = probs + h * L * S, *o = out + h * L * EV;
    for (int s = 0; s < S; s++)
      for (int e = 0; e < E; e++) kt[e * S + s] = kh[s * E + e];
    PRODUCT_ROWS(p, qh, E, 1, kt, L, E, S)
    for (int l = 0; l < L; l++) {
      T *z = p + l * S;
      /* NumPy's order: scores * scale, + bias, - the row's maximum (NaN wins; a row masked
         everywhere has maximum 0, so its exps are 0 and its probabilities 0) */
      #pragma omp simd
      for (int s = 0; s < S; s++) z[s] = z[s] * scale;
      if (bias) {
        #pragma omp simd
        for (int s = 0; s < S; s++) z[s] = z[s] + bias[l * S + s];
      }
      T m = row_max(z, S);
      if (m == -(T)INFINITY) m = 0;
      T total = 0;
      #pragma omp simd reduction(+:total)
      for (int s = 0; s < S; s++) { z[s] = exp_or_zero(z[s] - m); total += z[s]; }
      if (total == 0) total = 1;
      #pragma omp simd
      for (int s = 0; s < S; s++) z[s] = z[s] / total;
    }
    PRODUCT_ROWS(o, p, S, 1, vh, L, S, EV)
  }
}

/* The kernels' arguments: C-contiguous NPY_T arrays of per_head[j] elements a head (shared:
   -per_head[j] elements in all), the number of heads from the first's; the float at
   `scale_at`, and None allowed at `optional_at` (then NULL). The heads, or -1. */
static npy_intp head_args(PyObject *const *args, Py_ssize_t nargs, int n,
                          const npy_intp *per_head, int scale_at, int optional_at, T **d) {
  if (nargs != n || !PyFloat_Check(args[scale_at]) || !PyArray_Check(args[0])) return -1;
  const npy_intp heads = PyArray_SIZE((PyArrayObject *)args[0]) / per_head[0];
  for (int j = 0; j < n; j++) {
    d[j] = NULL;
    if (j == scale_at || (j == optional_at && args[j] == Py_None)) continue;
    if (!PyArray_Check(args[j])) return -1;
    PyArrayObject *a = (PyArrayObject *)args[j];
    if (!PyArray_IS_C_CONTIGUOUS(a) || PyArray_TYPE(a) != NPY_T) return -1;
    const npy_intp size = per_head[j] < 0 ? -per_head[j] : heads * per_head[j];
    if (PyArray_SIZE(a) != size) return -1;
    d[j] = PyArray_DATA(a);
  }
  return heads;
}

static PyObject *attention(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (q, k, v, bias (L*S elements, shared by every head) or None, scale, out, probs) */
  static const npy_intp per_head[7] = {L * E, S * E, S * EV, -L * S, 0, L * EV, L * S};
  T *d[7];
  const npy_intp heads = head_args(args, nargs, 7, per_head, 4, 3, d);
  if (heads < 0) {
    PyErr_SetString(PyExc_TypeError, "ember attention kernel: arguments");
    return NULL;
  }
  const T scale = (T)PyFloat_AS_DOUBLE(args[4]);
  Py_BEGIN_ALLOW_THREADS
  attn_fwd(d[0], d[1], d[2], d[3], scale, d[5], d[6], heads);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

/* The backward from the saved probabilities p, per head (as nn_attention._sdpa_vjp):
   gv = p^T g, gs = p * (g v^T - rowsum(g v^T * p)) * scale, gq = gs k, gk = gs^T q. */
static void attn_bwd(const T *q, const T *k, const T *v, const T *p, const T *g, const T scale,
                     T *gq, T *gk, T *gv, npy_intp heads) {
  for (npy_intp h = 0; h < heads; h++) {
    T vt[EV * S], gs[L * S]; /* (flat: each is read as one block) */
    const T *qh = q + h * L * E, *kh = k + h * S * E, *vh = v + h * S * EV;
    const T *ph = p + h * L * S, *gh = g + h * L * EV;
    for (int s = 0; s < S; s++)
      for (int e = 0; e < EV; e++) vt[e * S + s] = vh[s * EV + e];
    PRODUCT_ROWS(gs, gh, EV, 1, vt, L, EV, S) /* g v^T */
    for (int l = 0; l < L; l++) {
      const T *pl = ph + l * S;
      T *gl = gs + l * S, dot = 0;
      #pragma omp simd reduction(+:dot)
      for (int s = 0; s < S; s++) dot += gl[s] * pl[s];
      #pragma omp simd
      for (int s = 0; s < S; s++) gl[s] = pl[s] * (gl[s] - dot) * scale;
    }
    PRODUCT_ROWS(gv + h * S * EV, ph, 1, S, gh, S, L, EV) /* p^T g */
    PRODUCT_ROWS(gq + h * L * E, gs, S, 1, kh, L, S, E) /* gs k */
    PRODUCT_ROWS(gk + h * S * E, gs, 1, S, qh, S, L, E) /* gs^T q */
  }
}

static PyObject *attention_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (q, k, v, probs, g, scale, gq, gk, gv) */
  static const npy_intp per_head[9] = {L * E, S * E, S * EV, L * S, L * EV, 0, L * E, S * E,
                                       S * EV};
  T *d[9];
  const npy_intp heads = head_args(args, nargs, 9, per_head, 5, -1, d);
  if (heads < 0) {
    PyErr_SetString(PyExc_TypeError, "ember attention_grad kernel: arguments");
    return NULL;
  }
  const T scale = (T)PyFloat_AS_DOUBLE(args[5]);
  Py_BEGIN_ALLOW_THREADS
  attn_bwd(d[0], d[1], d[2], d[3], d[4], scale, d[6], d[7], d[8], heads);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}
