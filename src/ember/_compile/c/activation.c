/* Pointwise activation loops for eager ops (lowerings.eager("gelu"), "gelu_grad", "relu",
   "relu_grad", "sigmoid", "sigmoid_grad", "tanh_grad"). NumPy evaluates exact GELU in ~6
   passes with a temporary each, and SciPy's erf is a scalar loop (about 9 ns an element:
   GELU forward and backward were a fifth of W8's tiny-GPT step); ReLU's gradient
   ``g * (result > 0)`` is two passes and a mask, sigmoid four passes. Here each is one
   pass, on one core (between BLAS calls, as the other eager loops).

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

/* A module function of `count` arrays (the last name##_outputs of them written) running
   its body (the variadic part: commas and all) without the GIL; the body's loops over
   i < n read A(j), the j-th array's element i. */
#define A(j) (((const T *restrict)p[j])[i])
#define POINTWISE_FUNCTION(name, count, ...)                                                \
static PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {            \
  T *p[count];                                                                              \
  npy_intp n;                                                                               \
  if (!pointwise_args(args, nargs, count, name##_outputs, p, &n)) {                         \
    PyErr_SetString(PyExc_TypeError, "ember " #name " kernel: arguments");                  \
    return NULL;                                                                            \
  }                                                                                         \
  Py_BEGIN_ALLOW_THREADS                                                                    \
  __VA_ARGS__                                                                               \
  Py_END_ALLOW_THREADS                                                                      \
  Py_RETURN_NONE;                                                                           \
}
/* ... with one output, the last array: out[i] = the expression (the variadic part) */
#define ONE_OUTPUT(name, count, ...)                                                        \
enum { name##_outputs = 1 };                                                                \
POINTWISE_FUNCTION(name, count, {                                                           \
  T *restrict out = p[count - 1];                                                           \
  _Pragma("omp simd")                                                                       \
  for (npy_intp i = 0; i < n; i++) out[i] = (__VA_ARGS__);                                  \
})

/* (x; cdf, out: written): cdf = Phi(x) = (1 + erf(x / sqrt 2)) / 2, out = x * cdf */
enum { gelu_outputs = 2 };
POINTWISE_FUNCTION(gelu, 3, {
  T *restrict cdf = p[1], *restrict out = p[2];
  _Pragma("omp simd")
  for (npy_intp i = 0; i < n; i++) {
    const T c = (T)0.5 * ((T)1 + ERF(A(0) * (T)M_SQRT1_2));
    cdf[i] = c;
    out[i] = A(0) * c;
  }
})

/* (g, x, cdf; out): g * (cdf + x * exp(-x^2 / 2) / sqrt(2 pi)) */
ONE_OUTPUT(gelu_grad, 4,
           A(0) * (A(2) + A(1) * EXP((T)-0.5 * A(1) * A(1)) * (T)0.39894228040143267794))

/* (x; out): max(x, 0) with NumPy's bits (NaN kept, -0 to +0) */
ONE_OUTPUT(relu, 2, (A(0) > 0 || A(0) != A(0)) ? A(0) : (T)0)

/* (g, result; out): g * (result > 0), the same bits as NumPy's product (g * 1 is g, g * 0
   a zero of g's sign, NaN or infinite g times 0 NaN) */
ONE_OUTPUT(relu_grad, 3, A(0) * (T)(A(1) > 0))

/* (x; out): 1 / (1 + exp(-x)); exp overflows to inf only where the result is below the
   smallest normal number, and 1 / inf is 0 there (as torch's) */
ONE_OUTPUT(sigmoid, 2, (T)1 / ((T)1 + EXP(-A(0))))

/* (g, result; out): g * (1 - result) * result, in NumPy's order */
ONE_OUTPUT(sigmoid_grad, 3, ((T)1 - A(1)) * A(1) * A(0))

/* (g, result; out): g * (1 - result^2) */
ONE_OUTPUT(tanh_grad, 3, ((T)1 - A(1) * A(1)) * A(0))
