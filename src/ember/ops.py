"""``torch.ops``: torch's operator namespaces over ember's ops.

``ember.ops.aten.add`` is an *op packet* (``OpOverloadPacket``) and ``ember.ops.aten.add.Tensor``
one of its *overloads* (``OpOverload``), as in torch. Calling either runs ember's op; like
torch's, the call goes through the ``__torch_function__`` protocol (modes and overriding
arguments see the overload or the packet as ``func``), and a packet picks its overload from
the arguments (the first whose schema accepts them, in torch's order).

The ops are ember's declared ops (``ember.autograd.opdef.DECLARED``: every differentiable
op), a few common ops that are not differentiable (comparisons, factories, in-place
arithmetic), and ``ember.ops.profiler``'s record-function ops, which
``ember.autograd.profiler.record_function`` calls as torch's does. Each overload carries
torch's schema (``_schema``, printed as torch prints it).

Declarations and aten ops: ``aten_op(MulBackward0)`` is ``aten.mul.Tensor``, the op whose
derivative the node is (torch's own pairing: torch names each node after its op, so the
name gives the op; a table gives the overload where it is not ``default`` and the rest);
``declarations(ember.ops.aten.mul.Tensor)`` goes back, and ``implementation(op)`` is the
ember function an overload runs.

Example:
    >>> import ember
    >>> a = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> ember.ops.aten.mul.Tensor(a, a)
    tensor([1., 4.], grad_fn=<MulBackward0>)
    >>> ember.ops.aten.add(a, 1)  # the packet picks aten.add.Scalar
    tensor([2., 3.], grad_fn=<AddBackward0>)
    >>> ember.ops.aten.mul.Tensor.name(), str(ember.ops.aten.mm.default)
    ('aten::mul.Tensor', 'aten.mm.default')
    >>> ember.ops.aten_op(type(a.exp().grad_fn))
    <OpOverload(op='aten.exp', overload='default')>
"""

from __future__ import annotations

import importlib
import math
import re
import sys
import threading
import types

from . import _overrides, _torch
from ._aten import _core as _aten_core
from ._overrides import MODES as _MODES
from ._overrides import PLAIN as _PLAIN
from ._tensor import Tensor
from .autograd import profiler as _profiler_core
from .autograd import views as _views
from .autograd.graph import Node
from .autograd.opdef import DECLARED

__all__ = [
    "Argument",
    "FunctionSchema",
    "OpOverload",
    "OpOverloadPacket",
    "aten",
    "aten_op",
    "declarations",
    "implementation",
    "ops",
    "profiler",
]


# -- schemas ----------------------------------------------------------------------------------


class Argument:
    """One argument (or return) of a schema: ``name``, ``type`` as the schema writes it
    (``"Tensor"``, ``"int[1]?"``, ``"Scalar"``), ``default_value``, ``kwarg_only``.

    Example:
        >>> import ember
        >>> [a.name for a in ember.ops.aten.add.Tensor._schema.arguments]
        ['self', 'other', 'alpha']
    """

    __slots__ = ("name", "type", "default_value", "has_default", "kwarg_only", "alias_info")

    def __init__(self, name, type, default_value, has_default, kwarg_only, alias_info):
        self.name = name
        self.type = type
        self.default_value = default_value
        self.has_default = has_default
        self.kwarg_only = kwarg_only
        # "a!" for Tensor(a!): the annotation, or None (torch's alias_info, as text)
        self.alias_info = alias_info

    def __repr__(self) -> str:
        text = f"{self.type} {self.name}".strip()
        return text


def _split_top(text: str) -> list:
    """``text`` split at the commas outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


# Default values a schema writes that are not Python literals.
_DEFAULTS = {
    "None": None,
    "True": True,
    "False": False,
    "inf": math.inf,
    "-inf": -math.inf,
    "Mean": 1,  # at::Reduction::Mean
    "Sum": 2,
}


def _default_value(text: str):
    if text in _DEFAULTS:
        return _DEFAULTS[text]
    if text.startswith("[") and text.endswith("]"):
        return [_default_value(p) for p in _split_top(text[1:-1])]
    if text[:1] in "\"'" and text[-1:] == text[:1]:
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text  # an enum's name: contiguous_format, ...


_ALIAS = re.compile(r"\(([^)]*)\)")
_SIZED = re.compile(r"\w+\[(\d+)\]")


def _parse_argument(text: str, kwarg_only: bool) -> Argument:
    decl, has_default, default = text, False, None
    if "=" in text:
        decl, default_text = text.split("=", 1)
        has_default, default = True, _default_value(default_text.strip())
    decl = decl.strip()
    type_text, _, name = decl.rpartition(" ")
    if not type_text:  # a return without a name: "Tensor"
        type_text, name = decl, ""
    alias = _ALIAS.search(type_text)
    type_text = _ALIAS.sub("", type_text)
    sized = _SIZED.fullmatch(type_text)
    if sized and isinstance(default, (int, float)):  # int[2] padding=0 is [0, 0]
        default = [default] * int(sized.group(1))
    return Argument(
        name,
        type_text,
        default,
        has_default,
        kwarg_only,
        alias.group(1) if alias else None,
    )


class FunctionSchema:
    """An operator's signature as torch writes it:
    ``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``.

    ``name`` (``"aten::add"``), ``overload_name``, ``arguments`` and ``returns``
    (``Argument``\\ s); ``str()`` is the text.

    Example:
        >>> import ember
        >>> s = ember.ops.aten.max.dim._schema
        >>> s.name, s.overload_name, [r.name for r in s.returns]
        ('aten::max', 'dim', ['values', 'indices'])
    """

    def __init__(self, text: str) -> None:
        self._text = text
        head, rest = text.split("(", 1)
        depth, i = 1, 0
        while depth:
            depth += {"(": 1, ")": -1}.get(rest[i], 0)
            i += 1
        args_text, returns_text = rest[: i - 1], rest[i:].split("->", 1)[1].strip()
        self.name, _, self.overload_name = head.partition(".")
        arguments, kwarg_only = [], False
        for part in _split_top(args_text):
            if part == "*":
                kwarg_only = True
                continue
            arguments.append(_parse_argument(part, kwarg_only))
        self.arguments = arguments
        if returns_text.startswith("(") and returns_text.endswith(")"):
            returns_text = returns_text[1:-1]
        self.returns = [_parse_argument(p, False) for p in _split_top(returns_text)]

    @property
    def is_mutable(self) -> bool:
        """Does the op write one of its arguments (``Tensor(a!)``)?"""
        return any(a.alias_info and "!" in a.alias_info for a in self.arguments)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return self._text


# -- the op objects ---------------------------------------------------------------------------


def _dispatches(args: tuple, kwargs: dict) -> bool:
    """Must a call with these arguments go through ``__torch_function__`` (a mode is on,
    or an argument is not a plain Tensor or number)?"""
    if _MODES[0]:
        return True
    for a in args:
        if type(a) not in _PLAIN:
            return True
    for a in kwargs.values():
        if type(a) not in _PLAIN:
            return True
    return False


class OpOverload:
    """One overload of an operator: ``ember.ops.aten.add.Tensor``. Calling it runs ember's
    op with torch's argument order; modes and ``__torch_function__`` overrides see the call
    with this object as ``func`` (as torch's do).

    Example:
        >>> import ember
        >>> op = ember.ops.aten.sum.dim_IntList
        >>> op(ember.ones(2, 3), [1])
        tensor([3., 3.])
        >>> op.__name__, op.name(), op.overloadpacket
        ('sum.dim_IntList', 'aten::sum.dim_IntList', <OpOverloadPacket(op='aten.sum')>)
    """

    def __init__(self, packet: OpOverloadPacket, overload_name: str, schema: FunctionSchema):
        self._overloadpacket = packet
        self._overloadname = overload_name
        self._schema = schema
        self._opname = packet.__name__
        self.namespace = packet._namespace
        self._name = schema.name if overload_name == "default" else f"{schema.name}.{overload_name}"
        self.__name__ = f"{self._opname}.{overload_name}"
        # qualname and module as ember's fx writes a call's target: ember.ops.aten.add.Tensor
        self.__qualname__ = self.__name__
        self.__module__ = f"ember.ops.{self.namespace}"
        self.__doc__ = str(schema)
        self._impl = None  # the ember callable, found on first call
        self._rename = None  # aten's keyword names -> the implementation's

    # -- what torch's OpOverload has -----------------------------------------------------

    def name(self) -> str:
        """``"aten::add.Tensor"`` (``"aten::mm"`` for a ``default`` overload, as torch)."""
        return self._name

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return self._overloadpacket

    @property
    def op(self):
        """The callable behind the overload (this object: ember has no C++ handle)."""
        return self

    @property
    def is_view(self) -> bool:
        """Is the result a view of an argument (a return aliasing without writing)?"""
        ret = self._schema.returns
        return bool(ret and ret[0].alias_info and "!" not in ret[0].alias_info)

    @property
    def tags(self) -> list:
        return []

    _tags = tags

    def __repr__(self) -> str:
        return (
            f"<OpOverload(op='{self.namespace}.{self._opname}', overload='{self._overloadname}')>"
        )

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_lookup, (self.namespace, self._opname, self._overloadname))

    # -- calling ---------------------------------------------------------------------------

    def __call__(self, /, *args, **kwargs):
        if _dispatches(args, kwargs):
            return _overrides.dispatch(self, self._ember_impl, args, kwargs)
        return self._ember_impl(*args, **kwargs)

    def _ember_impl(self, /, *args, **kwargs):
        """The call past ``__torch_function__``: ember's implementation."""
        impl = self._impl
        if impl is None:
            impl = self._impl = _implementation_of(self)
        if kwargs and self._rename is not None:
            kwargs = {self._rename.get(k, k): v for k, v in kwargs.items()}
        return impl(*args, **kwargs)

    def _accepts(self, args: tuple, kwargs: dict, strict: bool) -> bool:
        return _binds(self._schema, args, kwargs, strict)


class OpOverloadPacket:
    """An operator with its overloads: ``ember.ops.aten.add``. Calling it picks the first
    overload (in torch's order) whose schema accepts the arguments; ``.Tensor`` (an
    attribute) is one overload, ``overloads()`` their names.

    Example:
        >>> import ember
        >>> add = ember.ops.aten.add
        >>> add.overloads(), add._qualified_op_name
        (['Tensor', 'Scalar'], 'aten::add')
        >>> add(ember.ones(2), ember.ones(2))
        tensor([2., 2.])
    """

    def __init__(self, namespace: str, name: str, schemas: dict) -> None:
        self._namespace = namespace
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = f"ember.ops.{namespace}"
        self._qualified_op_name = f"{namespace}::{name}"
        self._schema_texts = schemas  # overload name -> schema text, in torch's order
        self._overload_names = list(schemas)
        self._overloads: dict = {}

    def __getattr__(self, key: str) -> OpOverload:
        # only for names not yet looked up: an overload, once made, is an attribute
        if key.startswith("__"):
            raise AttributeError(f"'OpOverloadPacket' object has no attribute '{key}'")
        if key not in self.__dict__.get("_schema_texts", ()):
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")
        return self._overload(key)

    def _overload(self, key: str) -> OpOverload:
        ov = self._overloads.get(key)
        if ov is not None:
            return ov
        with _LOCK:
            ov = self._overloads.get(key)
            if ov is None:
                ov = OpOverload(self, key, FunctionSchema(self._schema_texts[key]))
                self._overloads[key] = ov
                self.__dict__.setdefault(key, ov)
        return ov

    def overloads(self) -> list:
        """The overload names, in torch's order (those ember implements)."""
        return list(self._overload_names)

    @property
    def _dir(self) -> list:
        return self.overloads()

    @property
    def op(self):
        return self

    @property
    def _schemas(self) -> dict:
        return {k: self._overload(k)._schema for k in self._overload_names}

    def __iter__(self):
        return iter(self._overload_names)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._namespace}.{self.__name__}')>"

    def __str__(self) -> str:
        return f"{self._namespace}.{self.__name__}"

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_lookup, (self._namespace, self.__name__, None))

    def __call__(self, /, *args, **kwargs):
        if _dispatches(args, kwargs):
            return _overrides.dispatch(self, self._ember_impl, args, kwargs)
        return self._ember_impl(*args, **kwargs)

    def _ember_impl(self, /, *args, **kwargs):
        return self._choose(args, kwargs)._ember_impl(*args, **kwargs)

    def _choose(self, args: tuple, kwargs: dict) -> OpOverload:
        names = self._overload_names
        if len(names) == 1:
            return self._overloads.get(names[0]) or self._overload(names[0])
        for strict in (True, False):  # exact types first, then numbers for Tensors
            for key in names:
                ov = self._overload(key)
                if ov._accepts(args, kwargs, strict):
                    return ov
        types_ = ", ".join(type(a).__name__ for a in args)
        raise RuntimeError(
            f"{self._qualified_op_name}() Expected a value of type matching one of the "
            f"overloads {self._overload_names} for the arguments ({types_})"
        )


