"""Fused elementwise kernels: runs of elementwise ops compiled to one C loop each.

An op's declared forward and its derivative rules are plain NumPy code. Called on
``Sym`` handles instead of arrays, the same code builds an expression tree (a tracer:
NumPy dispatches its ufuncs to ``__array_ufunc__``), so nothing is written twice: what the
op computes, and how its derivative does, comes from its one declaration. Anything the
tracer does not model (a reduction, a reshape, a branch on values, an integer dtype)
raises ``Untraceable`` and the op stays a NumPy call.

Consecutive traced statements of the same element count become one C function in a
generated CPython extension: one pass over memory instead of one per op, no temporaries
between ops, transcendental functions vectorised by glibc's libmvec, and the loop split
over the cores by OpenMP for large arrays. gcc builds each graph's module once; the
shared object is cached on disk by the hash of its source and flags, in a folder that only
this user can write (nothing is loaded from one that others could: ``_cache_dir``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.resources
import importlib.util
import logging
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile

import numpy as np

__all__ = [
    "Sym", "Untraceable", "trace", "leaf", "available", "Group", "build", "KernelCacheError",
]  # fmt: skip


class Untraceable(Exception):
    """The traced code did something a fused kernel does not model."""


# -- the expression tree ------------------------------------------------------------------

_F64, _F32, _BOOL = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.bool_)
_CTYPE = {_F64: "double", _F32: "float", _BOOL: "unsigned char"}
_NPY_TYPE = {_F64: "NPY_DOUBLE", _F32: "NPY_FLOAT", _BOOL: "NPY_BOOL"}
# Values inside a loop: booleans (always 0 or 1) as int, since gcc does not vectorise a loop
# mixing unsigned char temporaries with float ones (ReLU's derivative ran 5x slower).
_VALUE_CTYPE = {**_CTYPE, _BOOL: "int"}


class _Node:
    """An immutable expression: a leaf (an array the kernel reads), or ``tmpl`` applied to
    ``args`` (nodes or numbers), computed in ``dtype``. ``size`` is its element count."""

    __slots__ = ("tmpl", "args", "dtype", "shape", "size", "name")

    def __init__(self, tmpl, args, dtype, shape, name=None) -> None:
        self.tmpl, self.args, self.dtype, self.shape, self.name = tmpl, args, dtype, shape, name
        self.size = math.prod(shape)


class Sym:
    """A handle on an expression, standing for an array in traced NumPy code. In-place
    NumPy (``out=``, ``+=``) rebinds the handle, as the array's contents would change,
    while expressions already built keep the old value; leaves are read-only."""

    __slots__ = ("node", "owned")
    __array_priority__ = 1000

    def __init__(self, node: _Node, owned: bool = True) -> None:
        self.node, self.owned = node, owned

    # array attributes a rule may read (static: known when the code is generated)
    dtype = property(lambda s: s.node.dtype)
    shape = property(lambda s: s.node.shape)
    ndim = property(lambda s: len(s.node.shape))
    size = property(lambda s: s.node.size)
    real = property(lambda s: s)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            raise Untraceable(f"{ufunc.__name__}.{method}")
        out = kwargs.pop("out", None)
        if kwargs.pop("dtype", None) is not None or kwargs:
            raise Untraceable(f"{ufunc.__name__} with {sorted(kwargs)}")
        result = _apply(ufunc.__name__, ufunc, inputs)
        if out is None:
            return Sym(result)
        (target,) = out if isinstance(out, tuple) else (out,)
        return _assign(target, result)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.where and len(args) == 3 and not kwargs:
            return Sym(_where(*args))
        if func is np.broadcast_to and not kwargs:
            return Sym(_broadcast(_node_of(args[0]), tuple(args[1])))
        raise Untraceable(func.__name__)

    def __array__(self, *a, **k):
        raise Untraceable("an array made of a traced value")

    def __bool__(self):
        raise Untraceable("a branch on values")

    def __len__(self):
        raise Untraceable("len()")

    def __getitem__(self, index):
        raise Untraceable("indexing")

    __float__ = __int__ = __index__ = __iter__ = __bool__
    __hash__ = object.__hash__

    def astype(self, dtype, copy=True):
        return Sym(_cast(self.node, np.dtype(dtype)))

    def expand(self, shape):
        return Sym(_broadcast(self.node, tuple(shape)))

    def conj(self):
        return self

    conjugate = conj

    def _inplace(self, ufunc, other):
        return _assign(self, _apply(ufunc.__name__, ufunc, (self, other)))


_COMPARE_NAMES = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"}


def _binary(ufunc, reflected=False):
    if reflected:
        return lambda s, o: Sym(_apply(ufunc.__name__, ufunc, (o, s)))
    return lambda s, o: Sym(_apply(ufunc.__name__, ufunc, (s, o)))


# Python's operators on handles: the ufuncs NumPy's arrays map them to. Arithmetic ones
# also have reflected (``1 - x``) and in-place (``x += 1``) forms; comparisons do not.
_OPERATORS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "pow": np.power, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal,
    "eq": np.equal, "ne": np.not_equal,
}  # fmt: skip
for _name, _uf in _OPERATORS.items():
    setattr(Sym, f"__{_name}__", _binary(_uf))
    if _uf.__name__ not in _COMPARE_NAMES:
        setattr(Sym, f"__r{_name}__", _binary(_uf, reflected=True))
        setattr(Sym, f"__i{_name}__", lambda s, o, _u=_uf: s._inplace(_u, o))
Sym.__neg__ = lambda s: Sym(_apply("negative", np.negative, (s,)))
Sym.__pos__ = lambda s: s
Sym.__abs__ = lambda s: Sym(_apply("absolute", np.absolute, (s,)))
Sym.__invert__ = lambda s: Sym(_apply("invert", np.invert, (s,)))


def leaf(name: str, shape: tuple, dtype) -> Sym:
    """A read-only handle on the array variable ``name`` of the generated code."""
    dtype = np.dtype(dtype)
    if dtype not in _CTYPE:
        raise Untraceable(f"dtype {dtype}")
    return Sym(_Node(None, (), dtype, tuple(shape), name), owned=False)


def _assign(target, node: _Node) -> Sym:
    if not isinstance(target, Sym) or not target.owned:
        raise Untraceable("an in-place write to an input")
    if node.size != target.node.size:
        raise Untraceable("an in-place write that broadcasts")
    target.node = _cast(node, target.node.dtype) if node.dtype != target.node.dtype else node
    return target


# -- operations -------------------------------------------------------------------------

# ufunc name -> C template per operand count; float functions get an "f" suffix for float32.
_UNARY_FN = {
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
    "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "exp": "exp", "exp2": "exp2", "expm1": "expm1",
    "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p", "sqrt": "sqrt",
    "cbrt": "cbrt", "absolute": "fabs", "fabs": "fabs", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "rint": "nearbyint", "erf": "erf", "erfc": "erfc",
}  # fmt: skip
_BINARY_FN = {"arctan2": "atan2", "hypot": "hypot", "copysign": "copysign", "power": "pow"}
_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/"}
_COMPARE = {
    "greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<=",
    "equal": "==", "not_equal": "!=",
}  # fmt: skip
_TEMPLATES = {
    "negative": "(-{0})",
    "positive": "{0}",
    "square": "({0} * {0})",
    "reciprocal": "(1 / {0})",
    # NaN propagates, as NumPy's; of equal values the first is kept
    "maximum": "(({0} >= {1} || {0} != {0}) ? {0} : {1})",
    "minimum": "(({0} <= {1} || {0} != {0}) ? {0} : {1})",
    "sign": "({0} > 0 ? 1 : ({0} < 0 ? -1 : ({0} == 0 ? 0 : {0})))",  # NaN stays NaN
    "isnan": "({0} != {0})",
    "isinf": "(__builtin_isinf({0}) != 0)",
    "isfinite": "(__builtin_isfinite({0}) != 0)",
}
_LOGICAL = {"logical_and": "&&", "logical_or": "||", "bitwise_and": "&&", "bitwise_or": "||"}
# Functions glibc's libmvec has vector versions of (x86-64, glibc 2.35 and newer).
MVEC = {
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "erf", "erfc",
    "atan2", "hypot", "pow",
}  # fmt: skip


def _node_of(x) -> _Node | float | int | bool:
    """The expression of an operand: a Sym's node, or a number (0-d arrays and NumPy
    scalars keep their dtype as a constant node; Python numbers stay weakly typed)."""
    if isinstance(x, Sym):
        return x.node
    if type(x) in (bool, int, float):
        return x
    if isinstance(x, (np.ndarray, np.generic)) and x.size == 1:
        a = np.asarray(x)
        if a.dtype not in _CTYPE:
            raise Untraceable(f"dtype {a.dtype}")
        return _Node("const", (a.reshape(-1)[0].item(),), a.dtype, a.shape)
    raise Untraceable(f"an operand of type {type(x).__name__}")


def _dtype_key(x):
    return x.dtype if isinstance(x, _Node) else type(x)


def _result_shape(nodes) -> tuple:
    shapes = [n.shape for n in nodes if isinstance(n, _Node)]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError as exc:
        raise Untraceable("shapes that do not broadcast") from exc


def _apply(name: str, ufunc, inputs) -> _Node:
    nodes = tuple(_node_of(x) for x in inputs)
    try:
        loop = ufunc.resolve_dtypes(tuple(_dtype_key(n) for n in nodes) + (None,) * ufunc.nout)
    except Exception as exc:
        raise Untraceable(f"{name} on these dtypes") from exc
    ins, out = loop[: ufunc.nin], loop[ufunc.nin]
    if ufunc.nout != 1 or any(d not in _CTYPE for d in loop):
        raise Untraceable(f"{name} in {out}")
    shape = _result_shape(nodes)
    args = tuple(_cast(n, d) for n, d in zip(nodes, ins))
    if name in _INFIX and ins[0] != _BOOL:
        tmpl = "({0} " + _INFIX[name] + " {1})"
    elif name in _COMPARE:
        tmpl = "({0} " + _COMPARE[name] + " {1})"
    elif name in _LOGICAL or (name in ("add", "multiply") and ins[0] == _BOOL):
        tmpl = "({0} " + _LOGICAL.get(name, "||" if name == "add" else "&&") + " {1})"
    elif name in ("logical_not", "invert") and ins[0] == _BOOL:
        tmpl = "(!{0})"
    elif name in _TEMPLATES and ins[0] != _BOOL:
        tmpl = _TEMPLATES[name]
    elif name in _UNARY_FN and ins[0] != _BOOL:
        tmpl = _fn(_UNARY_FN[name], ins[0]) + "({0})"
    elif name in _BINARY_FN and ins[0] != _BOOL:
        tmpl = _fn(_BINARY_FN[name], ins[0]) + "({0}, {1})"
    else:
        raise Untraceable(f"ufunc {name}")
    if name == "power" and isinstance(args[1], _Node) and args[1].tmpl == "const":
        exponent = args[1].args[0]
        if exponent == 2:
            tmpl = "({0} * {0})"
        elif exponent == 0.5:
            tmpl = _fn("sqrt", ins[0]) + "({0})"
    return _Node(tmpl, args, out, shape)


def _fn(name: str, dtype) -> str:
    return name + "f" if dtype == _F32 else name


def _cast(n, dtype) -> _Node:
    """``n`` converted to ``dtype`` (NumPy's cast: numbers round to it)."""
    if isinstance(n, _Node):
        if n.dtype == dtype:
            return n
        if dtype not in _CTYPE:  # (int64: a sum of booleans, which kernels do not compute)
            raise Untraceable(f"dtype {dtype}")
        if dtype == _BOOL:
            return _Node("({0} != 0)", (n,), dtype, n.shape)
        return _Node(f"(({_CTYPE[dtype]}){{0}})", (n,), dtype, n.shape)
    value = np.asarray(n).astype(dtype).item()
    return _Node("const", (value,), dtype, ())


def _where(cond, a, b) -> _Node:
    c, x, y = (_node_of(v) for v in (cond, a, b))
    dtype = np.result_type(*(v.dtype if isinstance(v, _Node) else v for v in (x, y)))
    if dtype not in _CTYPE:
        raise Untraceable(f"where in {dtype}")
    shape = _result_shape((c, x, y))
    args = (_cast(c, _BOOL), _cast(x, dtype), _cast(y, dtype))
    return _Node("({0} ? {1} : {2})", args, dtype, shape)


def _broadcast(n, shape: tuple) -> _Node:
    n = n if isinstance(n, _Node) else _cast(n, np.result_type(n))
    _result_shape((n, _Node("const", (0,), n.dtype, shape)))
    return _Node("{0}", (n,), n.dtype, shape)


def trace(fn, args: tuple):
    """``fn(*args)`` on handles: its result (a Sym, or a tuple of them), or None when the code
    does something a kernel does not model."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except Exception:  # Untraceable, or an attribute a handle does not have
        return None


# -- code generation ----------------------------------------------------------------------


class Group:
    """Statements ``target = expression`` over arrays of one ``shape``, computed in one
    loop; ``outputs`` are the targets the rest of the code reads. An input of another shape
    broadcasts to it (its elements indexed by the loop's position in each dimension)."""

    def __init__(self, shape: tuple) -> None:
        self.shape = shape
        self.size = math.prod(shape)
        self.members: list = []  # (target name, node)
        self.outputs: list = []
        self.inputs: list = []  # leaf names, in argument order

    def source(self, fname: str, parallel: bool = True) -> str:
        """The C function computing the group: CPython's fast-call convention, arrays in,
        a new array (or a tuple of them) out. Its loop is split over the cores when it is
        long (``PARALLEL_MIN``) and ``parallel``."""
        temps: dict = {}  # id(node) -> C name
        defined: dict = {}  # target name -> C name
        body, loads = [], []
        leaves: dict = {}
        self.inputs = []

        def operand(n) -> str:
            """C source of a number, a constant, or a node already emitted."""
            if not isinstance(n, _Node):
                return _c_number(n)
            if n.tmpl == "const":
                return f"(({_VALUE_CTYPE[n.dtype]}){_c_number(n.args[0])})"
            return temps[id(n)]

        def load(n) -> str:
            """A leaf: a group member computed before, or an array input read at ``i``."""
            if n.name in defined:
                return defined[n.name]
            if n.name not in leaves:
                j = len(self.inputs)
                leaves[n.name] = j
                self.inputs.append(n.name)
                loads.append((f"p{j}", n.dtype, n.size))
                idx = _index(n.shape, self.shape)
                body.append(f"    const {_VALUE_CTYPE[n.dtype]} l{j} = p{j}[{idx}];")
            return f"l{leaves[n.name]}"

        def emit(root) -> str:
            """Each node once, operands first (iteratively: expressions can be deep)."""
            stack = [(root, False)]
            while stack:
                n, ready = stack.pop()
                if not isinstance(n, _Node) or n.tmpl == "const" or id(n) in temps:
                    continue
                if n.tmpl is None:
                    temps[id(n)] = load(n)
                elif ready:
                    name = f"t{len(temps)}"
                    parts = [operand(a) for a in n.args]
                    body.append(
                        f"    const {_VALUE_CTYPE[n.dtype]} {name} = {n.tmpl.format(*parts)};"
                    )
                    temps[id(n)] = name
                else:
                    stack.append((n, True))
                    stack.extend((a, False) for a in reversed(n.args))
            return operand(root)

        stores = []
        for target, node in self.members:
            c = emit(node)
            defined[target] = c
        for k, target in enumerate(self.outputs):
            node = dict(self.members)[target]
            stores.append((k, node))
            body.append(f"    o{k}[{'i' if self.size != 1 else '0'}] = {defined[target]};")
        return _function_source(fname, self, loads, stores, body, parallel)


def _index(shape: tuple, loop: tuple) -> str:
    """The C index into a contiguous array of ``shape`` broadcast to the loop's shape, at
    the loop's flat position ``i``."""
    size = math.prod(shape)
    if size == 1 or math.prod(loop) == 1:
        return "0"
    if size == math.prod(loop):  # the same elements in the same order
        return "i"
    shape = (1,) * (len(loop) - len(shape)) + tuple(shape)[max(0, len(shape) - len(loop)) :]
    terms, inner, inner_src = [], 1, 1
    for d in reversed(range(len(loop))):
        if shape[d] != 1:
            pos = f"(i / {inner})" if inner != 1 else "i"
            if d:
                pos = f"({pos} % {loop[d]})"
            terms.append(f"{pos} * {inner_src}" if inner_src != 1 else pos)
            inner_src *= shape[d]
        inner *= loop[d]
    return " + ".join(reversed(terms))


def _c_number(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return f"{v}.0"
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    return repr(float(v))


def _function_source(
    fname: str, g: Group, loads: list, stores: list, body: list, parallel: bool = True
) -> str:
    n_in, n_out = len(loads), len(stores)
    lines = [
        f"static PyObject *{fname}(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{",
        f"  PyArrayObject *a[{max(n_in, 1)}]; PyObject *hold[{max(n_in, 1)}] = {{0}};",
        f"  PyObject *out[{n_out}] = {{0}};",
        f"  if (nargs != {n_in}) {{",
        '    PyErr_SetString(PyExc_TypeError, "ember kernel: arguments"); return NULL;',
        "  }",
    ]
    for j, (_ptr, dtype, size) in enumerate(loads):
        lines.append(
            f"  if (!(a[{j}] = _arg(args[{j}], {_NPY_TYPE[dtype]}, {size}, &hold[{j}]))) goto fail;"
        )
    for k, node in stores:
        dims = ", ".join(str(d) for d in node.shape) or "0"
        lines.append(
            f"  {{ npy_intp d[] = {{{dims}}}; "
            f"out[{k}] = PyArray_EMPTY({len(node.shape)}, d, {_NPY_TYPE[node.dtype]}, 0); "
            f"if (!out[{k}]) goto fail; }}"
        )
    for j, (ptr, dtype, _size) in enumerate(loads):
        lines.append(
            f"  const {_CTYPE[dtype]} *restrict {ptr} = "
            f"(const {_CTYPE[dtype]} *)PyArray_DATA(a[{j}]);"
        )
    for k, node in stores:
        ct = _CTYPE[node.dtype]
        lines.append(f"  {ct} *restrict o{k} = ({ct} *)PyArray_DATA((PyArrayObject *)out[{k}]);")
    n = g.size
    lines.append("  Py_BEGIN_ALLOW_THREADS")
    if n > 1:  # (an OpenMP if() clause would keep the serial loop from vectorising)
        split = parallel and n >= PARALLEL_MIN
        pragma = "parallel for simd schedule(static)" if split else "simd"
        lines.append(f"  #pragma omp {pragma}")
        lines.append(f"  for (npy_intp i = 0; i < {n}; i++) {{")
    else:
        lines.append("  {")
    lines += ["  " + b for b in body]
    lines.append("  }")
    lines.append("  Py_END_ALLOW_THREADS")
    lines.append(f"  for (int j = 0; j < {max(n_in, 1)}; j++) Py_XDECREF(hold[j]);")
    if n_out == 1:
        lines.append("  return out[0];")
    else:
        lines.append(f"  PyObject *t = PyTuple_New({n_out}); if (!t) goto fail;")
        lines.append(f"  for (int k = 0; k < {n_out}; k++) PyTuple_SET_ITEM(t, k, out[k]);")
        lines.append("  return t;")
    lines.append("fail:")
    lines.append(f"  for (int j = 0; j < {max(n_in, 1)}; j++) Py_XDECREF(hold[j]);")
    lines.append(f"  for (int k = 0; k < {n_out}; k++) Py_XDECREF(out[k]);")
    lines.append("  return NULL;")
    lines.append("}")
    return "\n".join(lines)


# Elements from which a loop is split over the cores: below it, waking the second thread
# costs more than it saves, and its spinning competes with the BLAS threads of matmuls.
PARALLEL_MIN = 1 << 18

# -- the fixed C sources --------------------------------------------------------------------

# The C that is not generated (the prelude every module starts with, lowerings.py's loops)
# is in the package's c/ folder: C files that gcc compiles as they are, once the macros they
# name are defined. A module's text includes them as the C preprocessor would (see
# ``_with_includes``), so the cache key, a hash of the text, changes with any of them.
_INCLUDE = re.compile(r'^#include "([^"]+)"[^\n]*\n?', re.MULTILINE)


@functools.cache
def c_file(name: str) -> str:
    """The text of the package's C file ``c/name`` (by importlib.resources: from a wheel,
    an editable install or Pyodide's file system alike), read once."""
    return (importlib.resources.files(__package__) / "c" / name).read_text(encoding="utf-8")


def _with_includes(text: str, seen: set) -> str:
    """``text`` with each ``#include "name"`` line (a file of c/) replaced by that file's
    text, its own includes in turn, the first time; later ones, and those of the names in
    ``seen``, are dropped (a header is in a module once)."""

    def include(match) -> str:
        name = match.group(1)
        if name in seen:
            return ""
        seen.add(name)
        return _with_includes(c_file(name), seen)

    return _INCLUDE.sub(include, text)


def _simd_declarations(source: str) -> str:
    """libmvec's vector variants are declared by glibc only under -ffast-math, which would
    also drop NaN and signed-zero semantics; declaring them here vectorises exactly the
    functions used, with IEEE semantics kept."""
    out = []
    source = _COMMENT.sub(" ", source)
    for name in sorted(MVEC & _mvec_names()):
        for fname, ct in ((name, "double"), (name + "f", "float")):
            if f"{fname}(" in source:
                args = ", ".join([ct] * (2 if name in ("atan2", "hypot", "pow") else 1))
                out.append(f'__attribute__((simd("notinbranch"))) {ct} {fname}({args});')
    return "\n".join(out)


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_MVEC_CACHE: set | None = None


def _mvec_names() -> set:
    """The functions this machine's libmvec has vector versions of (none elsewhere)."""
    global _MVEC_CACHE
    if _MVEC_CACHE is None:
        _MVEC_CACHE = set()
        if sys.platform.startswith("linux") and os.uname().machine == "x86_64":
            import ctypes

            try:
                lib = ctypes.CDLL("libmvec.so.1")
            except OSError:
                lib = None
            if lib is not None:
                for name in MVEC:
                    if hasattr(lib, f"_ZGVdN4v_{name}") or hasattr(lib, f"_ZGVdN4vv_{name}"):
                        _MVEC_CACHE.add(name)
    return _MVEC_CACHE


# -- building -----------------------------------------------------------------------------

_AVAILABLE: str | None = None


class KernelCacheError(RuntimeError):
    """The kernel cache, or a file in it, could have been written by someone else: nothing
    in it is loaded (the NumPy code runs instead)."""


def available() -> str:
    """Why kernels cannot be built here, or "" when they can (gcc, Python's and NumPy's
    headers, a kernel cache only this user can write; ``EMBER_COMPILE_KERNELS=0`` turns
    them off)."""
    global _AVAILABLE
    if os.environ.get("EMBER_COMPILE_KERNELS", "1") == "0":
        return "EMBER_COMPILE_KERNELS=0"
    if _AVAILABLE is None:
        if shutil.which(_cc()) is None:
            _AVAILABLE = f"no C compiler ({_cc()})"
        elif not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
            _AVAILABLE = "no Python headers"
        else:
            _AVAILABLE = ""
    return _AVAILABLE or _cache_dir()[1]


def _cc() -> str:
    return os.environ.get("CC", "gcc")


# -Wall: the fixed sources (the C files of c/: the prelude, lowerings.py's loops) and the
# generated kernels compile without warnings, so one that gcc prints is a bug, logged by build().
_FLAGS = [
    "-O3", "-march=native", "-mprefer-vector-width=512", "-fno-math-errno",
    "-fno-trapping-math", "-fopenmp", "-fPIC", "-shared", "-Wall",
]  # fmt: skip

_log = logging.getLogger(__name__)


def _configured_cache_dir() -> str:
    base = os.environ.get("EMBER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ember"
    )
    return os.path.join(os.path.abspath(base), "kernels")


def _make_private_dirs(path: str) -> None:
    """Create ``path`` and its missing parents, each only its owner may use (0700)."""
    missing = []
    while not os.path.lexists(path):
        missing.append(path)
        path = os.path.dirname(path)
    for folder in reversed(missing):
        try:
            # umask only clears bits: the folder is never more open than 0700 (the chmod
            # gives the owner back what an unusual umask such as 0277 took).
            os.mkdir(folder, 0o700)
            os.chmod(folder, 0o700)
        except FileExistsError:  # made meanwhile by another process: checked as any folder
            pass


def _not_ours_alone(st: os.stat_result) -> str:
    """Why someone else could change the entry ``st`` describes ("" when only we can)."""
    if st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o002:
        return "writable by others"
    if st.st_mode & 0o020:
        return "writable by its group"
    return ""


def _cache_dir() -> tuple[str, str]:
    """``(folder, "")``: the kernel cache, created if missing, that no one but this user
    can change; or ``("", why)`` when the configured one is not such a folder.

    A shared object found there is loaded after its own check (``_unsafe_kernel``), and
    the check cannot be raced: the folder is ours, a real folder (not a symlink) that only
    we can write, and its ancestors can only be replaced by us or root, so no one else can
    put a file, or a symlink, in it between the check and the load."""
    configured = _configured_cache_dir()
    try:
        _make_private_dirs(configured)
        # Ancestors are followed through symlinks (~/.cache may be one) and checked where
        # they lead; the path then loaded from holds no symlink that could be swapped.
        parent = os.path.realpath(os.path.dirname(configured))
        folder = os.path.join(parent, os.path.basename(configured))
        st = os.lstat(folder)
        if stat.S_ISLNK(st.st_mode):
            problem = "it is a symlink"
        elif not stat.S_ISDIR(st.st_mode):
            problem = "it is not a folder"
        elif why := _not_ours_alone(st):
            problem = f"it is {why}"
        else:
            problem = _unsafe_ancestor(parent)
    except OSError as exc:
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        return "", (
            f"kernel cache {configured} is not safe: {problem} (delete it, or set "
            "EMBER_CACHE_DIR, to have a private one made)"
        )
    return folder, ""


def _unsafe_ancestor(path: str) -> str:
    """Why someone other than this user or root could rename an entry of ``path`` or of
    a folder above it ("" when no one can). A sticky folder (such as /tmp) lets others add
    entries but not rename ours."""
    while True:
        st = os.lstat(path)
        if st.st_uid not in (os.getuid(), 0):
            return f"{path} is owned by uid {st.st_uid}"
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return f"{path} is writable by {'others' if st.st_mode & 0o002 else 'its group'}"
        if path == os.path.dirname(path):
            return ""
        path = os.path.dirname(path)


def _unsafe_kernel(path: str) -> str:
    """Why the cached shared object ``path`` must not be loaded ("" when it may be): only
    a regular file that this user owns and no one else can write is."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "a symlink"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    return _not_ours_alone(st)


_CACHE_MAX_MB = 256.0


def _cache_cap() -> int:
    """The kernel cache's size cap in bytes: ``EMBER_CACHE_MAX_MB`` MB (2**20 bytes)."""
    value = os.environ.get("EMBER_CACHE_MAX_MB", "")
    try:
        return int(float(value or _CACHE_MAX_MB) * 2**20)
    except ValueError:
        raise ValueError(f"EMBER_CACHE_MAX_MB={value!r} is not a number of MB") from None


def _evict(folder: str, keep: str, cap: int) -> None:
    """Delete the least recently used kernels of ``folder`` (by modification time, which a
    load from the cache renews) until the rest fit in ``cap`` bytes, never ``keep``."""
    kernels = []
    for entry in os.scandir(folder):
        if entry.name.startswith("_ember_k") and entry.name.endswith(_EXT_SUFFIX):
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:  # deleted meanwhile by another process's eviction
                continue
            if stat.S_ISREG(st.st_mode):
                kernels.append((st.st_mtime_ns, st.st_size, entry.path))
    total = sum(size for _, size, _ in kernels)
    for _, size, path in sorted(kernels):
        if total <= cap:
            break
        if path == keep:
            continue
        try:
            os.unlink(path)  # a process that loaded it keeps its mapping
        except FileNotFoundError:
            pass
        total -= size


_EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
_LOADED: dict = {}


def _machine() -> str:
    """What ``-march=native`` compiled for: the CPU's model and flags (a cache directory
    may be shared between machines)."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags"))][:2]
    except OSError:
        lines = []
    return sys.platform + os.uname().machine + "".join(lines)


def _compile(text: str, modname: str, folder: str, so: str) -> None:
    """gcc builds the module's source ``text`` into ``so``, which appears whole (or not at
    all) and only its owner can write; gcc's warnings are logged."""
    with tempfile.TemporaryDirectory(dir=folder) as tmp:  # 0700, as mkdtemp makes them
        src = os.path.join(tmp, modname + ".c")
        with open(src, "w") as f:
            f.write(text)
        out = os.path.join(tmp, os.path.basename(so))
        cmd = [_cc(), *_FLAGS, f"-I{sysconfig.get_paths()['include']}",
               f"-I{np.get_include()}", src, "-o", out, "-lm"]  # fmt: skip
        if _mvec_names():
            cmd.append("-lmvec")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"the C compiler failed: {proc.stderr.strip()[:500]}")
        if proc.stderr.strip():
            _log.warning("the C compiler warned building %s:\n%s", modname, proc.stderr)
        os.chmod(out, 0o700)  # gcc's mode follows the umask, which may let others write
        os.replace(out, so)


def build(functions: dict):
    """A module with the C functions ``{name: source}``, built by gcc (or found in the
    cache), loaded in this process. Raises ``KernelCacheError`` when the cache, or the
    module's file in it, could have been written by someone else."""
    body = "\n\n".join(functions.values())
    table = "\n".join(
        f'  {{"{n}", (PyCFunction)(void (*)(void)){n}, METH_FASTCALL, NULL}},' for n in functions
    )
    body = _with_includes(body, seen={"prelude.h"})
    text = c_file("prelude.h") + _simd_declarations(body) + "\n" + body
    salt = " ".join(_FLAGS) + np.__version__ + _machine()
    key = hashlib.sha256((text + salt).encode()).hexdigest()[:20]
    modname = f"_ember_k{key}"
    if modname in _LOADED:
        return _LOADED[modname]
    text += (
        f"\n\nstatic PyMethodDef methods[] = {{\n{table}\n  {{NULL, NULL, 0, NULL}}\n}};\n"
        "static struct PyModuleDef def = "
        f'{{PyModuleDef_HEAD_INIT, "{modname}", NULL, -1, methods}};\n'
        f"PyMODINIT_FUNC PyInit_{modname}(void) {{\n"
        "  import_array();\n  return PyModule_Create(&def);\n}\n"
    )
    folder, why = _cache_dir()
    if why:
        raise KernelCacheError(why)
    so = os.path.join(folder, modname + _EXT_SUFFIX)
    if not os.path.lexists(so):
        cap = _cache_cap()
        _compile(text, modname, folder, so)
        _evict(folder, so, cap)
    why = _unsafe_kernel(so)
    if why:
        raise KernelCacheError(f"a cached kernel is {why}, not loaded (delete it): {so}")
    try:
        os.utime(so, follow_symlinks=False)  # recently used: the last to be evicted
    except OSError:  # a cache on a read-only file system stays usable
        pass
    # OpenMP threads that spin after a loop steal the cores from OpenBLAS's threads (and
    # theirs from ours): idle threads sleep instead. Read when libgomp loads, so set first.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    loader = importlib.machinery.ExtensionFileLoader(modname, so)
    spec = importlib.util.spec_from_file_location(modname, so, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    _LOADED[modname] = module
    return module
