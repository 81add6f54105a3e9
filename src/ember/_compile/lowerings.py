"""Hand-written C versions of ops whose NumPy code is slow and cannot be fused into
elementwise loops.

The fused kernels (``kernels.py``) come from tracing an op's own NumPy code; reductions and
windows cannot be traced that way. NumPy computes window maxima tap by tap over strided
views, whose short inner loops cost ~3 ns per element (max pooling was 40% of the W7 conv
step); LayerNorm in ~10 passes with a temporary each; the embedding gradient with
``np.add.at``'s per-element dispatch. Here such an op gets C loops, used by the compiler
only when kernels are on, for the cases they cover (other cases call the op's own code).
Results equal the NumPy code's within rounding: the compiler checks each graph's kernels
against it before using them.

``lowered(cls, part, default)`` is what codegen asks: the function to call for an op's
``"forward"``, its combined ``"backward"`` (called with the node, see ``LoweredNode``) or
the derivative rule of input ``part``.
"""

from __future__ import annotations

import math

import numpy as np

from .._aten import reduction as _reduction
from ..nn import _attention, _conv, _norm
from ..nn import functional as _functional
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
"""

_MODULES: dict = {}

# exp(z), or 0 where z < EXP_LOW (masked -inf scores included), without handing those to
# exp(): libmvec's vector exp takes a scalar path for a whole vector holding one (5-9x
# slower). The argument is cleared with bits: gcc moves a select in the argument past the
# call (exp(c ? 0 : z) became c ? 1 : exp(z), -inf reaching exp again).
_EXP_OR_ZERO = r"""
static inline T exp_or_zero(T z) {
  const int dead = z < EXP_LOW;
  union { T value; T_BITS bits; } arg = {z};
  arg.bits &= (T_BITS)dead - 1;
  const T e = EXP(arg.value);
  return dead ? (T)0 : e;
}