def _lookup(namespace: str, name: str, overload):
    """The op object with these names (unpickling)."""
    packet = getattr(getattr(ops, namespace), name)
    return packet if overload is None else getattr(packet, overload)


# -- overload resolution: does an overload's schema take these arguments ----------------------

_NUMBERS = (bool, int, float, complex)


def _is_number(x) -> bool:
    return isinstance(x, _NUMBERS) or (
        hasattr(x, "dtype") and not isinstance(x, Tensor) and getattr(x, "ndim", 1) == 0
    )


def _is_int(x) -> bool:
    return isinstance(x, int) or (hasattr(x, "__index__") and not isinstance(x, (Tensor, float)))


def _accepts(type_: str, x, strict: bool) -> bool:
    if type_.endswith("?"):
        if x is None:
            return True
        type_ = type_[:-1]
    if type_ == "Tensor":
        return isinstance(x, Tensor) or (not strict and _is_number(x))
    if type_ == "Scalar":
        return _is_number(x) or (not strict and isinstance(x, Tensor) and x.dim() == 0)
    if type_ in ("int", "SymInt"):
        return _is_int(x) and (not strict or not isinstance(x, bool))
    if type_ == "float":
        return (
            isinstance(x, (int, float)) and not isinstance(x, bool) or not strict and _is_number(x)
        )
    if type_ == "bool":
        return isinstance(x, bool) or (not strict and _is_int(x))
    if type_ == "str":
        return isinstance(x, str)
    if type_.endswith("]"):  # lists: int[], SymInt[2], Tensor[], Tensor?[], float[]
        item = type_[: type_.index("[")]
        if isinstance(x, (list, tuple)):
            return all(_accepts(item, v, strict) for v in x)
        return item in ("int", "SymInt") and _is_int(x)  # int[1] takes one int
    return True  # ScalarType, Layout, Device, Generator, MemoryFormat, Dimname...


def _binds(schema: FunctionSchema, args: tuple, kwargs: dict, strict: bool) -> bool:
    params = schema.arguments
    positional = [p for p in params if not p.kwarg_only]
    if len(args) > len(positional):
        return False
    names = {p.name: p for p in params}
    for k in kwargs:
        if k not in names:
            return False
    for i, p in enumerate(params):
        if i < len(args) and not p.kwarg_only:
            value = args[i]
        elif p.name in kwargs:
            value = kwargs[p.name]
        elif p.has_default:
            continue
        else:
            return False
        if not _accepts(p.type, value, strict):
            return False
    return True


# -- namespaces -------------------------------------------------------------------------------

_LOCK = threading.RLock()


class _OpNamespace(types.ModuleType):
    """``ember.ops.aten``: its ops are attributes (``ember.ops.aten.add``).

    Example:
        >>> import ember
        >>> ember.ops.aten.name, "mm" in list(ember.ops.aten)
        ('aten', True)
    """

    def __init__(self, name: str) -> None:
        super().__init__(f"ember.ops.{name}")
        self.name = name
        self.__file__ = "ember.ops"

    def __iter__(self):
        return iter(sorted(_schemas().get(self.name, {})))

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(
                f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'"
            )
        schemas = _schemas().get(self.name, {}).get(op_name)
        if schemas is None:
            raise AttributeError(
                f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'"
            )
        with _LOCK:
            packet = self.__dict__.get(op_name)
            if packet is None:
                packet = OpOverloadPacket(self.name, op_name, schemas)
                setattr(self, op_name, packet)
        return packet


class _Ops(types.ModuleType):
    """The type of ``ember.ops`` (torch's ``_Ops``): a module whose unknown attributes are
    operator namespaces, made on first use (``ember.ops.prim``, as torch)."""

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(f"module 'ember.ops' has no attribute '{name}'")
        with _LOCK:
            namespace = self.__dict__.get(name)
            if namespace is None:
                namespace = _OpNamespace(name)
                setattr(self, name, namespace)
        if name in _library_namespaces():
            from . import library  # deferred: a library's namespace loads ember's own ops

            library.load_provided(name)
        return namespace

    def load_library(self, path) -> None:
        """torch loads a C++ operator library here (``dlopen``); ember has no C++ runtime
        for one, so loading fails as a library that cannot be loaded does in torch: with
        ``OSError`` (libraries such as torchvision then run without their C++ ops)."""
        raise OSError(f"{path}: ember cannot load C++ operator libraries")


aten = _OpNamespace("aten")
profiler = _OpNamespace("profiler")


def _library_namespaces():
    from .library import PROVIDED_NAMESPACES  # deferred: ember.library imports ember.ops

    return PROVIDED_NAMESPACES


# -- declarations <-> aten ops ----------------------------------------------------------------

_BACKWARD = re.compile(r"Backward\d+$")


def _rule(node_name: str) -> str:
    """The aten op a node is named after, by torch's naming: the node name is the op name's
    ``_``-separated words title-cased (``log1p`` -> ``Log1P``, ``max_pool2d`` ->
    ``MaxPool2D``) plus ``Backward<N>``; so words start at a capital letter that does not
    follow a digit.

    Example:
        >>> from ember.ops import _rule
        >>> _rule("AddmmBackward0"), _rule("Log1PBackward0"), _rule("NllLoss2DBackward0")
        ('addmm', 'log1p', 'nll_loss2d')
    """
    base = _BACKWARD.sub("", node_name)
    words = re.findall(r"[A-Z](?:[a-z0-9]|(?<=[0-9])[A-Z])*", base)
    return "_".join(w.lower() for w in words)


# The overloads of the ops the rule names that are not ``default``: torch numbers a node
# (``Backward<N>``) by the order of its op's overloads with a derivative, so the node name
# alone does not tell which; each is torch's pairing (its derivatives.yaml).
_OVERLOAD = {
    "NormalBackward1": "Tensor_float",
    "NormalBackward2": "float_Tensor",
    "NormalBackward3": "Tensor_Tensor",
    "ScatterReduceBackward0": "two",
    "AddBackward0": "Tensor",
    "AddBackward1": "Scalar",
    "ClampBackward0": "Tensor",
    "CopysignBackward0": "Tensor",
    "CopysignBackward1": "Scalar",
    "DivBackward0": "Tensor",
    "DivBackward1": "Scalar",
    "DivBackward2": "Tensor_mode",
    "FillBackward0": "Scalar",
    "FmodBackward0": "Scalar",
    "FmodBackward1": "Tensor",
    "FrexpBackward0": "Tensor",
    "IndexBackward0": "Tensor",
    "IndexFillBackward0": "int_Scalar",
    "IndexFillBackward1": "int_Tensor",
    "LdexpBackward0": "Tensor",
    "LerpBackward0": "Scalar",
    "LerpBackward1": "Tensor",
    "RoundBackward1": "decimals",
    "LinalgPinvBackward0": "atol_rtol_tensor",
    "MaskedFillBackward0": "Scalar",
    "MaskedFillBackward1": "Tensor",
    "MaxBackward0": "dim",
    "MeanBackward1": "dim",
    "MedianBackward1": "dim",
    "NanmedianBackward1": "dim",
    "MinBackward0": "dim",
    "MulBackward0": "Tensor",
    "MulBackward1": "Scalar",
    "PowBackward0": "Tensor_Scalar",
    "PowBackward1": "Tensor_Tensor",
    "PowBackward2": "Scalar",
    "ProdBackward1": "dim_int",
    "RemainderBackward0": "Scalar",
    "RemainderBackward1": "Tensor",
    "RsubBackward0": "Tensor",
    "RsubBackward1": "Scalar",
    "ScatterBackward0": "src",
    "ScatterBackward1": "value",
    "SelectBackward0": "int",
    "SliceBackward0": "Tensor",
    "SortBackward1": "stable",
    "SpecialZetaBackward1": "self_scalar",
    "SpecialZetaBackward2": "other_scalar",
    "SplitBackward0": "Tensor",
    "SqueezeBackward1": "dim",
    "SqueezeBackward2": "dims",
    "StdBackward0": "correction",
    "StdMeanBackward0": "correction",
    "SubBackward0": "Tensor",
    "SumBackward1": "dim_IntList",
    "TransposeBackward0": "int",
    "UnbindBackward0": "int",
    "UnsafeSplitBackward0": "Tensor",
    "VarBackward0": "correction",
    "VarMeanBackward0": "correction",
    "WhereBackward0": "self",
    "XlogyBackward0": "Tensor",
    "XlogyBackward1": "Scalar_Self",
    "XlogyBackward2": "Scalar_Other",
}

