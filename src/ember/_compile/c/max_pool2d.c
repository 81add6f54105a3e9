/* Max pooling over 2-d windows that tile the input (lowerings.max_pool2d): the window
   maxima and their taps, and the gradient at them. NumPy computes window maxima tap by tap
   over strided views, whose short inner loops cost ~3 ns per element.

   Sizes (constants: with them known gcc unrolls the taps and vectorises across windows;
   read at run time, a 2x2 pooling of 64x16x8x8 took 10x longer, a branch per tap
   mispredicted on real data): H, W the input plane, OH, OW the output plane, KH, KW the
   window; PARALLEL 1 to split the planes over the cores. */
#include "prelude.h"
#include "lowering.h"

static void pool_fwd(const T *x, T *top, short *arg, npy_intp planes) {
#if PARALLEL
  #pragma omp parallel for schedule(static)
#endif
  for (npy_intp p = 0; p < planes; p++) {
    const T *xp = x + p * H * W;
    T *tp = top + p * OH * OW;
    short *ap = arg + p * OH * OW;
    for (npy_intp oy = 0; oy < OH; oy++) {
      for (npy_intp ox = 0; ox < OW; ox++) {
        const T *w = xp + oy * KH * W + ox * KW;
        T best = w[0];
        short at = 0;
        /* torch's rule: a strictly larger value or a NaN takes over (first max wins) */
        for (int u = 0; u < KH; u++)
          for (int v = (u == 0); v < KW; v++) {
            const T val = w[u * W + v];
            const int take = (val > best) | (val != val);
            best = take ? val : best;
            at = take ? (short)(u * KW + v) : at;
          }
        tp[oy * OW + ox] = best;
        ap[oy * OW + ox] = at;
      }
    }
  }
}

static void pool_grad(const T *g, const short *arg, T *gx, npy_intp planes) {
#if PARALLEL
  #pragma omp parallel for schedule(static)
#endif
  for (npy_intp p = 0; p < planes; p++) {
    const T *gp = g + p * OH * OW;
    const short *ap = arg + p * OH * OW;
    T *xp = gx + p * H * W;
    /* row by row of gx: one contiguous store stream that gcc vectorises (window by window,
       the stores alternated between KH rows and were not: 10x slower) */
    for (npy_intp oy = 0; oy < OH; oy++) {
      for (int u = 0; u < KH; u++) {
        T *row = xp + (oy * KH + u) * W;
        for (npy_intp ox = 0; ox < OW; ox++) {
          const T gv = gp[oy * OW + ox];
          const int at = ap[oy * OW + ox];
          for (int v = 0; v < KW; v++) row[ox * KW + v] = (at == u * KW + v) ? gv : (T)0;
        }
      }
    }
  }
}

/* (x, top, arg) for the forward, (g, arg, gx) for the gradient: C-contiguous arrays of the
   sizes and dtypes the module was generated for (checked here), made by the caller. */
static int _pool_args(PyObject *const *args, Py_ssize_t nargs, PyArrayObject **a,
                      const int *types, const npy_intp *per_plane, npy_intp *planes) {
  if (nargs != 3) goto bad;
  for (int j = 0; j < 3; j++) {
    if (!PyArray_Check(args[j])) goto bad;
    a[j] = (PyArrayObject *)args[j];
    if (!PyArray_IS_C_CONTIGUOUS(a[j]) || PyArray_TYPE(a[j]) != types[j]) goto bad;
  }
  *planes = PyArray_SIZE(a[0]) / per_plane[0];
  for (int j = 0; j < 3; j++)
    if (PyArray_SIZE(a[j]) != *planes * per_plane[j]) goto bad;
  return 1;
bad:
  PyErr_SetString(PyExc_TypeError, "ember max_pool2d kernel: arguments");
  return 0;
}

/* A module function of three arrays of the given dtypes and per-plane sizes, calling
   ``fn`` on their data and the number of planes. */
#define POOL_FUNCTION(name, fn, t0, t1, t2, s0, s1, s2)                                     \
static PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {           \
  PyArrayObject *a[3]; npy_intp planes;                                                     \
  const int types[3] = {t0, t1, t2};                                                        \
  const npy_intp per_plane[3] = {s0, s1, s2};                                               \
  if (!_pool_args(args, nargs, a, types, per_plane, &planes)) return NULL;                  \
  Py_BEGIN_ALLOW_THREADS                                                                    \
  fn(PyArray_DATA(a[0]), PyArray_DATA(a[1]), PyArray_DATA(a[2]), planes);                   \
  Py_END_ALLOW_THREADS                                                                      \
  Py_RETURN_NONE;                                                                           \
}

POOL_FUNCTION(max_pool2d, pool_fwd, NPY_T, NPY_T, NPY_INT16, H * W, OH * OW, OH * OW)
POOL_FUNCTION(max_pool2d_grad, pool_grad, NPY_T, NPY_INT16, NPY_T, OH * OW, OH * OW, H * W)
