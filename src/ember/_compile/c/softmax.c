/* softmax and log_softmax over the last dim, and their gradients (lowerings.softmax...).
   Per row of D: the maximum (NaN wins, as NumPy's max), exps, their sum and the result in
   SIMD passes over the row, where NumPy makes ~6 passes with temporaries. Scores below
   EXP_LOW (masked -inf ones included) give 0 without reaching exp(): libmvec's vector exp
   takes a slow scalar path for a vector holding any of them.

   Sizes: D, the elements of a row. */
#include "prelude.h"
#include "lowering.h"

/* (x, out) or (g, result, out): C-contiguous arrays of NPY_T, sizes a multiple of D */
static int _rows(PyObject *const *args, Py_ssize_t nargs, int n, T **d, npy_intp *rows) {
  if (nargs != n) goto bad;
  for (int j = 0; j < n; j++) {
    if (!PyArray_Check(args[j])) goto bad;
    PyArrayObject *a = (PyArrayObject *)args[j];
    if (!PyArray_IS_C_CONTIGUOUS(a) || PyArray_TYPE(a) != NPY_T) goto bad;
    if (PyArray_SIZE(a) != PyArray_SIZE((PyArrayObject *)args[0])) goto bad;
    d[j] = PyArray_DATA(a);
  }
  *rows = PyArray_SIZE((PyArrayObject *)args[0]) / D;
  if (*rows * D != PyArray_SIZE((PyArrayObject *)args[0])) goto bad;
  return 1;
bad:
  PyErr_SetString(PyExc_TypeError, "ember softmax kernel: arguments");
  return 0;
}

/* A module function of (a, out) or (a, b, out): ``body`` runs per row of D with ``a``,
   ``b`` and ``o`` pointing at it. */
#define ROW_FUNCTION(name, n, ...)                                                          \
static PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {           \
  T *d[3]; npy_intp rows;                                                                   \
  if (!_rows(args, nargs, n, d, &rows)) return NULL;                                        \
  Py_BEGIN_ALLOW_THREADS                                                                    \
  for (npy_intp r = 0; r < rows; r++) {                                                     \
    const T *a = d[0] + r * D, *b = d[n - 2] + r * D;                                       \
    T *o = d[n - 1] + r * D;                                                                \
    (void)b;                                                                                \
    __VA_ARGS__                                                                             \
  }                                                                                         \
  Py_END_ALLOW_THREADS                                                                      \
  Py_RETURN_NONE;                                                                           \
}

ROW_FUNCTION(softmax, 2,  /* a: x */
  const T m = row_max(a, D);
  T s = 0;
  _Pragma("omp simd reduction(+:s)")
  for (npy_intp i = 0; i < D; i++) { o[i] = exp_or_zero(a[i] - m); s += o[i]; }
  _Pragma("omp simd")
  for (npy_intp i = 0; i < D; i++) o[i] = o[i] / s;
)

ROW_FUNCTION(softmax_grad, 3,  /* a: g, b: y */
  T s = 0;
  _Pragma("omp simd reduction(+:s)")
  for (npy_intp i = 0; i < D; i++) s += a[i] * b[i];
  _Pragma("omp simd")
  for (npy_intp i = 0; i < D; i++) o[i] = b[i] * (a[i] - s);
)

ROW_FUNCTION(log_softmax, 2,  /* a: x */
  const T m = row_max(a, D);
  T s = 0;
  _Pragma("omp simd reduction(+:s)")
  for (npy_intp i = 0; i < D; i++) s += exp_or_zero(a[i] - m);
  const T ls = LOG(s);
  _Pragma("omp simd")
  for (npy_intp i = 0; i < D; i++) o[i] = (a[i] - m) - ls;
)

ROW_FUNCTION(log_softmax_grad, 3,  /* a: g, b: y */
  T s = 0;
  _Pragma("omp simd reduction(+:s)")
  for (npy_intp i = 0; i < D; i++) s += a[i];
  _Pragma("omp simd")
  for (npy_intp i = 0; i < D; i++) o[i] = a[i] - exp_or_zero(b[i]) * s;
)