# Nodes whose op is not named as the node: torch's op name has a leading underscore, is the
# in-place or ``_forward`` op the node is for, or, where a comment says, ember's choice.
_OP_NAME = {
    # sparse tensors (ember._aten.sparse)
    "SparseCooTensorWithDimsAndTensorsBackward0": (
        "_sparse_coo_tensor_with_dims_and_tensors.default"
    ),
    "SparseCompressedTensorBackward0": "sparse_compressed_tensor.comp_plain_value_size",
    "ToDenseBackward0": "_to_dense.default",
    "ToSparseBackward0": "_to_sparse.sparse_dim",
    "ToSparseCsrBackward0": "_to_sparse_csr.default",
    "CoalesceBackward0": "_coalesce.default",
    "SparseAddmmBackward0": "_sparse_addmm.default",
    "SparseSumBackward0": "_sparse_sum.dim",
    "SparseSoftmaxBackward0": "_sparse_softmax.default",
    "SparseLogSoftmaxBackward0": "_sparse_log_softmax.default",
    "GridSampler2DBackward0": "grid_sampler_2d.default",
    "GridSampler3DBackward0": "grid_sampler_3d.default",
    "AdaptiveAvgPool2DBackward0": "_adaptive_avg_pool2d.default",
    "AdaptiveAvgPool3DBackward0": "_adaptive_avg_pool3d.default",
    "BernoulliBackward1": "bernoulli_.Tensor",
    "BernoulliBackward2": "bernoulli_.float",
    "CdistBackward0": "_cdist_forward.default",
    "CeluBackward1": "celu_.default",
    "ConjBackward0": "_conj.default",
    "ConjPhysicalBackward0": "_conj_physical.default",
    "CopyBackwards": "copy_.default",  # torch's hand-written node for copy_
    "CtcLossBackward0": "_ctc_loss.default",
    # ember records it for diag(matrix), whose torch graph ends in the node of diagonal_copy
    "DiagonalBackward0_copy": "diag.default",
    "EluBackward1": "elu_.default",
    "EmbeddingBagBackward0": "_embedding_bag.default",
    "EuclideanDistBackward0": "_euclidean_dist.default",
    "ExponentialBackward0": "exponential_.default",
    "FftC2CBackward0": "_fft_c2c.default",
    "FftC2RBackward0": "_fft_c2r.default",
    "FftR2CBackward0": "_fft_r2c.default",
    "LeakyReluBackward1": "leaky_relu_.default",
    "LinalgDetBackward0": "_linalg_det.default",
    "LinalgEighBackward0": "_linalg_eigh.default",
    "LinalgSlogdetBackward0": "_linalg_slogdet.default",
    "LinalgSolveExBackward0": "_linalg_solve_ex.default",
    "LinalgSvdBackward0": "_linalg_svd.default",
    "LogSigmoidBackward0": "log_sigmoid_forward.default",
    "LogSoftmaxBackward0": "_log_softmax.default",
    "MultilabelMarginLossBackward0": "multilabel_margin_loss_forward.default",
    "NllLoss2DBackward0": "nll_loss2d_forward.default",
    "NllLossBackward0": "nll_loss_forward.default",
    "NormalBackward0": "normal_.default",
    "PackPaddedSequenceBackward0": "_pack_padded_sequence.default",
    "PdistBackward0": "_pdist_forward.default",
    "PreluKernelBackward0": "_prelu_kernel.default",
    "RandomBackward0": "random_.from",
    "RandomBackward2": "random_.default",
    "ReshapeAliasBackward0": "_reshape_alias.default",
    "RreluWithNoiseBackward1": "rrelu_with_noise_.default",
    "ScaledDotProductFlashAttentionForCpuBackward0": (
        "_scaled_dot_product_flash_attention_for_cpu.default"
    ),
    "SmoothL1LossBackward0": "smooth_l1_loss.default",  # the rule reads L1Loss as l1loss
    "SoftmaxBackward0": "_softmax.default",
    "SqueezeBackward3": "squeeze_.default",
    "SqueezeBackward4": "squeeze_.dim",
    "SqueezeBackward5": "squeeze_.dims",
    "TBackward1": "t_.default",
    "TransposeBackward1": "transpose_.default",
    "ThresholdBackward1": "threshold_.default",
    "ToCopyBackward0": "_to_copy.default",
    "TrilinearBackward0": "_trilinear.default",
    "UniformBackward0": "uniform_.default",
    "Unique2Backward0": "_unique2.default",
    "UnsafeViewBackward0": "_unsafe_view.default",
    "UnsqueezeBackward1": "unsqueeze_.default",
    "UpsampleBilinear2DAaBackward0": "_upsample_bilinear2d_aa.default",
    "UpsampleBicubic2DAaBackward0": "_upsample_bicubic2d_aa.default",
    "UpsampleLanczos2DAaBackward0": "_upsample_lanczos2d_aa.default",
    "UpsampleNearestExact1DBackward0": "_upsample_nearest_exact1d.default",
    "UpsampleNearestExact2DBackward0": "_upsample_nearest_exact2d.default",
    "UpsampleNearestExact3DBackward0": "_upsample_nearest_exact3d.default",
    "ZeroBackward0": "zero_.default",
    # forward_ad.unpack_dual's primal (torch's Identity node of _unpack_dual)
    "torch::autograd::Identity": "_unpack_dual.default",
}

# Declarations that share a node name with another op's (told apart by their inputs and
# parameters: "Name(inputs; params)"). torch's op is a composite whose graph ends in the
# node named; ember declares the whole op as one node of that name.
_BY_DECLARATION = {
    # a sparse tensor converted to the other layout
    "ToSparseBackward0(self; _layout)": "_to_sparse.default",
    # einsum (its plan: terms, output term, shapes) ends in a sum, permute, view or mul
    "SumBackward1(self; terms, out_term, shapes)": "einsum.default",
    "PermuteBackward0(self; terms, out_term, shapes)": "einsum.default",
    "ViewBackward0(self, other; terms, out_term, shapes)": "einsum.default",
    "ViewBackward0(*tensors; terms, out_term, shapes)": "einsum.default",
    "MulBackward0(self, other; terms, out_term, shapes)": "einsum.default",
    "MulBackward0(*tensors; terms, out_term, shapes)": "einsum.default",
    # repeat_interleave(int) ends in a view of the repeated copies
    "ViewBackward0(self; repeats, dim, flat_sizes, self_sym_sizes)": "repeat_interleave.self_int",
    "PowBackward0(self; )": "square.default",  # square is pow(x, 2)
    "MulBackward1(self; )": "special_ndtr.default",  # ndtr ends in a product by a number
    # torch's nodes for ops without a derivative are all named NotImplemented
    "NotImplemented(*tensors; )": "scatter.reduce",
    "NotImplemented(self, other; )": "floor_divide.default",
    "NotImplemented(self, values; )": "heaviside.default",
    "NotImplemented(self, nll; g, targets, il, tl, blank, zero_infinity, alpha)": (
        "_ctc_loss_backward.default"
    ),
}

# Declarations that are no aten op, and why.
EMBER_ONLY = {
    "CopySlices": "torch's node for an in-place op on a view: it wraps that op's node",
    "LstmLayerBackward0": "ember's one node per LSTM layer and direction (torch records the "
    "layer's ops, or one mkldnn node)",
    "GruLayerBackward0": "ember's one node per GRU layer and direction",
    "RnnTanhLayerBackward0": "ember's one node per tanh RNN layer and direction",
    "RnnReluLayerBackward0": "ember's one node per ReLU RNN layer and direction",
}


def declaration_key(cls) -> str:
    """How ``_BY_DECLARATION`` names a declaration: ``"Name(inputs; params)"``.

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> ember.ops.declaration_key(type((x * x).grad_fn))
        'MulBackward0(self, other; )'
    """
    return f"{cls.__name__}({', '.join(cls._inputs)}; {', '.join(cls._param_names)})"


def _qualified(cls) -> str | None:
    """``"mul.Tensor"`` for a declaration (None: ember-only)."""
    by_decl = _BY_DECLARATION.get(declaration_key(cls))
    if by_decl is not None:
        return by_decl
    name = cls.__name__
    if name in EMBER_ONLY:
        return None
    return _OP_NAME.get(name) or f"{_rule(name)}.{_OVERLOAD.get(name, 'default')}"


_ATEN_OF: dict = {}  # declaration -> its OpOverload (or None), filled on first use


def aten_op(node) -> OpOverload | None:
    """The aten overload whose derivative the declared node class (or a ``grad_fn``) is:
    ``MulBackward0`` -> ``aten.mul.Tensor``; None for ``EMBER_ONLY`` declarations.

    Example:
        >>> import ember
        >>> x = ember.ones(2, 2, requires_grad=True)
        >>> ember.ops.aten_op(x.softmax(0).grad_fn)
        <OpOverload(op='aten._softmax', overload='default')>
    """
    cls = node if isinstance(node, type) else type(node)
    try:
        return _ATEN_OF[cls]
    except KeyError:
        pass
    if not (isinstance(cls, type) and issubclass(cls, Node)) or cls not in DECLARED:
        raise TypeError(f"aten_op: {cls!r} is not a declared op's node class")
    qualified = _qualified(cls)
    op = None if qualified is None else _resolve(qualified)
    _ATEN_OF[cls] = op
    return op


