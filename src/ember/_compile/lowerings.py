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

The C is in the package's ``c/`` folder, a file per op (``max_pool2d.c``, ``layer_norm.c``,
``embedding.c``, ``softmax.c``, ``attention.c``; for eager calls only ``lstm.c``, an LSTM
step's pointwise work, ``conv2d.c``, a convolution's im2col and col2im, ``batch_norm.c`` and
``activation.c``, GELU, ReLU and sigmoid forward and backward; for compiled graphs only
``batch_norm_relu.c``) with ``lowering.h``'s helpers; a module is built from one for a dtype
and sizes, the ``#define`` lines ``_module`` puts before it.

Eager ops reach these loops through ``eager(name)`` (``_aten._core.eager_kernel``): each is
checked against the op's NumPy code on its first call per shape and used only if it agrees.

``lowered(cls, part, default)`` is what codegen asks: the function to call for an op's
``"forward"``, its combined ``"backward"`` (called with the node, see ``LoweredNode``) or
the derivative rule of input ``part``.
"""

from __future__ import annotations

import math

import numpy as np

from .._aten import elementwise as _ew
from .._aten import nn_activation as _act
from .._aten import nn_attention as _attention
from .._aten import nn_conv as _conv
from .._aten import nn_embedding as _embedding
from .._aten import nn_norm as _norm
from .._aten import nn_rnn as _rnn
from .._aten import reduction as _reduction
from . import kernels

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

_MODULES: dict = {}


def _defines(dtype: np.dtype, sizes: dict) -> dict:
    """The macros a lowering's C file is compiled with (``c/lowering.h`` lists them): its
    dtype's and its ``sizes``."""
    single = dtype == np.float32
    fn = "f" if single else ""
    return {
        "T": "float" if single else "double",
        "NPY_T": "NPY_FLOAT" if single else "NPY_DOUBLE",
        "EXP_LOW": "-87.0f" if single else "-708.0",
        "T_BITS": "npy_int32" if single else "npy_int64",
        # expanding to the function's name in the text, which build() reads to declare
        # libmvec's vector variants of the functions called
        **{f"{name}(x)": f"{name.lower()}{fn}(x)" for name in ("EXP", "LOG", "SQRT")},
        **sizes,
    }


def _module(file: str, names: tuple, dtype: np.dtype, **sizes):
    """The module of the C file ``c/file`` (defining the functions ``names``) for ``dtype``
    and ``sizes`` (constants: with them known gcc unrolls and vectorises for them), built by
    gcc once per distinct set (then found in the disk cache). Its source is the file's
    macros (``_defines``), then the file included."""
    key = (file, names, dtype, tuple(sizes.items()))
    module = _MODULES.get(key)
    if module is None:
        head = "".join(f"#define {k} {v}\n" for k, v in _defines(dtype, sizes).items())
        source = head + f'#include "{file}"\n'
        # build() names the functions by the dict's keys; the first source defines them all.
        module = kernels.build({names[0]: source, **dict.fromkeys(names[1:], "")})
        _MODULES[key] = module
    return module


def _pool_module(dtype: np.dtype, geo, planes: int, parallel: bool = True):
    """The module for one geometry and dtype, built by gcc once (then from the disk cache).
    ``planes`` (N*C) only decides whether the loops are split over the cores (never for
    eager calls, ``parallel=False``: see ``_conv_module``)."""
    parallel = parallel and planes * math.prod(geo.in_size) >= kernels.PARALLEL_MIN
    (h, w), (oh, ow), (kh, kw) = geo.in_size, geo.out, geo.k
    sizes = dict(H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, PARALLEL=int(parallel))
    return _module("max_pool2d.c", ("max_pool2d", "max_pool2d_grad"), dtype, **sizes)


def _pool_covered(x: np.ndarray, geo) -> bool:
    """2-d windows that tile a float input (the cases the C loop is written for)."""
    return (
        x.ndim in (3, 4)
        and len(geo.k) == 2
        and x.dtype in _FLOATS
        and _conv._tiles(geo)
        and geo.k[0] * geo.k[1] < 32768  # taps fit the int16 arg, as in the NumPy code
    )


