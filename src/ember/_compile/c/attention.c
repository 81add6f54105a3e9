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

/* Each product accumulates row by row, a different row each step (a row's own running sum
   would chain every step on the last one's store): dst (rows x n) += a[r * a_stride] * b,
   for the rows of one column of a. */
#define ADD_SCALED_ROWS(dst, a, a_stride, b, rows, n)                                       \
  for (int r = 0; r < (rows); r++) {                                                        \
    const T c_ = (a)[r * (a_stride)];                                                       \
    T *d_ = (dst) + r * (n);                                                                \
    _Pragma("omp simd")                                                                     \
    for (int i_ = 0; i_ < (n); i_++) d_[i_] += c_ * (b)[i_];                                \
  }

static void attn_fwd(const T *q, const T *k, const T *v, const T *bias, const T scale,
                     T *out, T *probs, npy_intp heads) {
  for (npy_intp h = 0; h < heads; h++) {
    T kt[E][S];
    const T *qh = q + h * L * E, *kh = k + h * S * E, *vh = v + h * S * EV;
    T *p = probs + h * L * S, *o = out + h * L * EV;
    for (int s = 0; s < S; s++)
      for (int e = 0; e < E; e++) kt[e][s] = kh[s * E + e];
    for (int i = 0; i < L * S; i++) p[i] = 0;
    for (int e = 0; e < E; e++) ADD_SCALED_ROWS(p, qh + e, E, kt[e], L, S)
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
    for (int i = 0; i < L * EV; i++) o[i] = 0;
    for (int s = 0; s < S; s++) ADD_SCALED_ROWS(o, p + s, S, vh + s * EV, L, EV)
  }
}

static PyObject *attention(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (q, k, v, bias (L*S elements) or None, scale, out, probs): C-contiguous NPY_T arrays
     of these sizes a head (the bias shared by all), the number of heads from q's */
  static const npy_intp per_head[7] = {L * E, S * E, S * EV, 0, 0, L * EV, L * S};
  T *d[7] = {0};
  if (nargs != 7 || !PyFloat_Check(args[4]) || !PyArray_Check(args[0])) goto bad;
  const npy_intp heads = PyArray_SIZE((PyArrayObject *)args[0]) / (L * E);
  for (int j = 0; j < 7; j++) {
    if (j == 4 || (j == 3 && args[j] == Py_None)) continue;
    if (!PyArray_Check(args[j])) goto bad;
    PyArrayObject *a = (PyArrayObject *)args[j];
    if (!PyArray_IS_C_CONTIGUOUS(a) || PyArray_TYPE(a) != NPY_T) goto bad;
    if (PyArray_SIZE(a) != (j == 3 ? L * S : heads * per_head[j])) goto bad;
    d[j] = PyArray_DATA(a);
  }
  const T scale = (T)PyFloat_AS_DOUBLE(args[4]);
  Py_BEGIN_ALLOW_THREADS
  attn_fwd(d[0], d[1], d[2], d[3], scale, d[5], d[6], heads);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember attention kernel: arguments");
  return NULL;
}
