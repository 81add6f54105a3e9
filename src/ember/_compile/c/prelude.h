/* The head of every kernel module: kernels.build() puts it first, then the declarations of
   the vector variants of libm's functions the module calls, then the module's functions
   (generated ones, or a lowering's C file). A C file of this folder includes it, to
   compile on its own; in a module it is there once. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>

/* An argument as a C-contiguous array of the dtype and size the code was generated for
   (anything else is an error: the caller then runs the ops eagerly). Marked unused: some
   modules (max pooling's, softmax's) do not call it, and -Wall would warn. */
static __attribute__((unused)) PyArrayObject *_arg(PyObject *x, int type, npy_intp size,
                                                    PyObject **hold) {
  PyArrayObject *a;
  if (PyArray_Check(x) && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)x)) {
    a = (PyArrayObject *)x;
  } else {
    *hold = PyArray_FromAny(x, NULL, 0, 0, NPY_ARRAY_C_CONTIGUOUS, NULL);
    if (!*hold) return NULL;
    a = (PyArrayObject *)*hold;
  }
  if (PyArray_TYPE(a) != type || PyArray_SIZE(a) != size) {
    PyErr_SetString(PyExc_TypeError, "ember kernel: an argument changed dtype or size");
    return NULL;
  }
  return a;
}
