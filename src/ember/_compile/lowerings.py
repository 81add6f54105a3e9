"""Hand-written C versions of ops whose NumPy code cannot be fused into elementwise loops.

The fused kernels (``kernels.py``) come from tracing an op's own NumPy code; window maxima
cannot be traced that way: NumPy computes them tap by tap over strided views, whose short
inner loops cost ~3 ns per element (max pooling was 40% of the W7 conv step). Here such an
op gets a C loop over its windows, used by the compiler only when kernels are on, for the
cases it covers (other cases call the op's own code). Results equal the NumPy code's: the
compiler checks each graph's kernels against it before using them.

``lowered(cls, part, default)`` is what codegen asks: the function to call for an op's
``"forward"`` or for the derivative rule of input ``part``.
"""

from __future__ import annotations

import math

import numpy as np

from ..nn import _conv
from . import kernels

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# Sizes are constants of the C source (one small module per pooling geometry and dtype, as
# the fused kernels are per graph): with them known gcc unrolls the taps and vectorises
# across windows; read at run time, a 2x2 pooling of 64x16x8x8 took 10x longer (a branch
# per tap, mispredicted on real data).
_POOL_C = r"""
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
    for (npy_intp oy = 0; oy < OH; oy++) {
      for (npy_intp ox = 0; ox < OW; ox++) {
        const T gv = gp[oy * OW + ox];
        const short at = ap[oy * OW + ox];
        T *w = xp + oy * KH * W + ox * KW;
        for (int u = 0; u < KH; u++)
          for (int v = 0; v < KW; v++)
            w[u * W + v] = (at == u * KW + v) ? gv : (T)0;
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

static PyObject *max_pool2d(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  PyArrayObject *a[3]; npy_intp planes;
  const int types[3] = {NPY_T, NPY_T, NPY_INT16};
  const npy_intp per_plane[3] = {H * W, OH * OW, OH * OW};
  if (!_pool_args(args, nargs, a, types, per_plane, &planes)) return NULL;
  Py_BEGIN_ALLOW_THREADS
  pool_fwd(PyArray_DATA(a[0]), PyArray_DATA(a[1]), PyArray_DATA(a[2]), planes);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

static PyObject *max_pool2d_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  PyArrayObject *a[3]; npy_intp planes;
  const int types[3] = {NPY_T, NPY_INT16, NPY_T};
  const npy_intp per_plane[3] = {OH * OW, OH * OW, H * W};
  if (!_pool_args(args, nargs, a, types, per_plane, &planes)) return NULL;
  Py_BEGIN_ALLOW_THREADS
  pool_grad(PyArray_DATA(a[0]), PyArray_DATA(a[1]), PyArray_DATA(a[2]), planes);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}
"""

_MODULES: dict = {}


def _pool_module(dtype: np.dtype, geo, planes: int):
    """The module for one geometry and dtype, built by gcc once (then from the disk cache).
    ``planes`` (N*C) only decides whether the loops are split over the cores."""
    parallel = planes * math.prod(geo.in_size) >= kernels.PARALLEL_MIN
    key = (dtype, geo.in_size, geo.out, geo.k, parallel)
    module = _MODULES.get(key)
    if module is None:
        ctype, npy = ("float", "NPY_FLOAT") if dtype == np.float32 else ("double", "NPY_DOUBLE")
        (h, w), (oh, ow), (kh, kw) = geo.in_size, geo.out, geo.k
        defines = (
            f"#define T {ctype}\n#define NPY_T {npy}\n#define H {h}\n#define W {w}\n"
            f"#define OH {oh}\n#define OW {ow}\n#define KH {kh}\n#define KW {kw}\n"
            f"#define PARALLEL {int(parallel)}\n"
        )
        # build() names the functions by the dict's keys; the one source defines both.
        module = kernels.build({"max_pool2d": defines + _POOL_C, "max_pool2d_grad": ""})
        _MODULES[key] = module
    return module


def _pool_covered(x: np.ndarray, geo) -> bool:
    """2-d windows that tile a float input (the cases the C loop is written for)."""
    return (
        x.ndim in (3, 4)
        and len(geo.k) == 2
        and x.dtype in _FLOATS
        and _conv._tiles(geo)
        and geo.k[0] * geo.k[1] < 32768  # taps fit the int16 arg, as in the NumPy code
    )


def max_pool2d(x: np.ndarray, geo):
    """``MaxPool2DWithIndicesBackward0``'s forward: the window maxima and their taps."""
    if not _pool_covered(x, geo):
        return _conv._max_pool_array(x, geo)
    batch = x if x.ndim == 4 else x[None]
    batch = np.ascontiguousarray(batch)
    top = np.empty(batch.shape[:2] + geo.out, batch.dtype)
    arg = np.empty(top.shape, np.int16)
    _pool_module(batch.dtype, geo, top.shape[0] * top.shape[1]).max_pool2d(batch, top, arg)
    return (top, arg) if x.ndim == 4 else (top[0], arg[0])


def max_pool2d_grad(g: np.ndarray, arg: np.ndarray, geo) -> np.ndarray:
    """The gradient of ``max_pool2d`` at ``self``: each window's gradient at its maximum."""
    if not _pool_covered(g, geo) or arg.dtype != np.int16:
        return _conv._max_pool_vjp_array(g, arg, geo)
    gb, ab = (g, arg) if g.ndim == 4 else (g[None], arg[None])
    gb, ab = np.ascontiguousarray(gb), np.ascontiguousarray(ab)
    exact = all(o * k == n for o, k, n in zip(geo.out, geo.k, geo.in_size))
    gx = (np.empty if exact else np.zeros)(gb.shape[:2] + geo.in_size, gb.dtype)
    _pool_module(gb.dtype, geo, gb.shape[0] * gb.shape[1]).max_pool2d_grad(gb, ab, gx)
    return gx if g.ndim == 4 else gx[0]


# (op name, "forward" or an input's name) -> the function codegen calls instead.
_LOWERED = {
    ("MaxPool2DWithIndicesBackward0", "forward"): max_pool2d,
    ("MaxPool2DWithIndicesBackward0", "self"): lambda g, arg, geo: max_pool2d_grad(g, arg, geo),
}


def lowered(cls, part: str, default):
    """The C-backed function for ``cls``'s ``part`` when there is one, else ``default``."""
    fn = _LOWERED.get((cls.__name__, part))
    return default if fn is None or kernels.available() else fn