/* The largest of x[0..n), NaN if one is (NumPy's maximum); n a constant where inlined. */
static inline T row_max(const T *x, npy_intp n) {
  T m = -(T)INFINITY;
  int nan = 0;
  #pragma omp simd reduction(max:m) reduction(|:nan)
  for (npy_intp i = 0; i < n; i++) { m = x[i] > m ? x[i] : m; nan |= x[i] != x[i]; }
  return nan ? (T)NAN : m;
}
"""


def _module(source: str, names: tuple, dtype: np.dtype, **sizes):
    """The module of ``source`` (defining the functions ``names``) for ``dtype`` (``T``,
    ``NPY_T``; ``SQRT(``, ``EXP(``, ``LOG(`` become libm's functions) and ``sizes`` as
    constants, built by gcc once per distinct set (then found in the disk cache): with sizes
    known gcc unrolls and vectorises for them."""
    key = (names, dtype, tuple(sizes.items()))
    module = _MODULES.get(key)
    if module is None:
        single = dtype == np.float32
        defines = {
            "T": "float" if single else "double",
            "NPY_T": "NPY_FLOAT" if single else "NPY_DOUBLE",
            # exp() of less underflows to 0 (or to a subnormal below 1e-37, taken as 0)
            "EXP_LOW": "-87.0f" if single else "-708.0",
            "T_BITS": "npy_int32" if single else "npy_int64",  # an integer of T's size
            **sizes,
        }
        head = "".join(f"#define {k} {v}\n" for k, v in defines.items())
        source = _EXP_OR_ZERO + source
        # libm's functions by name, not by macro: build() declares the vector variants of
        # the names it sees.
        for generic in ("SQRT", "EXP", "LOG"):
            source = source.replace(generic + "(", generic.lower() + ("f(" if single else "("))
        # build() names the functions by the dict's keys; the first source defines them all.
        module = kernels.build({names[0]: head + source, **dict.fromkeys(names[1:], "")})
        _MODULES[key] = module
    return module


def _pool_module(dtype: np.dtype, geo, planes: int):
    """The module for one geometry and dtype, built by gcc once (then from the disk cache).
    ``planes`` (N*C) only decides whether the loops are split over the cores."""
    parallel = planes * math.prod(geo.in_size) >= kernels.PARALLEL_MIN
    (h, w), (oh, ow), (kh, kw) = geo.in_size, geo.out, geo.k
    sizes = dict(H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, PARALLEL=int(parallel))
    return _module(_POOL_C, ("max_pool2d", "max_pool2d_grad"), dtype, **sizes)


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
    gx = (np.empty if _conv._tiles_exactly(geo) else np.zeros)(gb.shape[:2] + geo.in_size, gb.dtype)
    _pool_module(gb.dtype, geo, gb.shape[0] * gb.shape[1]).max_pool2d_grad(gb, ab, gx)
    return gx if g.ndim == 4 else gx[0]


# -- layer norm -----------------------------------------------------------------------------

# Two passes over each row for the statistics (accumulated in double, in SIMD lanes: OpenMP's
# reduction allows the reordering), one to write; the
# backward's two row sums likewise. NumPy's code makes ~10 passes with a temporary each: 5
# LayerNorms of a tiny GPT took 3.4 ms a step of 13, these loops about 0.1.
_LAYER_NORM_C = r"""
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
"""


def _same_float_dtype(*arrays) -> bool:
    dts = {a.dtype for a in arrays if a is not None}
    return len(dts) == 1 and next(iter(dts)) in _FLOATS


def layer_norm(x, w, b, nshape, eps):
    """``NativeLayerNormBackward0``'s forward: the normalised rows, their means, 1 / std."""
    if not _same_float_dtype(x, w, b) or x.size == 0:
        return _norm._layer_norm_forward(x, w, b, nshape, eps)
    d = math.prod(nshape)
    stats = x.shape[: x.ndim - len(nshape)] + (1,) * len(nshape)
    out = np.empty(x.shape, x.dtype)
    mean, invstd = np.empty(stats, x.dtype), np.empty(stats, x.dtype)
    module = _module(_LAYER_NORM_C, ("layer_norm", "layer_norm_grad"), x.dtype, D=d)
    module.layer_norm(x, w, b, out, mean, invstd, float(eps))
    return out, mean, invstd


def layer_norm_backward(node, g, input, weight, bias, mean, invstd):
    """The gradients of ``layer_norm`` (the node's params and which inputs need one)."""
    nshape, _eps = node._params
    needs = tuple(f[0] is not None for f in node.next_functions)
    if (
        not _same_float_dtype(g, input, weight, mean, invstd)
        or g.shape != input.shape
        or input.size == 0
    ):
        return _norm._layer_norm_vjp(g, input, weight, bias, mean, invstd, nshape, needs)
    d = math.prod(nshape)
    gx = np.empty(input.shape, input.dtype) if needs[0] else None
    gw = np.zeros(nshape, input.dtype) if weight is not None and needs[1] else None
    gb = np.zeros(nshape, input.dtype) if bias is not None and needs[2] else None
    module = _module(_LAYER_NORM_C, ("layer_norm", "layer_norm_grad"), input.dtype, D=d)
    module.layer_norm_grad(g, input, weight, mean, invstd, gx, gw, gb)
    return gx, gw, gb


# -- embedding ---------------------------------------------------------------------------

# Rows added in order, as np.add.at does (the same sums, bit for bit), without its per-element
# dispatch: a tiny GPT's two embedding gradients took 0.6 ms a step.
_EMBEDDING_C = r"""
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
"""


def embedding_grad(g, indices, num_weights, padding_idx, scale):
    """``EmbeddingBackward0``'s gradient at the weight: each row's gradients summed."""
    if g.dtype not in _FLOATS or scale is not None:
        return _functional._embedding_vjp(g, indices, num_weights, padding_idx, scale)
    idx = np.ascontiguousarray(_functional._embedding_indices(indices).reshape(-1))
    d = g.shape[-1]
    gw = np.zeros((num_weights, d), dtype=g.dtype)
    module = _module(_EMBEDDING_C, ("embedding_grad",), g.dtype)
    module.embedding_grad(np.ascontiguousarray(g.reshape(-1, d)), idx, gw)
    if padding_idx >= 0:
        gw[padding_idx] = 0
    return gw


# -- softmax, log_softmax over the last dim ----------------------------------------------

# Per row of D: the maximum (NaN wins, as NumPy's max), exps, their sum and the result in
# SIMD passes over the row, where NumPy makes ~6 passes with temporaries. Scores below
# EXP_LOW (masked -inf ones included) give 0 without reaching exp(): libmvec's vector exp
# takes a slow scalar path for a vector holding any of them.
_SOFTMAX_C = r"""
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
"""
_SOFTMAX_NAMES = ("softmax", "softmax_grad", "log_softmax", "log_softmax_grad")


def _last_dim(dim: int, *arrays) -> bool:
    """Do the C row loops cover these arrays: one float dtype and shape, ``dim`` last?"""
    a = arrays[0]
    return (
        _same_float_dtype(*arrays)
        and a.ndim >= 1
        and a.size > 0
        and dim % a.ndim == a.ndim - 1
        and all(x.shape == a.shape for x in arrays)
    )


def _rows_call(name: str, dim: int, *arrays):
    a = arrays[0]
    out = np.empty(a.shape, a.dtype)
    module = _module(_SOFTMAX_C, _SOFTMAX_NAMES, a.dtype, D=a.shape[-1])
    getattr(module, name)(*(np.ascontiguousarray(x) for x in arrays), out)
    return out


def _row_op(name: str, numpy_code):
    """The C row loop ``name`` with the op's NumPy code where it does not apply:
    ``(x, dim)`` for a forward, ``(g, result, dim)`` for a gradient."""

    def run(*args):
        *arrays, dim = args
        if not _last_dim(dim, *arrays):
            return numpy_code(*arrays, dim)
        return _rows_call(name, dim, *arrays)

    run.__name__ = run.__qualname__ = name
    return run


softmax = _row_op("softmax", _reduction._softmax_forward)
softmax_grad = _row_op("softmax_grad", _reduction.SoftmaxBackward0._rules["self"][0])
log_softmax = _row_op("log_softmax", _reduction._log_softmax_forward)
log_softmax_grad = _row_op("log_softmax_grad", _reduction.LogSoftmaxBackward0._rules["self"][0])


# -- attention (the flash op: softmax(q k^T * scale + bias) v) --------------------------------

# The forward per head, sizes as constants: the scores, their softmax row by row and the
# output, in one pass over the head's data (in cache). NumPy made ~10 passes over the (heads,
# L, S) scores around batched matmuls of tiny matrices: for a tiny GPT's heads (64 of 32x16)
# 445 µs, these loops 257 µs. The backward stays NumPy's: the same loops for its four
# products took as long as OpenBLAS's batched ones (330 µs).
_ATTENTION_C = r"""

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
"""


def _attention_module(dtype, q, v):
    """One thread: split over the cores, the loops' threads and OpenBLAS's (spinning after
    the matmuls around attention) took turns, and a tiny GPT's step took 2.2x longer."""
    (length, e), (s, ev) = q.shape[-2:], v.shape[-2:]
    return _module(_ATTENTION_C, ("attention",), dtype, L=length, S=s, E=e, EV=ev)


def _attention_covered(query, key, value, attn_bias, groups) -> bool:
    """One float dtype, the same heads in q, k and v, a bias (if any) shared by every head,
    and heads small enough for the loops' stack arrays (larger ones are BLAS's work)."""
    if groups != 1 or not _same_float_dtype(query, key, value, attn_bias):
        return False
    if query.ndim < 2 or query.ndim != key.ndim or key.ndim != value.ndim:
        return False
    (length, e), (s, ev) = query.shape[-2:], value.shape[-2:]
    if query.shape[:-2] != key.shape[:-2] or key.shape[:-2] != value.shape[:-2]:
        return False
    if key.shape[-2:] != (s, e) or query.size == 0 or value.size == 0:
        return False
    if attn_bias is not None and (
        attn_bias.shape[-2:] != (length, s) or attn_bias.size != length * s
    ):
        return False
    return s * max(e, ev, length) <= 8192


def attention(query, key, value, attn_bias, scale, groups):
    """``ScaledDotProductFlashAttentionForCpuBackward0``'s forward: the output and the
    attention probabilities."""
    if not _attention_covered(query, key, value, attn_bias, groups):
        return _attention._sdpa_forward(query, key, value, attn_bias, scale, groups)
    out = np.empty(query.shape[:-1] + value.shape[-1:], query.dtype)
    probs = np.empty(query.shape[:-1] + key.shape[-2:-1], query.dtype)
    c = np.ascontiguousarray
    bias = None if attn_bias is None else c(attn_bias)
    module = _attention_module(query.dtype, query, value)
    module.attention(c(query), c(key), c(value), bias, float(scale), out, probs)
    return out, probs


class LoweredNode:
    """Stands for an op's node in generated code: its backward is a C-backed function
    ``fn(node, grad, *saved)`` (the node keeps the params and the inputs' edges)."""

    __slots__ = ("node", "fn")

    def __init__(self, node, fn) -> None:
        self.node, self.fn = node, fn

    def backward(self, grad, *saved):
        return self.fn(self.node, grad, *saved)


# (op name, "forward", "backward" (a combined rule) or an input's name) -> the function
# codegen calls instead.
_LOWERED = {
    ("MaxPool2DWithIndicesBackward0", "forward"): max_pool2d,
    ("MaxPool2DWithIndicesBackward0", "self"): lambda g, arg, geo: max_pool2d_grad(g, arg, geo),
    ("NativeLayerNormBackward0", "forward"): layer_norm,
    ("NativeLayerNormBackward0", "backward"): layer_norm_backward,
    ("EmbeddingBackward0", "weight"): embedding_grad,
    ("SoftmaxBackward0", "forward"): softmax,
    ("SoftmaxBackward0", "self"): softmax_grad,
    ("LogSoftmaxBackward0", "forward"): log_softmax,
    ("LogSoftmaxBackward0", "self"): log_softmax_grad,
    ("ScaledDotProductFlashAttentionForCpuBackward0", "forward"): attention,
}


def lowered(cls, part: str, default):
    """The C-backed function for ``cls``'s ``part`` when there is one, else ``default``."""
    fn = _LOWERED.get((cls.__name__, part))
    return default if fn is None or kernels.available() else fn
