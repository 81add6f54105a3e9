/* The embedding's gradient at the weight (lowerings.embedding_grad): rows added in order,
   as np.add.at does (the same sums, bit for bit), without its per-element dispatch: a tiny
   GPT's two embedding gradients took 0.6 ms a step.

   Sizes: none (read from the arrays). */
#include "prelude.h"
#include "lowering.h"

static PyObject *embedding_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (g (n, d), indices int64 (n,), gw (rows, d) holding zeros) */
  if (nargs != 3) goto bad;
  for (int j = 0; j < 3; j++)
    if (!PyArray_Check(args[j]) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)args[j])
        || PyArray_NDIM((PyArrayObject *)args[j]) != (j == 1 ? 1 : 2)
        || PyArray_TYPE((PyArrayObject *)args[j]) != (j == 1 ? NPY_INT64 : NPY_T)) goto bad;
  PyArrayObject *g = (PyArrayObject *)args[0], *ix = (PyArrayObject *)args[1];
  PyArrayObject *gw = (PyArrayObject *)args[2];
  const npy_intp n = PyArray_DIM(ix, 0), d = PyArray_DIM(gw, 1), rows = PyArray_DIM(gw, 0);
  if (PyArray_DIM(g, 0) != n || PyArray_DIM(g, 1) != d) goto bad;
  const T *gd = PyArray_DATA(g);
  const npy_int64 *idx = PyArray_DATA(ix);
  T *out = PyArray_DATA(gw);
  for (npy_intp i = 0; i < n; i++)
    if (idx[i] < 0 || idx[i] >= rows) {
      PyErr_SetString(PyExc_IndexError, "ember embedding kernel: index out of range");
      return NULL;
    }
  Py_BEGIN_ALLOW_THREADS
  for (npy_intp i = 0; i < n; i++) {
    T *row = out + idx[i] * d;
    const T *gr = gd + i * d;
    _Pragma("omp simd")
    for (npy_intp j = 0; j < d; j++) row[j] += gr[j];
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember embedding kernel: arguments");
  return NULL;
}