def declarations(op: OpOverload) -> list:
    """The declared node classes whose aten op is ``op`` (the reverse of ``aten_op``).

    Example:
        >>> import ember
        >>> [c.__name__ for c in ember.ops.declarations(ember.ops.aten.mul.Tensor)]
        ['MulBackward0']
    """
    return [cls for cls in DECLARED if aten_op(cls) is op]


def _resolve(qualified: str) -> OpOverload:
    name, _, overload = qualified.partition(".")
    return getattr(getattr(aten, name), overload or "default")


# -- implementations: what an overload runs ---------------------------------------------------


def implementation(op: OpOverload):
    """The ember function ``op`` runs (an op's implementation, or an adapter from aten's
    argument order to ember's), without ``__torch_function__`` dispatch.

    Example:
        >>> import ember
        >>> ember.ops.implementation(ember.ops.aten.mm.default).__name__
        'mm'
    """
    if op._impl is None:
        op._impl = _implementation_of(op)
    return op._impl


def _impl_of(fn):
    """The implementation behind a public (dispatching) function or method."""
    return getattr(fn, "_ember_impl", fn)


def _public(path: str):
    """``"ember.linalg:svd"`` -> the implementation of ``ember.linalg.svd``."""
    module, _, attr = path.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return _impl_of(obj)


def _by_name(name: str):
    """ember's function named like the aten op (in the torch namespace, linalg_/special_/
    fft_ in theirs, nn.functional, or a Tensor method), or None."""
    for prefix, module in (("linalg_", "linalg"), ("special_", "special"), ("fft_", "fft")):
        if name.startswith(prefix):
            namespace = importlib.import_module(f"ember.{module}")
            fn = getattr(namespace, name[len(prefix) :], None)
            if fn is not None:
                return _impl_of(fn)
    for owner in (_torch, importlib.import_module("ember.nn.functional")):
        fn = getattr(owner, name, None)
        if isinstance(fn, types.FunctionType):
            return _impl_of(fn)
    fn = Tensor.__dict__.get(name)
    if isinstance(fn, types.FunctionType):
        return _impl_of(fn)
    return None


def _implementation_of(op: OpOverload):
    key = f"{op._opname}.{op._overloadname}"
    if op.namespace == "profiler":
        return _PROFILER_IMPLS[key]
    if key in UNIMPLEMENTED:
        raise NotImplementedError(f"{op.name()}: {UNIMPLEMENTED[key]}")
    spec = _ADAPTERS.get(key)
    if isinstance(spec, str):
        impl = _public(spec)
    elif spec is not None:
        impl = spec
    else:
        impl = _by_name(op._opname)
    if impl is None:
        raise NotImplementedError(f"{op.name()}: ember has no implementation of this op")
    op._rename = _renames(op._schema, impl)
    return impl


def _renames(schema: FunctionSchema, impl) -> dict | None:
    """aten's names for positional arguments -> the implementation's names at the same
    positions (aten's ``self`` is ember's ``input``), for calls that pass them by keyword."""
    code = getattr(impl, "__code__", None)
    if code is None:
        return None
    own = code.co_varnames[: code.co_argcount]
    positional = [a.name for a in schema.arguments if not a.kwarg_only]
    rename = {a: b for a, b in zip(positional, own) if a != b}
    return rename or None


# Overloads whose ember function differs from the op's name or argument order (the others
# run the function named like the op: ``aten.sin`` -> ``ember.sin``). A string names a
# public function ("module:name"); a function is an adapter from aten's arguments.


def _ember():
    return _torch


def _call(path: str, *args, **kwargs):
    return _public(path)(*args, **kwargs)


def _F(name: str, *args, **kwargs):
    return _public(f"ember.nn.functional:{name}")(*args, **kwargs)


def _empty(like: Tensor | None = None, dtype=None):
    """An empty (0-element) tensor: what torch returns for outputs it did not compute."""
    return _ember().empty(0, dtype=dtype if dtype is not None else like.dtype)


def _no_grad():
    return _ember().no_grad()


# aten's reduction argument is an int (at::Reduction); nn.functional's a string
_REDUCTION = ("none", "mean", "sum")


def _with_scalar(name: str):
    """``add.Scalar(self, other, alpha=1)``: alpha positional in aten, keyword in ember."""

    def adapter(self, other, alpha=1):
        return _call(f"ember._torch:{name}", self, other, alpha=alpha)

    adapter.__name__ = name
    return adapter


def _factory(name: str, leading: int):
    """A factory (``ones(size, *, dtype...)``, ``full_like(self, fill_value, ...)``): the
    ``leading`` positional arguments, and the options ember has (no pin_memory)."""

    def adapter(*args, dtype=None, layout=None, device=None, pin_memory=None, **options):
        options.pop("non_blocking", None)
        if len(args) != leading:
            raise TypeError(f"{name}() takes {leading} positional arguments ({len(args)} given)")
        kwargs = dict(dtype=dtype, layout=layout, device=device, **options)
        return _call(f"ember._torch:{name}", *args, **kwargs)

    adapter.__name__ = name
    return adapter


