/* Pointwise activation loops for eager ops (lowerings.eager("gelu"), "gelu_grad", "relu",
   "relu_grad", "sigmoid", "sigmoid_grad", "tanh_grad"). NumPy evaluates exact GELU in ~6 passes with a temporary each, and SciPy's
   erf is a scalar loop (about 9 ns an element: GELU forward and backward were a fifth of
   W8's tiny-GPT step); ReLU's gradient ``g * (result > 0)`` is two passes and a mask, sigmoid four passes.
   Here each is one pass, on one core (between BLAS calls, as the other eager loops).

   No sizes: the element count is the arrays'. */
#include "prelude.h"
#include "lowering.h"

/* erf for T (both functions named, so kernels.build declares their vector variants) */
#define ERF(x) (sizeof(T) == sizeof(float) ? (T)erff((float)(x)) : (T)erf((double)(x)))

/* Every argument a C-contiguous array of T with the first one's element count; the last
   `outputs` writeable (they are made by the caller, so nothing is converted). */
static int pointwise_args(PyObject *const *args, Py_ssize_t nargs, int count, int outputs,
                          T **p, npy_intp *n) {
  if (nargs != count) return 0;
  for (int j = 0; j < count; j++) {
    if (!PyArray_Check(args[j])) return 0;
    PyArrayObject *a = (PyArrayObject *)args[j];
    if (j == 0) *n = PyArray_SIZE(a);
    if (!PyArray_IS_C_CONTIGUOUS(a) || PyArray_TYPE(a) != NPY_T || PyArray_SIZE(a) != *n
        || (j >= count - outputs && !PyArray_ISWRITEABLE(a))) return 0;
    p[j] = PyArray_DATA(a);
  }
  return 1;
}

static PyObject *gelu(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (x; cdf, out: written): cdf = Phi(x) = (1 + erf(x / sqrt 2)) / 2, out = x * cdf */
  T *p[3];
  npy_intp n;
  if (!pointwise_args(args, nargs, 3, 2, p, &n)) goto bad;
  const T *restrict x = p[0];
  T *restrict cdf = p[1], *restrict out = p[2];
  Py_BEGIN_ALLOW_THREADS
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) {
    const T c = (T)0.5 * ((T)1 + ERF(x[i] * (T)M_SQRT1_2));
    cdf[i] = c;
    out[i] = x[i] * c;
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember gelu kernel: arguments");
  return NULL;
}

static PyObject *gelu_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (g, x, cdf; out: written): out = g * (cdf + x * exp(-x^2 / 2) / sqrt(2 pi)) */
  T *p[4];
  npy_intp n;
  if (!pointwise_args(args, nargs, 4, 1, p, &n)) goto bad;
  const T *restrict g = p[0], *restrict x = p[1], *restrict cdf = p[2];
  T *restrict out = p[3];
  const T inv_sqrt_2pi = (T)0.39894228040143267794;
  Py_BEGIN_ALLOW_THREADS
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) {
    const T v = x[i];
    out[i] = g[i] * (cdf[i] + v * EXP((T)-0.5 * v * v) * inv_sqrt_2pi);
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember gelu_grad kernel: arguments");
  return NULL;
}

static PyObject *relu(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (x; out: written): out = max(x, 0) with NumPy's bits (NaN kept, -0 to +0) */
  T *p[2];
  npy_intp n;
  if (!pointwise_args(args, nargs, 2, 1, p, &n)) goto bad;
  const T *restrict x = p[0];
  T *restrict out = p[1];
  Py_BEGIN_ALLOW_THREADS
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) out[i] = (x[i] > 0 || x[i] != x[i]) ? x[i] : (T)0;
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember relu kernel: arguments");
  return NULL;
}

static PyObject *relu_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (g, result; out: written): out = g * (result > 0), the same bits as NumPy's product
     (g * 1 is g, g * 0 is a zero of g's sign, NaN or infinite g times 0 is NaN) */
  T *p[3];
  npy_intp n;
  if (!pointwise_args(args, nargs, 3, 1, p, &n)) goto bad;
  const T *restrict g = p[0], *restrict r = p[1];
  T *restrict out = p[2];
  Py_BEGIN_ALLOW_THREADS
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) out[i] = g[i] * (T)(r[i] > 0);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember relu_grad kernel: arguments");
  return NULL;
}

static PyObject *sigmoid(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (x; out: written): out = 1 / (1 + exp(-x)); exp overflows to inf only where the result
     is below the smallest normal number, and 1 / inf is 0 there (as torch's) */
  T *p[2];
  npy_intp n;
  if (!pointwise_args(args, nargs, 2, 1, p, &n)) goto bad;
  const T *restrict x = p[0];
  T *restrict out = p[1];
  Py_BEGIN_ALLOW_THREADS
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) out[i] = (T)1 / ((T)1 + EXP(-x[i]));
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember sigmoid kernel: arguments");
  return NULL;
}

static PyObject *sigmoid_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (g, result; out: written): out = g * (1 - result) * result */
  T *p[3];
  npy_intp n;
  if (!pointwise_args(args, nargs, 3, 1, p, &n)) goto bad;
  const T *restrict g = p[0], *restrict r = p[1];
  T *restrict out = p[2];
  Py_BEGIN_ALLOW_THREADS
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) out[i] = ((T)1 - r[i]) * r[i] * g[i];
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember sigmoid_grad kernel: arguments");
  return NULL;
}

static PyObject *tanh_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (g, result; out: written): out = g * (1 - result^2) */
  T *p[3];
  npy_intp n;
  if (!pointwise_args(args, nargs, 3, 1, p, &n)) goto bad;
  const T *restrict g = p[0], *restrict r = p[1];
  T *restrict out = p[2];
  Py_BEGIN_ALLOW_THREADS
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) out[i] = ((T)1 - r[i] * r[i]) * g[i];
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember tanh_grad kernel: arguments");
  return NULL;
}