def max_pool2d(x: np.ndarray, geo, parallel: bool = True):
    """``MaxPool2DWithIndicesBackward0``'s forward: the window maxima and their taps."""
    if not _pool_covered(x, geo):
        return _conv._max_pool_array(x, geo)
    batch = x if x.ndim == 4 else x[None]
    batch = np.ascontiguousarray(batch)
    top = np.empty(batch.shape[:2] + geo.out, batch.dtype)
    arg = np.empty(top.shape, np.int16)
    module = _pool_module(batch.dtype, geo, top.shape[0] * top.shape[1], parallel)
    module.max_pool2d(batch, top, arg)
    return (top, arg) if x.ndim == 4 else (top[0], arg[0])


def max_pool2d_grad(g: np.ndarray, arg: np.ndarray, geo, parallel: bool = True) -> np.ndarray:
    """The gradient of ``max_pool2d`` at ``self``: each window's gradient at its maximum."""
    if not _pool_covered(g, geo) or arg.dtype != np.int16:
        return _conv._max_pool_vjp_array(g, arg, geo)
    gb, ab = (g, arg) if g.ndim == 4 else (g[None], arg[None])
    gb, ab = np.ascontiguousarray(gb), np.ascontiguousarray(ab)
    gx = (np.empty if _conv._tiles_exactly(geo) else np.zeros)(gb.shape[:2] + geo.in_size, gb.dtype)
    module = _pool_module(gb.dtype, geo, gb.shape[0] * gb.shape[1], parallel)
    module.max_pool2d_grad(gb, ab, gx)
    return gx if g.ndim == 4 else gx[0]


# -- im2col / col2im of 2-d convolutions (eager only) ----------------------------------------

# The loops: c/conv2d.c.


def _conv_module(dtype: np.dtype, geo):
    """The im2col/col2im module for one geometry and dtype, built by gcc once (then from the
    disk cache). Its loops run on one core: eager code calls them between BLAS calls, whose
    threads and OpenMP's, each spinning while the other works, would share two cores (a W10
    step took 1.5-2x longer with BatchNorm's loops split over the cores)."""
    (h, w), (oh, ow), (kh, kw) = geo.in_size, geo.out, geo.k
    (sh, sw), (dh, dw), (ph, pw) = geo.s, geo.d, geo.pads
    sizes = dict(H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, SH=sh, SW=sw, DH=dh, DW=dw, PH=ph, PW=pw)
    return _module("conv2d.c", ("im2col", "col2im"), dtype, **sizes, PARALLEL=0)


def _im2col_covered(x: np.ndarray, geo) -> bool:
    """A non-empty float batch of 2-d planes of the geometry's input size."""
    return (
        x.ndim == 4
        and len(geo.k) == 2
        and x.dtype in _FLOATS
        and x.shape[2:] == geo.in_size
        and x.size > 0
        and min(geo.out) > 0
    )


def im2col(x: np.ndarray, geo) -> np.ndarray:
    """``nn_conv._unfold_numpy``: the windows of a batch (N, C, H, W) as columns
    (N, C * kh * kw, L)."""
    if not _im2col_covered(x, geo):
        return _conv._unfold_numpy(x, geo)
    n, c = x.shape[:2]
    cols = np.empty((n, c * math.prod(geo.k), math.prod(geo.out)), x.dtype)
    _conv_module(x.dtype, geo).im2col(np.ascontiguousarray(x), cols)
    return cols


def _col2im_covered(cols: np.ndarray, geo) -> bool:
    """Non-empty float columns (N, C * kh * kw, L) of a 2-d geometry."""
    return (
        cols.ndim == 3
        and len(geo.k) == 2
        and cols.dtype in _FLOATS
        and cols.size > 0
        and cols.shape[1] % math.prod(geo.k) == 0
        and cols.shape[2] == math.prod(geo.out)
        and min(geo.in_size) > 0
    )


def col2im(cols: np.ndarray, geo) -> np.ndarray:
    """``nn_conv._fold_numpy``: columns (N, C * kh * kw, L) summed back into (N, C, H, W)."""
    if not _col2im_covered(cols, geo):
        return _conv._fold_numpy(cols, geo)
    n, c = cols.shape[0], cols.shape[1] // math.prod(geo.k)
    gx = np.empty((n, c) + geo.in_size, cols.dtype)
    _conv_module(cols.dtype, geo).col2im(np.ascontiguousarray(cols), gx)
    return gx


# -- batch norm in training (eager only) ----------------------------------------------------

# The loops: c/batch_norm.c.

_BN_NAMES = ("batch_norm_stats", "batch_norm_normalize", "batch_norm_sums", "batch_norm_grad")