def _arange(start, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _call("ember._torch:arange", start, end, step, dtype=dtype, layout=layout, device=device)


def _scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    e = _ember()
    return e.tensor(s, dtype=dtype if dtype is not None else e.get_default_dtype())


def _softmax(self, dim, half_to_float=False):
    return _call("ember._torch:softmax", self, dim)


def _log_softmax(self, dim, half_to_float=False):
    return _call("ember._torch:log_softmax", self, dim)


def _sum_dim(self, dim, keepdim=False, *, dtype=None):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        dim = tuple(range(self.dim()))  # aten: no dims means all of them
    return _call("ember._torch:sum", self, dim, keepdim, dtype=dtype)


def _mean_dim(self, dim, keepdim=False, *, dtype=None):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        dim = tuple(range(self.dim()))
    return _call("ember._torch:mean", self, dim, keepdim, dtype=dtype)


def _correction(name: str):
    def adapter(self, dim=None, *, correction=None, keepdim=False):
        return _call(f"ember._torch:{name}", self, dim, keepdim=keepdim, correction=correction)

    adapter.__name__ = name
    return adapter


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    # aten numbers the modes where F.grid_sample names them
    return _F(
        "grid_sample",
        input,
        grid,
        _GRID_MODES[interpolation_mode],
        _GRID_PADDINGS[padding_mode],
        align_corners,
    )


def _affine_grid_generator(theta, size, align_corners):
    return _F("affine_grid", theta, list(size), align_corners)


def _block_diag(tensors):
    return _call("ember._torch:block_diag", *tensors)


def _unfold(self, dimension, size, step):
    return self.unfold(dimension, size, step)  # Tensor.unfold (F.unfold is im2col)


def _unfold_backward(grad_in, input_sizes, dim, size, step):
    from ._aten.shape import _unfold_backward as unfold_backward  # deferred: rarely used

    return unfold_backward(grad_in, tuple(input_sizes), dim, size, step)


def _einsum(equation, tensors, *, path=None):
    return _call("ember._torch:einsum", equation, *tensors)


def _expand(self, size, *, implicit=False):
    return self.expand(*size)


def _slice(self, dim=0, start=None, end=None, step=1):
    dim = dim % max(self.dim(), 1)
    return self[(slice(None),) * dim + (slice(start, end, step),)]


def _index(self, indices):
    return self[tuple(slice(None) if i is None else i for i in indices)]


def _alias(self):
    return _aten_core.record(declarations(aten.alias.default)[0], self._data.view(), (self,))


def _reshape(self, size, stride=None):
    return self.reshape(size)


def _to_copy(
    self,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    non_blocking=False,
    memory_format=None,
):
    return self.to(dtype=dtype if dtype is not None else self.dtype, copy=True)


def _contiguous(self, *, memory_format=0):
    return self.contiguous()


def _fill(self, value):
    return self.clone().fill_(value)


def _scatter_value(self, dim, index, value):
    return _call("ember._torch:scatter", self, dim, index, value=value)


def _run_elu(self, alpha, scale, input_scale, cls):
    # the declaration itself: nn.functional's elu has no scale arguments (selu and celu
    # are elu with particular ones)
    return _aten_core.run(cls, (self,), (self._data,), (alpha, scale, input_scale))


def _elu(self, alpha=1, scale=1, input_scale=1):
    if scale == 1 and input_scale == 1:
        return _F("elu", self, alpha)
    return _run_elu(self, alpha, scale, input_scale, declarations(aten.elu.default)[0])


def _elu_(self, alpha=1, scale=1, input_scale=1):
    if scale == 1 and input_scale == 1:
        return _F("elu_", self, alpha)
    cls = declarations(aten.elu_.default)[0]
    return _views.apply_inplace(self, _run_elu, alpha, scale, input_scale, cls, copy_old=False)


def _rrelu_with_noise(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    return _F("rrelu", self, lower, upper, training)


def _rrelu_with_noise_(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    return _F("rrelu_", self, lower, upper, training)


def _log_sigmoid_forward(self):
    with _no_grad():  # torch's buffer on CPU: exp(-|x|), which its backward reads
        buffer = (-self.abs()).exp()
    return _F("logsigmoid", self), buffer


def _prelu_kernel(self, weight):
    if weight.numel() == 1 or weight.numel() == weight.shape[min(1, weight.dim() - 1)]:
        return _F("prelu", self, weight.reshape(-1))  # one slope per channel (dim 1)
    e = _ember()
    return e.where(self > 0, self, weight * self)


def _nan_to_num(self, nan=None, posinf=None, neginf=None):
    return _call("ember._torch:nan_to_num", self, 0.0 if nan is None else nan, posinf, neginf)


def _adaptive_max_pool(nd: int):
    def adapter(self, output_size):
        return _F(f"adaptive_max_pool{nd}d", self, output_size, return_indices=True)

    adapter.__name__ = f"adaptive_max_pool{nd}d"
    return adapter


def _loss(name: str, *, before: int = 2, after: tuple = ()):
    """A loss whose aten form ends in an int ``reduction`` (``mse_loss(self, target,
    reduction=1)``): nn.functional's with ``reduction=`` its name, ``before`` arguments
    positional and the ``after`` ones (after the reduction) as keywords."""

    def adapter(*args, reduction=1, **kwargs):
        head = args[:before]
        if len(args) > before:
            reduction = args[before]
        kwargs.update(zip(after, args[before + 1 :]))
        return _F(name, *head, reduction=_REDUCTION[reduction], **kwargs)

    adapter.__name__ = name
    return adapter


def _bce(self, target, weight=None, reduction=1):
    return _F("binary_cross_entropy", self, target, weight, reduction=_REDUCTION[reduction])


def _bce_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    return _F(
        "binary_cross_entropy_with_logits",
        self,
        target,
        weight,
        reduction=_REDUCTION[reduction],
        pos_weight=pos_weight,
    )


def _bce_backward(grad_output, self, target, weight=None, reduction=1):
    # d/dx of -(y log x + (1 - y) log(1 - x)) = (x - y) / (x (1 - x)), as torch clamps
    grad = grad_output * (self - target) / ((1 - self) * self).clamp_min(1e-12)
    if weight is not None:
        grad = grad * weight
    return grad / self.numel() if reduction == 1 else grad


def _multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=1):
    return _F("multi_margin_loss", self, target, p, margin, weight, reduction=_REDUCTION[reduction])


def _nll_loss_forward(self, target, weight, reduction, ignore_index):
    out = _F(
        "nll_loss", self, target, weight, ignore_index=ignore_index, reduction=_REDUCTION[reduction]
    )
    with _no_grad():  # the weight of the targets counted (0 with no reduction, as torch)
        kept = (target != ignore_index).to(self.dtype)
        if weight is not None:
            kept = kept * weight[target.clamp(0, weight.shape[0] - 1)]
        total = kept.sum() * (reduction != 0)
    return out, total


def _multilabel_margin_loss_forward(self, target, reduction):
    e = _ember()
    out = _F("multilabel_margin_loss", self, target, reduction=_REDUCTION[reduction])
    # is_target: 1 where a class is one of the row's targets (those before the first -1)
    t = target.reshape(-1, target.shape[-1]).tolist()
    marks = [[0.0] * len(row) for row in t]
    for mark, row in zip(marks, t):
        for c in row:
            if c < 0:
                break
            mark[c] = 1.0
    return out, e.tensor(marks, dtype=self.dtype).reshape(target.shape)


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _F(
        "embedding",
        indices,
        weight,
        None if padding_idx == -1 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


def _convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
):
    nd = weight.dim() - 2
    if transposed:
        return _F(
            f"conv_transpose{nd}d",
            input,
            weight,
            bias,
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        )
    return _F(f"conv{nd}d", input, weight, bias, stride, padding, dilation, groups)


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    dims = [0] + list(range(2, input.dim()))
    with _no_grad():  # torch's saved statistics (empty when not training)
        if training:
            mean = input.mean(dims)
            invstd = (input.var(dims, correction=0) + eps).rsqrt()
        else:
            mean = invstd = _empty(input)
    out = _F("batch_norm", input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, invstd


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    with _no_grad():
        mean = input.mean(dims, keepdim=True)
        rstd = (input.var(dims, correction=0, keepdim=True) + eps).rsqrt()
    return _F("layer_norm", input, normalized_shape, weight, bias, eps), mean, rstd


def _native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    with _no_grad():
        grouped = input.reshape(N, group, -1)
        mean = grouped.mean(-1)
        rstd = (grouped.var(-1, correction=0) + eps).rsqrt()
    return _F("group_norm", input, group, weight, bias, eps), mean, rstd


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _F("layer_norm", input, normalized_shape, weight, bias, eps)


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _F("group_norm", input, num_groups, weight, bias, eps)


def _max_pool_with_indices(nd: int):
    def adapter(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return _F(
            f"max_pool{nd}d",
            self,
            kernel_size,
            stride or None,
            padding,
            dilation,
            ceil_mode,
            return_indices=True,
        )

    adapter.__name__ = f"max_pool{nd}d_with_indices"
    return adapter


def _max_unpool(nd: int):
    def adapter(self, indices, output_size, stride=None, padding=0):
        # the kernel only sets the default output size: one that gives output_size
        spatial = self.shape[-nd:]
        kernel = [max(o // max(i, 1), 1) for o, i in zip(output_size, spatial)]
        return _F(
            f"max_unpool{nd}d", self, indices, kernel, stride or kernel, padding, list(output_size)
        )

    adapter.__name__ = f"max_unpool{nd}d"
    return adapter


def _pad(mode: str):
    def adapter(self, padding):
        return _F("pad", self, list(padding), mode=mode)

    adapter.__name__ = f"{mode}_pad"
    return adapter


def _constant_pad_nd(self, pad, value=0):
    return _F("pad", self, list(pad), value=value)


def _interpolate(self, output_size, mode, align_corners, scales):
    if scales and all(x is not None for x in scales):
        # torch maps output to input positions by the scales given, not the sizes' ratio
        return _F(
            "interpolate",
            self,
            scale_factor=list(scales),
            mode=mode,
            align_corners=align_corners,
            recompute_scale_factor=False,
        )
    return _F("interpolate", self, size=list(output_size), mode=mode, align_corners=align_corners)


def _upsample(mode: str, align: bool):
    if align:

        def adapter(self, output_size, align_corners, *scales):
            return _interpolate(self, output_size, mode, align_corners, scales)
    else:

        def adapter(self, output_size, *scales):
            return _interpolate(self, output_size, mode, None, scales)

    adapter.__name__ = f"upsample_{mode}"
    return adapter


def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    return _F("fold", self, output_size, kernel_size, dilation, padding, stride)


def _im2col(self, kernel_size, dilation, padding, stride):
    return _F("unfold", self, kernel_size, dilation, padding, stride)


_CDIST_MODES = {
    None: "use_mm_for_euclid_dist_if_necessary",
    0: "use_mm_for_euclid_dist_if_necessary",
    1: "use_mm_for_euclid_dist",
    2: "donot_use_mm_for_euclid_dist",
}


def _cdist_forward(x1, x2, p, compute_mode):
    return _call("ember._torch:cdist", x1, x2, p, _CDIST_MODES[compute_mode])


def _euclidean_dist(x1, x2):
    return _call("ember._torch:cdist", x1, x2, 2.0, "use_mm_for_euclid_dist")


def _sdpa_flash(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    e = _ember()
    out = _F(
        "scaled_dot_product_attention", query, key, value, attn_mask, dropout_p, is_causal, scale
    )
    with _no_grad():  # the log-sum-exp of each query's scores (torch's second output)
        s = scale if scale is not None else query.shape[-1] ** -0.5
        scores = query @ key.transpose(-2, -1) * s
        if is_causal:
            n, m = scores.shape[-2:]
            scores = scores.masked_fill(e.ones(n, m, dtype=e.bool).triu(1), -math.inf)
        if attn_mask is not None:
            scores = (
                scores.masked_fill(~attn_mask, -math.inf)
                if attn_mask.dtype == e.bool
                else scores + attn_mask
            )
        lse = scores.logsumexp(-1)
        lse = lse.masked_fill(lse == -math.inf, 0.0)  # a query with no key: 0, as torch's
    return out, lse


# _fft_*'s normalization (torch's fft_norm_mode): 0 none, 1 1/sqrt(n), 2 1/n
_FORWARD_NORM = ("backward", "ortho", "forward")  # for a forward transform
_INVERSE_NORM = ("forward", "ortho", "backward")  # for an inverse one


def _fft_c2c(self, dim, normalization, forward):
    if forward:
        return _call("ember.fft:fftn", self, dim=dim, norm=_FORWARD_NORM[normalization])
    return _call("ember.fft:ifftn", self, dim=dim, norm=_INVERSE_NORM[normalization])


def _fft_r2c(self, dim, normalization, onesided):
    name = "rfftn" if onesided else "fftn"
    return _call(f"ember.fft:{name}", self, dim=dim, norm=_FORWARD_NORM[normalization])


def _fft_c2r(self, dim, normalization, last_dim_size):
    s = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    return _call("ember.fft:irfftn", self, s=s, dim=dim, norm=_INVERSE_NORM[normalization])


def _lu_factor(A):
    with _no_grad():
        return _call("ember.linalg:lu_factor", A)


def _linalg_det(A):
    # torch factors A^T (A's memory read column-major): the same determinant
    LU, pivots = _lu_factor(A.mT)
    return _call("ember.linalg:det", A), LU, pivots


def _linalg_slogdet(A):
    sign, logabsdet = _call("ember.linalg:slogdet", A)
    LU, pivots = _lu_factor(A.mT)
    return sign, logabsdet, LU, pivots


def _linalg_solve_ex(A, B, *, left=True, check_errors=False):
    e = _ember()
    result = _call("ember.linalg:solve", A, B, left=left)
    LU, pivots = _lu_factor(A)
    return result, LU, pivots, e.zeros(A.shape[:-2], dtype=e.int32)


def _linalg_svd(A, full_matrices=False, compute_uv=True, *, driver=None):
    if not compute_uv:
        return _empty(A), _call("ember.linalg:svdvals", A), _empty(A)
    return tuple(_call("ember.linalg:svd", A, full_matrices))


def _linalg_eigh(A, UPLO="L", compute_v=True):
    if not compute_v:
        return _call("ember.linalg:eigvalsh", A, UPLO), _empty(A)
    return tuple(_call("ember.linalg:eigh", A, UPLO))


def _unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    return tuple(_call("ember._torch:unique", self, sorted, True, True, dim))  # all three, as torch


def _unique2(self, sorted=True, return_inverse=False, return_counts=False):
    e = _ember()
    values, inverse, counts = _call("ember._torch:unique", self, sorted, True, True)
    if not return_inverse:  # empty when not asked for, as torch
        inverse = e.empty(0, dtype=e.int64)
    if not return_counts:
        counts = e.empty(0, dtype=e.int64)
    return values, inverse, counts


def _pack_padded_sequence(input, lengths, batch_first):
    packed = _call("ember.nn.utils.rnn:pack_padded_sequence", input, lengths, batch_first)
    return packed.data, packed.batch_sizes


def _unpack_dual(dual, level):
    return tuple(_call("ember.autograd.forward_ad:unpack_dual", dual, level=level))


_ADAPTERS: dict = {
    "add.Scalar": _with_scalar("add"),
    "sub.Scalar": _with_scalar("sub"),
    "rsub.Scalar": _with_scalar("rsub"),
    "ones.default": _factory("ones", 1),
    "zeros.default": _factory("zeros", 1),
    "rand.default": _factory("rand", 1),
    "randn.default": _factory("randn", 1),
    "empty.memory_format": _factory("empty", 1),
    "full.default": _factory("full", 2),
    "ones_like.default": _factory("ones_like", 1),
    "zeros_like.default": _factory("zeros_like", 1),
    "empty_like.default": _factory("empty_like", 1),
    "full_like.default": _factory("full_like", 2),
    "arange.default": _arange,
    "arange.start": _arange,
    "arange.start_step": _arange,
    "scalar_tensor.default": _scalar_tensor,
    "_softmax.default": _softmax,
    "_log_softmax.default": _log_softmax,
    "sum.dim_IntList": _sum_dim,
    "mean.dim": _mean_dim,
    "var.correction": _correction("var"),
    "std.correction": _correction("std"),
    "var_mean.correction": _correction("var_mean"),
    "std_mean.correction": _correction("std_mean"),
    "einsum.default": _einsum,
    "block_diag.default": _block_diag,
    "grid_sampler_2d.default": _grid_sampler,
    "grid_sampler_3d.default": _grid_sampler,
    "affine_grid_generator.default": _affine_grid_generator,
    "unfold.default": _unfold,
    "unfold_backward.default": _unfold_backward,
    "expand.default": _expand,
    "slice.Tensor": _slice,
    "index.Tensor": _index,
    "alias.default": _alias,
    "_reshape_alias.default": _reshape,
    "_unsafe_view.default": _reshape,
    "_to_copy.default": _to_copy,
    "contiguous.default": _contiguous,
    "fill.Scalar": _fill,
    "scatter.value": _scatter_value,
    "_conj.default": "ember._torch:conj",
    "_conj_physical.default": "ember._torch:conj_physical",
    "elu.default": _elu,
    "elu_.default": _elu_,
    "rrelu_with_noise.default": _rrelu_with_noise,
    "rrelu_with_noise_.default": _rrelu_with_noise_,
    "log_sigmoid_forward.default": _log_sigmoid_forward,
    "_prelu_kernel.default": _prelu_kernel,
    "nan_to_num.default": _nan_to_num,
    "adaptive_max_pool2d.default": _adaptive_max_pool(2),
    "adaptive_max_pool3d.default": _adaptive_max_pool(3),
    "mse_loss.default": _loss("mse_loss"),
    "huber_loss.default": _loss("huber_loss", after=("delta",)),
    "smooth_l1_loss.default": _loss("smooth_l1_loss", after=("beta",)),
    "soft_margin_loss.default": _loss("soft_margin_loss"),
    "binary_cross_entropy.default": _bce,
    "binary_cross_entropy_with_logits.default": _bce_with_logits,
    "binary_cross_entropy_backward.default": _bce_backward,
    "multi_margin_loss.default": _multi_margin_loss,
    "multilabel_margin_loss_forward.default": _multilabel_margin_loss_forward,
    "nll_loss_forward.default": _nll_loss_forward,
    "nll_loss2d_forward.default": _nll_loss_forward,
    "embedding.default": _embedding,
    "convolution.default": _convolution,
    "native_batch_norm.default": _native_batch_norm,
    "native_layer_norm.default": _native_layer_norm,
    "native_group_norm.default": _native_group_norm,
    "layer_norm.default": _layer_norm,
    "group_norm.default": _group_norm,
    "_adaptive_avg_pool2d.default": "ember.nn.functional:adaptive_avg_pool2d",
    "_adaptive_avg_pool3d.default": "ember.nn.functional:adaptive_avg_pool3d",
    "max_pool2d_with_indices.default": _max_pool_with_indices(2),
    "max_pool3d_with_indices.default": _max_pool_with_indices(3),
    "max_unpool2d.default": _max_unpool(2),
    "max_unpool3d.default": _max_unpool(3),
    "constant_pad_nd.default": _constant_pad_nd,
    "reflection_pad1d.default": _pad("reflect"),
    "reflection_pad2d.default": _pad("reflect"),
    "reflection_pad3d.default": _pad("reflect"),
    "replication_pad1d.default": _pad("replicate"),
    "replication_pad2d.default": _pad("replicate"),
    "replication_pad3d.default": _pad("replicate"),
    "upsample_nearest1d.default": _upsample("nearest", False),
    "upsample_nearest2d.default": _upsample("nearest", False),
    "upsample_nearest3d.default": _upsample("nearest", False),
    "_upsample_nearest_exact1d.default": _upsample("nearest-exact", False),
    "_upsample_nearest_exact2d.default": _upsample("nearest-exact", False),
    "_upsample_nearest_exact3d.default": _upsample("nearest-exact", False),
    "upsample_linear1d.default": _upsample("linear", True),
    "upsample_bilinear2d.default": _upsample("bilinear", True),
    "upsample_bicubic2d.default": _upsample("bicubic", True),
    "upsample_trilinear3d.default": _upsample("trilinear", True),
    "_upsample_bilinear2d_aa.default": "ember._aten.nn_interp:_upsample_bilinear2d_aa",
    "_upsample_bicubic2d_aa.default": "ember._aten.nn_interp:_upsample_bicubic2d_aa",
    "_upsample_lanczos2d_aa.default": "ember._aten.nn_interp:_upsample_lanczos2d_aa",
    "col2im.default": _col2im,
    "im2col.default": _im2col,
    "_cdist_forward.default": _cdist_forward,
    "_euclidean_dist.default": _euclidean_dist,
    "_pdist_forward.default": "ember.nn.functional:pdist",
    "_scaled_dot_product_flash_attention_for_cpu.default": _sdpa_flash,
    "_fft_c2c.default": _fft_c2c,
    "_fft_r2c.default": _fft_r2c,
    "_fft_c2r.default": _fft_c2r,
    "_linalg_det.default": _linalg_det,
    "_linalg_slogdet.default": _linalg_slogdet,
    "_linalg_solve_ex.default": _linalg_solve_ex,
    "_linalg_svd.default": _linalg_svd,
    "_linalg_eigh.default": _linalg_eigh,
    "_unique2.default": _unique2,
    "unique_dim.default": _unique_dim,
    "unique_consecutive.default": "ember._aten.sorting:_unique_consecutive_aten",
    "_pack_padded_sequence.default": _pack_padded_sequence,
    "_unpack_dual.default": _unpack_dual,
}

# Overloads ember cannot run with aten's arguments, and why (calling one raises
# NotImplementedError saying so; the op object, its schema and mapping still exist).
_SPARSE_ONLY = (
    "a sparse-tensor overload: ember's sparse tensors run through torch.sparse, the sparse "
    "constructors and Tensor methods (ember._aten.sparse), not through ember.ops"
)
UNIMPLEMENTED = {
    **dict.fromkeys(
        """_sparse_coo_tensor_with_dims_and_tensors.default
        sparse_compressed_tensor.comp_plain_value_size _to_dense.default _to_sparse.sparse_dim
        _to_sparse.default _to_sparse_csr.default _coalesce.default values.default
        _sparse_addmm.default _sparse_sum.dim _sparse_softmax.default
        _sparse_log_softmax.default""".split(),
        _SPARSE_ONLY,
    ),
    "as_strided.default": "ember has no as_strided: its views are NumPy's (the node is "
    "recorded when a view is regenerated after an in-place write)",
    "as_strided_scatter.default": "ember has no as_strided_scatter (recorded internally, as "
    "as_strided)",
    "_ctc_loss.default": "nn.functional.ctc_loss computes no log_alpha to return",
    "_ctc_loss_backward.default": "ember computes ctc_loss's gradient inside its node",
    "_embedding_bag.default": "nn.functional.embedding_bag returns no offset2bag, bag_size "
    "or max_indices",
    "_trilinear.default": "ember's bilinear records the node from its own contraction",
}


_PROFILER_IMPLS = {
    "_record_function_enter_new.default": _profiler_core._record_function_enter_new,
    "_record_function_enter.default": _profiler_core._record_function_enter_new,
    "_record_function_exit.default": _profiler_core._record_function_exit,
    "_record_function_exit._RecordFunction": _profiler_core._record_function_exit,
}


# -- the schemas: torch's text of every overload ember has ------------------------------------

# Overloads that are no declaration's op but that ember runs (comparisons, factories,
# in-place arithmetic, the functions models call), so that programs written with torch.ops
# find them.
EXTRA = """
eq.Tensor eq.Scalar ne.Tensor ne.Scalar lt.Tensor lt.Scalar le.Tensor le.Scalar gt.Tensor
gt.Scalar ge.Tensor ge.Scalar logical_not.default logical_and.default logical_or.default
bitwise_not.default argmax.default argmin.default any.default all.default ones.default
zeros.default empty.memory_format full.default arange.default arange.start arange.start_step
ones_like.default zeros_like.default empty_like.default full_like.default rand.default
randn.default scalar_tensor.default detach.default sub.Scalar add_.Tensor add_.Scalar
mul_.Tensor mul_.Scalar sub_.Tensor div_.Tensor fill_.Scalar relu_.default matmul.default
linear.default reshape.default contiguous.default softmax.int log_softmax.int dropout.default
conv2d.default layer_norm.default group_norm.default flatten.using_ints chunk.default
narrow.default max_pool2d.default
""".split()

_SCHEMA_TEXT = """
aten::_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, SymInt[] size,
    Tensor indices, Tensor values, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=False, bool? is_coalesced=None) -> Tensor
aten::sparse_compressed_tensor.comp_plain_value_size(Tensor compressed_indices,
    Tensor plain_indices, Tensor values, SymInt[] size, *, ScalarType? dtype=None,
    Layout? layout=None, Device? device=None, bool? pin_memory=False) -> Tensor
aten::_to_dense(Tensor self, ScalarType? dtype=None, bool? masked_grad=None) -> Tensor
aten::_to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor
aten::_to_sparse(Tensor self, *, Layout? layout=None, int[2]? blocksize=None,
    int? dense_dim=None) -> Tensor
aten::_to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor
aten::_coalesce(Tensor self) -> Tensor
aten::values(Tensor(a) self) -> Tensor(a)
aten::_sparse_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
    Scalar alpha=1) -> Tensor
aten::_sparse_sum.dim(Tensor self, int[1] dim) -> Tensor
aten::_sparse_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
aten::_sparse_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
aten::_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor
aten::_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor
aten::_conj(Tensor(a) self) -> Tensor(a)
aten::_conj_physical(Tensor self) -> Tensor
aten::_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths,
    int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)
aten::_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths,
    int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank,
    bool zero_infinity=False) -> Tensor
aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets,
    bool scale_grad_by_freq=False, int mode=0, bool sparse=False,
    Tensor? per_sample_weights=None, bool include_last_offset=False,
    int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)
aten::_euclidean_dist(Tensor x1, Tensor x2) -> Tensor
aten::_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor
aten::_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor
aten::_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor
aten::_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)
aten::_linalg_eigh(Tensor A, str UPLO="L", bool compute_v=True) -> (Tensor eigenvalues,
    Tensor eigenvectors)
aten::_linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)
aten::_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True,
    bool check_errors=False) -> (Tensor result, Tensor LU, Tensor pivots, Tensor info)
aten::_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *,
    str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)
aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
aten::_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)
aten::_pdist_forward(Tensor self, float p=2.) -> Tensor
aten::_prelu_kernel(Tensor self, Tensor weight) -> Tensor
aten::_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)
aten::_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value,
    float dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None,
    float? scale=None) -> (Tensor output, Tensor logsumexp)
aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None, bool non_blocking=False,
    MemoryFormat? memory_format=None) -> Tensor
aten::_trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3,
    int[] sumdim, int unroll_dim=1) -> Tensor
aten::_unique2(Tensor self, bool sorted=True, bool return_inverse=False,
    bool return_counts=False) -> (Tensor, Tensor, Tensor)
aten::_unpack_dual(Tensor(a) dual, int level) -> (Tensor(a) primal, Tensor tangent)
aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor
aten::_upsample_bicubic2d_aa(Tensor self, SymInt[2] output_size, bool align_corners,
    float? scales_h=None, float? scales_w=None) -> Tensor
aten::_upsample_bilinear2d_aa(Tensor self, SymInt[2] output_size, bool align_corners,
    float? scales_h=None, float? scales_w=None) -> Tensor
aten::_upsample_lanczos2d_aa(Tensor self, SymInt[2] output_size, bool align_corners,
    float? scales_h=None, float? scales_w=None) -> Tensor
aten::_upsample_nearest_exact1d(Tensor self, SymInt[1] output_size,
    float? scales=None) -> Tensor
aten::_upsample_nearest_exact2d(Tensor self, SymInt[2] output_size, float? scales_h=None,
    float? scales_w=None) -> Tensor
aten::_upsample_nearest_exact3d(Tensor self, SymInt[3] output_size, float? scales_d=None,
    float? scales_h=None, float? scales_w=None) -> Tensor
aten::abs(Tensor self) -> Tensor
aten::acos(Tensor self) -> Tensor
aten::acosh(Tensor self) -> Tensor
aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)
aten::adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)
aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)
aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1,
    Scalar alpha=1) -> Tensor
aten::affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor
aten::alias(Tensor(a) self) -> Tensor(a)
aten::all(Tensor self) -> Tensor
aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
aten::aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
aten::angle(Tensor self) -> Tensor
aten::any(Tensor self) -> Tensor
aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    bool? pin_memory=None) -> Tensor
aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None) -> Tensor
aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None,
    Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride,
    SymInt? storage_offset=None) -> Tensor(a)
aten::as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride,
    SymInt? storage_offset=None) -> Tensor
aten::asin(Tensor self) -> Tensor
aten::asinh(Tensor self) -> Tensor
aten::atan(Tensor self) -> Tensor
aten::atan2(Tensor self, Tensor other) -> Tensor
aten::atanh(Tensor self) -> Tensor
aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
    bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0,
    bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1,
    Scalar alpha=1) -> Tensor
aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor
aten::bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!)
aten::bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)
aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None,
    int reduction=1) -> Tensor
aten::binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target,
    Tensor? weight=None, int reduction=1) -> Tensor
aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None,
    Tensor? pos_weight=None, int reduction=1) -> Tensor
aten::bitwise_not(Tensor self) -> Tensor
aten::block_diag(Tensor[] tensors) -> Tensor
aten::bmm(Tensor self, Tensor mat2) -> Tensor
aten::cat(Tensor[] tensors, int dim=0) -> Tensor
aten::ceil(Tensor self) -> Tensor
aten::celu(Tensor self, Scalar alpha=1.) -> Tensor
aten::celu_(Tensor(a!) self, Scalar alpha=1.) -> Tensor(a!)
aten::channel_shuffle(Tensor self, SymInt groups) -> Tensor
aten::cholesky(Tensor self, bool upper=False) -> Tensor
aten::cholesky_inverse(Tensor self, bool upper=False) -> Tensor
aten::cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor
aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]
aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor
aten::clamp_max(Tensor self, Scalar max) -> Tensor
aten::clamp_min(Tensor self, Scalar min) -> Tensor
aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation,
    int[2] padding, int[2] stride) -> Tensor
aten::complex(Tensor real, Tensor imag) -> Tensor
aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)
aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1],
    SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor
aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
    SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
    SymInt groups) -> Tensor
aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
aten::copysign.Tensor(Tensor self, Tensor other) -> Tensor
aten::copysign.Scalar(Tensor self, Scalar other) -> Tensor
aten::cos(Tensor self) -> Tensor
aten::cosh(Tensor self) -> Tensor
aten::cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)
aten::cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)
aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
aten::deg2rad(Tensor self) -> Tensor
aten::detach(Tensor(a) self) -> Tensor(a)
aten::diag(Tensor self, int diagonal=0) -> Tensor
aten::diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor
aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
aten::diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor
aten::digamma(Tensor self) -> Tensor
aten::div.Tensor(Tensor self, Tensor other) -> Tensor
aten::div.Scalar(Tensor self, Scalar other) -> Tensor
aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor
aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
aten::dot(Tensor self, Tensor tensor) -> Tensor
aten::dropout(Tensor input, float p, bool train) -> Tensor
aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor
aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)
aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1,
    bool scale_grad_by_freq=False, bool sparse=False) -> Tensor
aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::eq.Tensor(Tensor self, Tensor other) -> Tensor
aten::eq.Scalar(Tensor self, Scalar other) -> Tensor
aten::erf(Tensor self) -> Tensor
aten::erfc(Tensor self) -> Tensor
aten::erfinv(Tensor self) -> Tensor
aten::exp(Tensor self) -> Tensor
aten::exp2(Tensor self) -> Tensor
aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
aten::expm1(Tensor self) -> Tensor
aten::exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)
aten::fill.Scalar(Tensor self, Scalar value) -> Tensor
aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)
aten::flip(Tensor self, int[] dims) -> Tensor
aten::floor(Tensor self) -> Tensor
aten::floor_divide(Tensor self, Tensor other) -> Tensor
aten::fmax(Tensor self, Tensor other) -> Tensor
aten::fmin(Tensor self, Tensor other) -> Tensor
aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor
aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor
aten::frac(Tensor self) -> Tensor
aten::frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)
aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None) -> Tensor
aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None,
    Layout? layout=None, Device? device=None, bool? pin_memory=None,
    MemoryFormat? memory_format=None) -> Tensor
aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
aten::ge.Tensor(Tensor self, Tensor other) -> Tensor
aten::ge.Scalar(Tensor self, Scalar other) -> Tensor
aten::gelu(Tensor self, *, str approximate="none") -> Tensor
aten::glu(Tensor self, int dim=-1) -> Tensor
aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode,
    bool align_corners) -> Tensor
aten::grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode,
    bool align_corners) -> Tensor
aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None,
    float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor
aten::gt.Tensor(Tensor self, Tensor other) -> Tensor
aten::gt.Scalar(Tensor self, Scalar other) -> Tensor
aten::hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor
aten::hardsigmoid(Tensor self) -> Tensor
aten::hardswish(Tensor self) -> Tensor
aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
aten::heaviside(Tensor self, Tensor values) -> Tensor
aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor
aten::hypot(Tensor self, Tensor other) -> Tensor
aten::i0(Tensor self) -> Tensor
aten::igamma(Tensor self, Tensor other) -> Tensor
aten::igammac(Tensor self, Tensor other) -> Tensor
aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding,
    int[2] stride) -> Tensor
aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor
aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor
aten::index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor
aten::index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
aten::index_select(Tensor self, int dim, Tensor index) -> Tensor
aten::kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values,
    Tensor indices)
aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None,
    Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor
aten::ldexp.Tensor(Tensor self, Tensor other) -> Tensor
aten::le.Tensor(Tensor self, Tensor other) -> Tensor
aten::le.Scalar(Tensor self, Scalar other) -> Tensor
aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
aten::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)
aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor
aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor
aten::lgamma(Tensor self) -> Tensor
aten::linalg_cholesky_ex(Tensor self, *, bool upper=False,
    bool check_errors=False) -> (Tensor L, Tensor info)
aten::linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor
aten::linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)
aten::linalg_householder_product(Tensor input, Tensor tau) -> Tensor
aten::linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)
aten::linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *,
    str? driver=None) -> (Tensor solution, Tensor residuals, Tensor rank,
    Tensor singular_values)
aten::linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)
aten::linalg_lu_factor_ex(Tensor A, *, bool pivot=True,
    bool check_errors=False) -> (Tensor LU, Tensor pivots, Tensor info)
aten::linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True,
    bool adjoint=False) -> Tensor
aten::linalg_matrix_exp(Tensor self) -> Tensor
aten::linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None,
    bool hermitian=False) -> Tensor
aten::linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)
aten::linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True,
    bool unitriangular=False) -> Tensor
aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *,
    ScalarType? dtype=None) -> Tensor
aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
aten::log(Tensor self) -> Tensor
aten::log10(Tensor self) -> Tensor
aten::log1p(Tensor self) -> Tensor
aten::log2(Tensor self) -> Tensor
aten::log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)
aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
aten::logaddexp(Tensor self, Tensor other) -> Tensor
aten::logaddexp2(Tensor self, Tensor other) -> Tensor
aten::logcumsumexp(Tensor self, int dim) -> Tensor
aten::logical_and(Tensor self, Tensor other) -> Tensor
aten::logical_not(Tensor self) -> Tensor
aten::logical_or(Tensor self, Tensor other) -> Tensor
aten::logit(Tensor self, float? eps=None) -> Tensor
aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
aten::lt.Tensor(Tensor self, Tensor other) -> Tensor
aten::lt.Scalar(Tensor self, Scalar other) -> Tensor
aten::lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True,
    bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)
aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor
aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor
aten::masked_select(Tensor self, Tensor mask) -> Tensor
aten::matmul(Tensor self, Tensor other) -> Tensor
aten::max(Tensor self) -> Tensor
aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
    int[2] dilation=1, bool ceil_mode=False) -> Tensor
aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[],
    int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[],
    int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
aten::max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor
aten::max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride,
    int[3] padding) -> Tensor
aten::maximum(Tensor self, Tensor other) -> Tensor
aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *,
    ScalarType? dtype=None) -> Tensor
aten::median(Tensor self) -> Tensor
aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::nanmedian(Tensor self) -> Tensor
aten::nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values,
    Tensor indices)
aten::mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::dist(Tensor self, Tensor other, Scalar p=2) -> Tensor
aten::renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor
aten::min(Tensor self) -> Tensor
aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
aten::minimum(Tensor self, Tensor other) -> Tensor
aten::mish(Tensor self) -> Tensor
aten::mm(Tensor self, Tensor mat2) -> Tensor
aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
aten::mul.Tensor(Tensor self, Tensor other) -> Tensor
aten::mul.Scalar(Tensor self, Scalar other) -> Tensor
aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
aten::multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1,
    Tensor? weight=None, int reduction=1) -> Tensor
aten::multilabel_margin_loss_forward(Tensor self, Tensor target,
    int reduction) -> (Tensor output, Tensor is_target)
aten::mv(Tensor self, Tensor vec) -> Tensor
aten::mvlgamma(Tensor self, int p) -> Tensor
aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor
aten::nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *,
    ScalarType? dtype=None) -> Tensor
aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)
aten::narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor
aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,
    Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C,
    SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)
aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias,
    float eps) -> (Tensor, Tensor, Tensor)
aten::ne.Tensor(Tensor self, Tensor other) -> Tensor
aten::ne.Scalar(Tensor self, Scalar other) -> Tensor
aten::neg(Tensor self) -> Tensor
aten::nextafter(Tensor self, Tensor other) -> Tensor
aten::nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction,
    SymInt ignore_index) -> (Tensor output, Tensor total_weight)
aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction,
    SymInt ignore_index) -> (Tensor output, Tensor total_weight)
aten::normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor
aten::normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor
aten::normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor
aten::normal_(Tensor(a!) self, float mean=0., float std=1., *,
    Generator? generator=None) -> Tensor(a!)
aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    bool? pin_memory=None) -> Tensor
aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)
aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor
aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor
aten::polar(Tensor abs, Tensor angle) -> Tensor
aten::polygamma(int n, Tensor self) -> Tensor
aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor
aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *,
    ScalarType? dtype=None) -> Tensor
aten::rad2deg(Tensor self) -> Tensor
aten::rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    bool? pin_memory=None) -> Tensor
aten::randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None) -> Tensor
aten::random_.from(Tensor(a!) self, int from, int? to, *,
    Generator? generator=None) -> Tensor(a!)
aten::random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)
aten::reciprocal(Tensor self) -> Tensor
aten::reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor
aten::reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor
aten::reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor
aten::relu(Tensor self) -> Tensor
aten::relu_(Tensor(a!) self) -> Tensor(a!)
aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor
aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor
aten::repeat(Tensor self, SymInt[] repeats) -> Tensor
aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *,
    SymInt? output_size=None) -> Tensor
aten::replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor
aten::replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor
aten::replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor
aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor
aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor
aten::round(Tensor self) -> Tensor
aten::round.decimals(Tensor self, *, int decimals) -> Tensor
aten::rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125,
    Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor
aten::rrelu_with_noise_(Tensor(a!) self, Tensor(b!) noise, Scalar lower=0.125,
    Scalar upper=0.33333333333333331, bool training=False,
    Generator? generator=None) -> Tensor(a!)
aten::rsqrt(Tensor self) -> Tensor
aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None) -> Tensor
aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor
aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src,
    str reduce, *, bool include_self=True) -> Tensor
aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor
aten::sigmoid(Tensor self) -> Tensor
aten::sign(Tensor self) -> Tensor
aten::sgn(Tensor self) -> Tensor
aten::silu(Tensor self) -> Tensor
aten::sin(Tensor self) -> Tensor
aten::sinc(Tensor self) -> Tensor
aten::sinh(Tensor self) -> Tensor
aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None,
    SymInt step=1) -> Tensor(a)
aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None,
    SymInt step=1) -> Tensor
aten::smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor
aten::soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
aten::softshrink(Tensor self, Scalar lambd=0.5) -> Tensor
aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
aten::sort.stable(Tensor self, *, bool? stable, int dim=-1,
    bool descending=False) -> (Tensor values, Tensor indices)
aten::special_entr(Tensor self) -> Tensor
aten::special_erfcx(Tensor self) -> Tensor
aten::special_i0e(Tensor self) -> Tensor
aten::special_i1(Tensor self) -> Tensor
aten::special_i1e(Tensor self) -> Tensor
aten::special_log_ndtr(Tensor self) -> Tensor
aten::special_ndtr(Tensor self) -> Tensor
aten::special_ndtri(Tensor self) -> Tensor
aten::special_xlog1py(Tensor self, Tensor other) -> Tensor
aten::special_zeta(Tensor self, Tensor other) -> Tensor
aten::special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor
aten::special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor
aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]
aten::unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]
aten::sqrt(Tensor self) -> Tensor
aten::square(Tensor self) -> Tensor
aten::squeeze(Tensor(a) self) -> Tensor(a)
aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
aten::squeeze_(Tensor(a!) self) -> Tensor(a!)
aten::squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)
aten::squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)
aten::stack(Tensor[] tensors, int dim=0) -> Tensor
aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
    bool keepdim=False) -> Tensor
aten::std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
    bool keepdim=False) -> (Tensor, Tensor)
aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *,
    ScalarType? dtype=None) -> Tensor
aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::t(Tensor(a) self) -> Tensor(a)
aten::t_(Tensor(a!) self) -> Tensor(a!)
aten::put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor
aten::take(Tensor self, Tensor index) -> Tensor
aten::tan(Tensor self) -> Tensor
aten::tanh(Tensor self) -> Tensor
aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor
aten::threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)
aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True,
    bool sorted=True) -> (Tensor values, Tensor indices)
aten::trace(Tensor self) -> Tensor
aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
aten::transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)
aten::triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False,
    bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)
aten::tril(Tensor self, SymInt diagonal=0) -> Tensor
aten::triu(Tensor self, SymInt diagonal=0) -> Tensor
aten::trunc(Tensor self) -> Tensor
aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]
aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)
aten::unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size,
    int step) -> Tensor
aten::uniform_(Tensor(a!) self, float from=0., float to=1., *,
    Generator? generator=None) -> Tensor(a!)
aten::unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False,
    int? dim=None) -> (Tensor, Tensor, Tensor)
aten::unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False,
    bool return_counts=False) -> (Tensor, Tensor, Tensor)
aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
aten::unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)
aten::upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners,
    float? scales_h=None, float? scales_w=None) -> Tensor
aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners,
    float? scales_h=None, float? scales_w=None) -> Tensor
aten::upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners,
    float? scales=None) -> Tensor
aten::upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor
aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None,
    float? scales_w=None) -> Tensor
aten::upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None,
    float? scales_h=None, float? scales_w=None) -> Tensor
aten::upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners,
    float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor
aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
    bool keepdim=False) -> Tensor
aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None,
    bool keepdim=False) -> (Tensor, Tensor)
aten::vdot(Tensor self, Tensor other) -> Tensor
aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
aten::view_as_complex(Tensor(a) self) -> Tensor(a)
aten::view_as_real(Tensor(a) self) -> Tensor(a)
aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
aten::xlogy.Tensor(Tensor self, Tensor other) -> Tensor
aten::xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor
aten::xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor
aten::zero_(Tensor(a!) self) -> Tensor(a!)
aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None) -> Tensor
aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,
    Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
profiler::_record_function_enter(str name, str? args=None) -> Tensor
profiler::_record_function_enter_new(str name,
    str? args=None) -> __torch__.torch.classes.profiler._RecordFunction
profiler::_record_function_exit(Tensor handle) -> ()
profiler::_record_function_exit._RecordFunction(__torch__.torch.classes.profiler._RecordFunction
    record) -> ()
"""

_SCHEMAS: dict = {}


def _schemas() -> dict:
    """{namespace: {op name: {overload name: schema text}}} (parsed once)."""
    if not _SCHEMAS:
        with _LOCK:
            if not _SCHEMAS:
                table: dict = {}
                # a schema continues on the lines indented below it
                text = re.sub(r"\n\s+", " ", _SCHEMA_TEXT.strip())
                for line in text.splitlines():
                    head = line.split("(", 1)[0]
                    qualified, _, overload = head.partition(".")
                    namespace, _, name = qualified.partition("::")
                    ops_ = table.setdefault(namespace, {}).setdefault(name, {})
                    ops_[overload or "default"] = line
                _SCHEMAS.update(table)
    return _SCHEMAS


# record_function enters and leaves its ranges through these ops, as torch's does.
_profiler_core._range_ops[:] = [
    profiler._record_function_enter_new,
    profiler._record_function_exit._RecordFunction,
]

# ``ember.ops`` is itself the ops object (torch's ``torch.ops`` is an ``_Ops``): its
# attributes are these module globals plus the namespaces made on first use.
ops = sys.modules[__name__]
ops.__class__ = _Ops
