/* LayerNorm over rows of D elements (lowerings.layer_norm, layer_norm_backward). Two passes
   over each row for the statistics (accumulated in double, in SIMD lanes: OpenMP's
   reduction allows the reordering), one to write; the backward's two row sums likewise.
   NumPy's code makes ~10 passes with a temporary each: 5 LayerNorms of a tiny GPT took
   3.4 ms a step of 13, these loops about 0.1.

   Sizes: D, the elements of a row (the normalised shape's). */
#include "prelude.h"
#include "lowering.h"

static PyObject *layer_norm(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (x, weight or None, bias or None, out, mean, invstd, eps): rows of D elements */
  PyArrayObject *a[6] = {0}; PyObject *hold[6] = {0};
  if (nargs != 7 || !PyArray_Check(args[0])) goto bad;
  const npy_intp n = PyArray_SIZE((PyArrayObject *)args[0]), rows = n / D;
  if (n % D) goto bad;
  const npy_intp size[6] = {n, D, D, n, rows, rows};
  for (int j = 0; j < 6; j++) {
    if (args[j] == Py_None && (j == 1 || j == 2)) continue;
    if (j >= 3 && !(PyArray_Check(args[j])
                    && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)args[j]))) goto bad;
    if (!(a[j] = _arg(args[j], NPY_T, size[j], &hold[j]))) goto fail;
  }
  const T eps = (T)PyFloat_AsDouble(args[6]);
  if (PyErr_Occurred()) goto fail;
  const T *x = PyArray_DATA(a[0]);
  const T *w = a[1] ? PyArray_DATA(a[1]) : NULL, *b = a[2] ? PyArray_DATA(a[2]) : NULL;
  T *out = PyArray_DATA(a[3]), *mean = PyArray_DATA(a[4]), *invstd = PyArray_DATA(a[5]);
  Py_BEGIN_ALLOW_THREADS
  for (npy_intp r = 0; r < rows; r++) {
    const T *xr = x + r * D;
    T *o = out + r * D;
    double s = 0;
    _Pragma("omp simd reduction(+:s)")
    for (npy_intp i = 0; i < D; i++) s += xr[i];
    const T m = (T)(s / D);
    double v = 0;
    _Pragma("omp simd reduction(+:v)")
    for (npy_intp i = 0; i < D; i++) { const T c = xr[i] - m; v += (double)c * c; }
    const T inv = (T)1 / SQRT((T)(v / D) + eps);
    _Pragma("omp simd")
    for (npy_intp i = 0; i < D; i++) {
      T y = (xr[i] - m) * inv;
      if (w) y = y * w[i];
      if (b) y = y + b[i];
      o[i] = y;
    }
    mean[r] = m;
    invstd[r] = inv;
  }
  Py_END_ALLOW_THREADS
  for (int j = 0; j < 6; j++) Py_XDECREF(hold[j]);
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember layer_norm kernel: arguments");
fail:
  for (int j = 0; j < 6; j++) Py_XDECREF(hold[j]);
  return NULL;
}

static PyObject *layer_norm_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (g, x, weight or None, mean, invstd, gx or None, gw or None, gb or None); gw and gb
     hold zeros: the rows' contributions are added in order */
  PyArrayObject *a[8] = {0}; PyObject *hold[8] = {0};
  if (nargs != 8 || !PyArray_Check(args[1])) goto bad;
  const npy_intp n = PyArray_SIZE((PyArrayObject *)args[1]), rows = n / D;
  if (n % D) goto bad;
  const npy_intp size[8] = {n, n, D, rows, rows, n, D, D};
  for (int j = 0; j < 8; j++) {
    if (args[j] == Py_None && (j == 2 || j >= 5)) continue;
    if (j >= 5 && !(PyArray_Check(args[j])
                    && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)args[j]))) goto bad;
    if (!(a[j] = _arg(args[j], NPY_T, size[j], &hold[j]))) goto fail;
  }
  const T *g = PyArray_DATA(a[0]), *x = PyArray_DATA(a[1]);
  const T *w = a[2] ? PyArray_DATA(a[2]) : NULL;
  const T *mean = PyArray_DATA(a[3]), *invstd = PyArray_DATA(a[4]);
  T *gx = a[5] ? PyArray_DATA(a[5]) : NULL;
  T *gw = a[6] ? PyArray_DATA(a[6]) : NULL, *gb = a[7] ? PyArray_DATA(a[7]) : NULL;
  Py_BEGIN_ALLOW_THREADS
  for (npy_intp r = 0; r < rows; r++) {
    const T *gr = g + r * D, *xr = x + r * D;
    const T m = mean[r], inv = invstd[r];
    if (gx) {
      double sa = 0, sb = 0;
      _Pragma("omp simd reduction(+:sa, sb)")
      for (npy_intp i = 0; i < D; i++) {
        const T xh = (xr[i] - m) * inv, gxh = w ? gr[i] * w[i] : gr[i];
        sa += gxh;
        sb += (double)gxh * xh;
      }
      const T A = (T)(sa / D), B = (T)(sb / D);
      T *o = gx + r * D;
      _Pragma("omp simd")
      for (npy_intp i = 0; i < D; i++) {
        const T xh = (xr[i] - m) * inv, gxh = w ? gr[i] * w[i] : gr[i];
        o[i] = inv * (gxh - A - xh * B);
      }
    }
    if (gw) {
      _Pragma("omp simd")
      for (npy_intp i = 0; i < D; i++) gw[i] += gr[i] * ((xr[i] - m) * inv);
    }
    if (gb) {
      _Pragma("omp simd")
      for (npy_intp i = 0; i < D; i++) gb[i] += gr[i];
    }
  }
  Py_END_ALLOW_THREADS
  for (int j = 0; j < 8; j++) Py_XDECREF(hold[j]);
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember layer_norm kernel: arguments");
fail:
  for (int j = 0; j < 8; j++) Py_XDECREF(hold[j]);
  return NULL;
}