def _bn_module(x: np.ndarray):
    """The module for ``x``'s dtype, channels and plane size, built by gcc once (then from
    the disk cache); its loops run on one core, as ``_conv_module``'s."""
    n, c = x.shape[:2]
    sizes = dict(C=c, L=x.size // (n * c), PARALLEL=0)
    return _module("batch_norm.c", _BN_NAMES, x.dtype, **sizes)


def _bn_covered(x: np.ndarray, *arrays) -> bool:
    """A non-empty float (N, C, ...) array, the other arrays (or None) of its dtype."""
    return (
        x.ndim >= 2
        and x.dtype in _FLOATS
        and x.size > 0
        and all(a is None or (isinstance(a, np.ndarray) and a.dtype == x.dtype) for a in arrays)
    )


def batch_norm_train(x: np.ndarray, w, b, eps: float):
    """``nn_norm._batch_norm_arrays`` in training: the normalised ``x``, the batch's mean,
    1 / std and biased variance."""
    c = x.shape[1]
    module = _bn_module(x)
    x = np.ascontiguousarray(x)
    mean, var = np.empty(c, x.dtype), np.empty(c, x.dtype)
    module.batch_norm_stats(x, mean, var)
    invstd = 1.0 / np.sqrt(var + eps)
    alpha = invstd if w is None else invstd * w
    beta = np.zeros(c, x.dtype) if b is None else b
    out = np.empty(x.shape, x.dtype)
    module.batch_norm_normalize(x, mean, alpha, beta, out)
    return out, mean, invstd, var


def batch_norm_train_grad(g: np.ndarray, x: np.ndarray, w, mean: np.ndarray, invstd):
    """``nn_norm._batch_norm_train_grad``: the input's gradient, and the channel sums of
    ``g`` and of ``g * (x - mean)``."""
    c = x.shape[1]
    m = x.size // c
    module = _bn_module(x)
    g, x = np.ascontiguousarray(g), np.ascontiguousarray(x)
    sum_g, dot = np.empty(c, x.dtype), np.empty(c, x.dtype)
    module.batch_norm_sums(g, x, mean, sum_g, dot)
    scale = invstd if w is None else invstd * w
    k = scale * invstd * invstd * dot / m
    shift = scale * sum_g / m
    gx = np.empty(x.shape, x.dtype)
    module.batch_norm_grad(g, x, mean, scale, k, shift, gx)
    return gx, sum_g, dot


# -- layer norm -----------------------------------------------------------------------------

# The loops: c/layer_norm.c.


def _same_float_dtype(*arrays) -> bool:
    dts = {a.dtype for a in arrays if a is not None}
    return len(dts) == 1 and next(iter(dts)) in _FLOATS


def layer_norm(x, w, b, nshape, eps):
    """``NativeLayerNormBackward0``'s forward: the normalised rows, their means, 1 / std."""
    if not _same_float_dtype(x, w, b) or x.size == 0:
        return _norm._layer_norm_numpy(x, w, b, nshape, eps)
    d = math.prod(nshape)
    stats = x.shape[: x.ndim - len(nshape)] + (1,) * len(nshape)
    out = np.empty(x.shape, x.dtype)
    mean, invstd = np.empty(stats, x.dtype), np.empty(stats, x.dtype)
    module = _module("layer_norm.c", ("layer_norm", "layer_norm_grad"), x.dtype, D=d)
    module.layer_norm(x, w, b, out, mean, invstd, float(eps))
    return out, mean, invstd


def layer_norm_backward(node, g, input, weight, bias, mean, invstd):
    """The gradients of ``layer_norm`` (the node's params and which inputs need one)."""
    nshape, _eps = node._params
    needs = tuple(f[0] is not None for f in node.next_functions)
    return layer_norm_grad(g, input, weight, bias, mean, invstd, nshape, needs)


def layer_norm_grad(g, input, weight, bias, mean, invstd, nshape, needs):
    """``nn_norm._layer_norm_vjp``: the gradients of the inputs that ``needs`` one."""
    if (
        not _same_float_dtype(g, input, weight, mean, invstd)
        or g.shape != input.shape
        or input.size == 0
    ):
        return _norm._layer_norm_vjp_numpy(g, input, weight, bias, mean, invstd, nshape, needs)
    d = math.prod(nshape)
    gx = np.empty(input.shape, input.dtype) if needs[0] else None
    gw = np.zeros(nshape, input.dtype) if weight is not None and needs[1] else None
    gb = np.zeros(nshape, input.dtype) if bias is not None and needs[2] else None
    module = _module("layer_norm.c", ("layer_norm", "layer_norm_grad"), input.dtype, D=d)
    module.layer_norm_grad(g, input, weight, mean, invstd, gx, gw, gb)
    return gx, gw, gb


# -- embedding ---------------------------------------------------------------------------

# The loop: c/embedding.c.


def embedding_grad(g, indices, num_weights, padding_idx, scale):
    """``EmbeddingBackward0``'s gradient at the weight: each row's gradients summed."""
    if g.dtype not in _FLOATS or scale is not None:
        return _embedding._embedding_vjp_numpy(g, indices, num_weights, padding_idx, scale)
    idx = np.ascontiguousarray(_embedding._embedding_indices(indices).reshape(-1))
    d = g.shape[-1]
    gw = np.zeros((num_weights, d), dtype=g.dtype)
    module = _module("embedding.c", ("embedding_grad",), g.dtype)
    module.embedding_grad(np.ascontiguousarray(g.reshape(-1, d)), idx, gw)
    if padding_idx >= 0:
        gw[padding_idx] = 0
    return gw


# -- softmax, log_softmax over the last dim ----------------------------------------------

# The row loops: c/softmax.c.
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
    module = _module("softmax.c", _SOFTMAX_NAMES, a.dtype, D=a.shape[-1])
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
softmax_grad = _row_op("softmax_grad", _reduction._softmax_vjp_numpy)
log_softmax = _row_op("log_softmax", _reduction._log_softmax_forward)
log_softmax_grad = _row_op("log_softmax_grad", _reduction._log_softmax_vjp_numpy)

# The NumPy code of each row loop, for eager calls (``eager``): (x, dim) or (g, result, dim).
_ROWS_NUMPY = {
    "softmax": _reduction._softmax_numpy,
    "log_softmax": _reduction._log_softmax_numpy,
    "softmax_grad": _reduction._softmax_vjp_numpy,
    "log_softmax_grad": _reduction._log_softmax_vjp_numpy,
}


# -- attention (the flash op: softmax(q k^T * scale + bias) v) --------------------------------

# The forward per head: c/attention.c. The backward stays NumPy's.


def _attention_module(dtype, q, v):
    """One thread: split over the cores, the loops' threads and OpenBLAS's (spinning after
    the matmuls around attention) took turns, and a tiny GPT's step took 2.2x longer."""
    (length, e), (s, ev) = q.shape[-2:], v.shape[-2:]
    return _module("attention.c", ("attention", "attention_grad"), dtype, L=length, S=s, E=e, EV=ev)


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
        return _attention._sdpa_numpy(query, key, value, attn_bias, scale, groups)
    out = np.empty(query.shape[:-1] + value.shape[-1:], query.dtype)
    probs = np.empty(query.shape[:-1] + key.shape[-2:-1], query.dtype)
    c = np.ascontiguousarray
    bias = None if attn_bias is None else c(attn_bias)
    module = _attention_module(query.dtype, query, value)
    module.attention(c(query), c(key), c(value), bias, float(scale), out, probs)
    return out, probs


def _attention_grad_covered(g, query, key, value, probs, scale, groups, needs) -> bool:
    """``attention``'s cases, with the gradient and the saved probabilities of its shapes."""
    return (
        _arrays_only(g, query, key, value, probs)
        and _same_float_dtype(g, query, key, value, probs)
        and _attention_covered(query, key, value, None, groups)
        and g.shape == query.shape[:-1] + value.shape[-1:]
        and probs.shape == query.shape[:-1] + key.shape[-2:-1]
    )


def attention_grad(g, query, key, value, probs, scale, groups, needs_input_grad):
    """``nn_attention._sdpa_vjp``, one pass over each head's data, for the cases
    ``_attention_grad_covered`` accepts (eager calls test it first)."""
    c = np.ascontiguousarray
    grads = [np.empty(a.shape, a.dtype) for a in (query, key, value)]  # (C order, as the loop's)
    module = _attention_module(query.dtype, query, value)
    module.attention_grad(c(query), c(key), c(value), c(probs), c(g), float(scale), *grads)
    return tuple(gr if need else None for gr, need in zip(grads, needs_input_grad))


# -- pointwise activations (eager only) ------------------------------------------------------

# The loops: c/activation.c.
_ACTIVATION_NAMES = (
    "gelu", "gelu_grad", "relu", "relu_grad", "sigmoid", "sigmoid_grad", "tanh_grad"
)  # fmt: skip


def _pointwise_covered(*arrays) -> bool:
    """Non-empty C-contiguous float arrays of one dtype and shape (a broadcast gradient, a
    view or a Sym of the compiler's tracer is left to the NumPy code)."""
    a = arrays[0]
    if type(a) is not np.ndarray or a.dtype not in _FLOATS or a.size == 0:
        return False
    return all(
        type(x) is np.ndarray and x.flags.c_contiguous and x.shape == a.shape and x.dtype == a.dtype
        for x in arrays
    )


def _activation_module(dtype: np.dtype):
    return _module("activation.c", _ACTIVATION_NAMES, dtype)


def gelu(x: np.ndarray):
    """``nn_activation._gelu_array(x, "none")``: x * Phi(x), and Phi(x)."""
    cdf, out = np.empty_like(x), np.empty_like(x)
    _activation_module(x.dtype).gelu(x, cdf, out)
    return out, cdf


def pointwise(name: str, *arrays) -> np.ndarray:
    """The C loop ``name`` of c/activation.c with one result, of the first array's shape."""
    out = np.empty_like(arrays[0])
    getattr(_activation_module(out.dtype), name)(*arrays, out)
    return out


# name -> (the NumPy code, whether the C loop gives its bits: no multiply-adds to contract)
_POINTWISE = {
    "relu": (_ew.relu_numpy, True),
    "relu_grad": (_ew.relu_grad_numpy, True),
    "sigmoid": (_ew.sigmoid_numpy, False),
    "sigmoid_grad": (_ew.sigmoid_grad_numpy, False),
    "tanh_grad": (_ew.tanh_grad_numpy, False),
    "gelu_grad": (_act._gelu_grad_numpy, False),
}


def _arrays_only(*arrays) -> bool:
    """Only NumPy arrays (or None): not a Sym of the compiler's tracer."""
    return all(a is None or type(a) is np.ndarray for a in arrays)


def _pointwise_key(*arrays) -> tuple:
    """Elementwise loops are one code for every shape: checked once per dtype, for small
    arrays (the vector loop's remainder alone) and larger ones."""
    return (arrays[0].dtype, arrays[0].size >= 64)


# -- for eager ops ---------------------------------------------------------------------------


# (kernel name, dtype, shapes, geometry) -> whether the C loop gave the NumPy code's result
# on the first call with that key (later calls trust it, or keep to NumPy).
def _same_results(mine, reference, exact: bool) -> bool:
    """Whether C results equal the NumPy code's: bit for bit (``exact``), else within a few
    float roundings (loops that accumulate in another order, in double)."""
    if not isinstance(mine, tuple):
        mine, reference = (mine,), (reference,)
    if len(mine) != len(reference):
        return False
    pairs = [(x, y) for x, y in zip(mine, reference) if x is not None or y is not None]
    if any(x is None or y is None for x, y in pairs):  # (gradients not asked for are None)
        return False
    if exact:
        return all(np.array_equal(x, y, equal_nan=x.dtype.kind == "f") for x, y in pairs)
    return all(
        x.shape == y.shape and x.dtype == y.dtype and np.allclose(x, y, tol, tol, equal_nan=True)
        for x, y in pairs
        for tol in (64 * np.finfo(y.dtype).eps,)
    )


def _geometry_key(*args) -> tuple:
    """The arrays' shapes, the dtype and the window geometry (pooling, im2col calls)."""
    geo = args[-1]
    return (*(a.shape for a in args[:-1]), args[0].dtype, geo.k, geo.s, geo.pads)


def _checked(name: str, c_fn, numpy_fn, covered, key=_geometry_key, exact: bool = True):
    """``c_fn`` for eager calls where ``covered(*args)``: on the first call per ``key(*args)``
    both run and the C loops' results are used (then always) if they are the NumPy code's
    (``_same_results``), else the NumPy code's. The key is what the C module is built for (a
    row length, a plane size; not the batch size or a sequence length, which vary from call
    to call in many programs and would have both run each time). The first call returns the
    C results too when they agree, so every call gives the same numbers. Returns None where
    the caller runs the NumPy code."""
    checked: dict = {}

    def run(*args):
        if not covered(*args):
            return None
        k = key(*args)
        ok = checked.get(k)
        if ok is None:
            reference = numpy_fn(*args)
            try:
                mine = c_fn(*args)
            except (TypeError, kernels.KernelCacheError):
                checked[k] = False
                return reference
            checked[k] = _same_results(mine, reference, exact)
            return mine if checked[k] else reference
        return c_fn(*args) if ok else None

    return run


def _eager_kernels() -> dict:
    """name -> the arguments of ``_checked`` after the name: (the C version, the NumPy code,
    ``covered``, the check's key (``_geometry_key`` where None), whether bit for bit)."""
    return {
        "max_pool2d": (
            lambda x, geo: max_pool2d(x, geo, False),
            _conv._max_pool_array,
            _pool_covered,
            None,
            True,
        ),
        "max_pool2d_grad": (
            lambda g, arg, geo: max_pool2d_grad(g, arg, geo, False),
            _conv._max_pool_vjp_array,
            lambda g, arg, geo: _pool_covered(g, geo) and arg.dtype == np.int16,
            None,
            True,
        ),
        "im2col": (im2col, _conv._unfold_numpy, _im2col_covered, None, True),
        "col2im": (col2im, _conv._fold_numpy, _col2im_covered, None, True),
        "batch_norm_train": (
            batch_norm_train,
            lambda x, w, b, eps: _norm._batch_norm_numpy(x, w, b, True, eps, None, None),
            lambda x, w, b, eps: _bn_covered(x, w, b),
            lambda x, w, b, eps: (x.shape[1:], x.dtype, w is None, b is None),
            False,
        ),
        "batch_norm_train_grad": (
            batch_norm_train_grad,
            _norm._batch_norm_train_grad,
            lambda g, x, w, mean, invstd: g.shape == x.shape and _bn_covered(x, g, w, mean, invstd),
            lambda g, x, w, mean, invstd: (x.shape[1:], x.dtype, w is None),
            False,
        ),
        "layer_norm": (
            layer_norm,
            _norm._layer_norm_numpy,
            lambda x, w, b, nshape, eps: (
                _arrays_only(x, w, b) and _same_float_dtype(x, w, b) and x.size > 0
            ),
            lambda x, w, b, nshape, eps: (x.dtype, w is None, b is None, nshape),
            False,
        ),
        "layer_norm_grad": (
            layer_norm_grad,
            _norm._layer_norm_vjp_numpy,
            lambda g, x, w, b, mean, invstd, nshape, needs: (
                _arrays_only(g, x, w, b, mean, invstd)
                and _same_float_dtype(g, x, w, mean, invstd)
                and g.shape == x.shape
                and x.size > 0
            ),
            lambda g, x, w, b, mean, invstd, nshape, needs: (
                x.dtype, w is None, b is None, nshape, tuple(needs)
            ),
            False,
        ),
        "embedding_grad": (
            embedding_grad,
            _embedding._embedding_vjp_numpy,
            lambda g, indices, n, padding_idx, scale: (
                _arrays_only(g, indices) and g.dtype in _FLOATS and scale is None
            ),
            lambda g, indices, n, padding_idx, scale: (
                g.shape[-1], g.dtype, indices.dtype, n, padding_idx
            ),
            True,
        ),
        **{
            name: (
                lambda *args, name=name: _rows_call(name, args[-1], *args[:-1]),
                numpy_fn,
                lambda *args: (
                    args[-1] is not None  # (a 0-d tensor's softmax: no dim)
                    and _arrays_only(*args[:-1])
                    and _last_dim(args[-1], *args[:-1])
                ),
                lambda *args: (args[0].shape[-1], args[0].dtype),
                False,
            )
            for name, numpy_fn in _ROWS_NUMPY.items()
        },
        "attention": (
            attention,
            _attention._sdpa_numpy,
            lambda q, k, v, bias, scale, groups: (
                _arrays_only(q, k, v, bias) and _attention_covered(q, k, v, bias, groups)
            ),
            lambda q, k, v, bias, scale, groups: (
                q.shape[-2:], k.shape[-2:], v.shape[-1], q.dtype, bias is None
            ),
            False,
        ),
        "attention_grad": (
            attention_grad,
            _attention._sdpa_vjp_numpy,
            _attention_grad_covered,
            lambda g, q, k, v, probs, scale, groups, needs: (
                q.shape[-2:], k.shape[-2:], v.shape[-1], q.dtype
            ),
            False,
        ),
        "gelu": (gelu, _act._gelu_numpy, _pointwise_covered, _pointwise_key, False),
        **{
            name: (
                lambda *arrays, name=name: pointwise(name, *arrays),
                numpy_fn,
                _pointwise_covered,
                _pointwise_key,
                exact,
            )
            for name, (numpy_fn, exact) in _POINTWISE.items()
        },
    }  # fmt: skip


def eager(name: str):
    """The C kernel eager ops may call for ``name`` (``_aten._core.eager_kernel``), or None
    when kernels cannot be built here (no C compiler, WebAssembly, EMBER_COMPILE_KERNELS=0)."""
    if kernels.available():
        return None
    if name in _LSTM_CELLS:
        return _lstm_checked(name)
    entry = _eager_kernels().get(name)
    if entry is None:
        return None
    c_fn, numpy_fn, covered, key, exact = entry
    return _checked(name, c_fn, numpy_fn, covered, key or _geometry_key, exact)


# -- an LSTM step's pointwise work (eager only) ---------------------------------------------

# The loops: c/lstm.c. Name -> (the NumPy code, the arguments it writes, the rows' width in
# hidden sizes of the first argument). Both write their results into the op's buffers.
_LSTM_CELLS = {
    "lstm_cell": (_rnn._lstm_cell_array, (0, 3, 4, 5), 4),
    "lstm_cell_grad": (_rnn._lstm_cell_grad_array, (5, 6), 1),
}


def _lstm_checked(name: str):
    """The C loop ``name`` of c/lstm.c for eager calls with float arrays: it writes the
    step's results and returns True, or returns None (the caller runs the NumPy code). On
    the first call per dtype and shape both run, the C loop on copies of the buffers it
    writes; its results are used (then always) if they are the NumPy code's within a few
    float roundings (not bit for bit: gcc fuses multiply-adds), else the NumPy code's."""
    numpy_fn, written, width = _LSTM_CELLS[name]
    fns: dict = {}  # (dtype, shape of the first argument, whether an optional one is None)

    def run(*args):
        first = args[0]
        key = (first.dtype, first.shape, args[1] is None)
        fn = fns.get(key, False)
        if fn is False:
            fn = fns[key] = _lstm_check(name, numpy_fn, written, width, args)
            return True
        if fn is None:
            return None
        try:
            fn(*args)
        except TypeError:  # a buffer it does not take (checked before any is written)
            return None
        return True

    return run


def _lstm_check(name, numpy_fn, written, width, args):
    """Run the C loop on copies of the buffers it writes and ``numpy_fn`` on ``args``: the
    C function (its results copied into ``args``) when it built and agreed, else None."""
    first = args[0]
    fn = None
    hid = first.shape[1] // width if first.ndim == 2 else 0
    if first.dtype in _FLOATS and hid > 0 and first.shape[1] == hid * width:
        try:
            module = _module("lstm.c", tuple(_LSTM_CELLS), first.dtype, H=hid)
            fn = getattr(module, name)
            mine = [a.copy() if j in written else a for j, a in enumerate(args)]
            fn(*mine)
        except (TypeError, kernels.KernelCacheError):
            fn = None
    numpy_fn(*args)
    if fn is None:
        return None
    tol = 64 * np.finfo(first.dtype).eps
    if not all(np.allclose(mine[j], args[j], tol, tol, equal_nan=True) for j in written):
        return None
    for j in written:  # the C loop's results, as on every later call (backward is reentrant)
        np.copyto(args[j], mine[j])
    return fn


class LoweredNode:
    """Stands for an op's node in generated code: its backward is a C-backed function
    ``fn(node, grad, *saved)`` (the node keeps the params and the inputs' edges)."""

    __slots__ = ("node", "fn")

    def __init__(self, node, fn) -> None:
        self.node, self.fn = node, fn

    def backward(self, grad, *saved):
        return self.fn(self.node, grad, *saved)


# -- BatchNorm in training, then a ReLU (compiled graphs) ---------------------------------

# The loops: c/batch_norm_relu.c (with batch_norm.c's).
_BN_RELU_NAMES = _BN_NAMES + (
    "batch_norm_relu_normalize",
    "batch_norm_relu_sums",
    "batch_norm_relu_grad",
)


def _bn_relu_module(x: np.ndarray, parallel: bool):
    """The module for ``x``'s dtype, channels and plane size (``_bn_module``'s sizes)."""
    n, c = x.shape[:2]
    parallel = parallel and x.size >= kernels.PARALLEL_MIN
    sizes = dict(C=c, L=x.size // (n * c), PARALLEL=int(parallel))
    return _module("batch_norm_relu.c", _BN_RELU_NAMES, x.dtype, **sizes)


def batch_norm_relu_train(relu, x, w, b, eps: float, parallel: bool = True):
    """``relu(nn_norm._batch_norm_arrays(x, ...)[0])`` and the batch's mean, 1 / std and
    biased variance, in training: the ReLU (``relu``, the op's declared forward, where the
    loops do not apply) applied as the normalisation writes."""
    if not _bn_covered(x, w, b):
        out, mean, invstd, var = _norm._batch_norm_arrays(x, w, b, True, eps, None, None)
        return relu(out), mean, invstd, var
    c = x.shape[1]
    module = _bn_relu_module(x, parallel)
    x = np.ascontiguousarray(x)
    mean, var = np.empty(c, x.dtype), np.empty(c, x.dtype)
    module.batch_norm_stats(x, mean, var)
    invstd = 1.0 / np.sqrt(var + eps)  # (as batch_norm_train: the same statistics)
    alpha = invstd if w is None else invstd * w
    beta = np.zeros(c, x.dtype) if b is None else b
    out = np.empty(x.shape, x.dtype)
    module.batch_norm_relu_normalize(x, mean, alpha, beta, out)
    return out, mean, invstd, var


def batch_norm_relu_grad(relu_rule, needs, gy, y, x, w, b, mean, invstd, parallel=True):
    """The gradients at BatchNorm's (training) input, weight and bias of a ReLU's result
    ``y`` whose gradient is ``gy`` (``needs``: which of the three are wanted): the ReLU's
    rule (``relu_rule(gy, y)`` where the loops do not apply) taken as the loops read."""
    if not (gy.shape == x.shape == y.shape and _bn_covered(x, gy, y, w, mean, invstd)):
        g = relu_rule(gy, y)
        return _norm._batch_norm_vjp(g, x, w, b, True, mean, invstd, needs)
    c = x.shape[1]
    m = x.size // c
    module = _bn_relu_module(x, parallel)
    gy, y, x = np.ascontiguousarray(gy), np.ascontiguousarray(y), np.ascontiguousarray(x)
    sum_g, dot = np.empty(c, x.dtype), np.empty(c, x.dtype)
    module.batch_norm_relu_sums(gy, y, x, mean, sum_g, dot)
    gx = None
    if needs[0]:  # (as batch_norm_train_grad)
        scale = invstd if w is None else invstd * w
        k = scale * invstd * invstd * dot / m
        shift = scale * sum_g / m
        gx = np.empty(x.shape, x.dtype)
        module.batch_norm_relu_grad(gy, y, x, mean, scale, k, shift, gx)
    gw = dot * invstd if w is not None and needs[1] else None  # (as nn_norm._batch_norm_vjp)
    gb = sum_g if b is not None and needs[2] else None
    return gx, gw, gb


# (the op's declaration, "forward", "backward" (a combined rule) or an input's name) -> the
# function codegen calls instead.
_LOWERED = {
    (_conv.MaxPool2DWithIndicesBackward0, "forward"): max_pool2d,
    (_conv.MaxPool2DWithIndicesBackward0, "self"): lambda g, arg, geo: max_pool2d_grad(g, arg, geo),
    (_norm.NativeLayerNormBackward0, "forward"): layer_norm,
    (_norm.NativeLayerNormBackward0, "backward"): layer_norm_backward,
    (_embedding.EmbeddingBackward0, "weight"): embedding_grad,
    (_reduction.SoftmaxBackward0, "forward"): softmax,
    (_reduction.SoftmaxBackward0, "self"): softmax_grad,
    (_reduction.LogSoftmaxBackward0, "forward"): log_softmax,
    (_reduction.LogSoftmaxBackward0, "self"): log_softmax_grad,
    (_attention.ScaledDotProductFlashAttentionForCpuBackward0, "forward"): attention,
}


# The same for graphs whose loops run on one core (``codegen._serial``: graphs that call
# BLAS, whose threads would share the cores with OpenMP's).
_LOWERED_SERIAL = {
    **_LOWERED,
    (_conv.MaxPool2DWithIndicesBackward0, "forward"): lambda x, geo: max_pool2d(x, geo, False),
    (_conv.MaxPool2DWithIndicesBackward0, "self"): lambda g, arg, geo: max_pool2d_grad(
        g, arg, geo, False
    ),
}


def lowered(cls, part: str, default, parallel: bool = True):
    """The C-backed function for ``cls``'s ``part`` when there is one, else ``default``;
    its loops split over the cores only when ``parallel``."""
    fn = (_LOWERED if parallel else _LOWERED_SERIAL).get((cls, part))
    return default if fn is None or kernels.available() else fn
