"""dtype objects that mirror ``torch.dtype`` and map onto NumPy dtypes."""

from __future__ import annotations

import numpy as np

from . import _tensor_str


class dtype:
    """A tensor element type, printed as PyTorch prints it (``torch.float32``).

    Example:
        >>> import ember
        >>> ember.float32.is_floating_point
        True
    """

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name: str, np_dtype: np.dtype) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        k = kind(self.np)
        self.is_floating_point = k == "f"
        self.is_complex = k == "c"
        self.is_signed = k in "fic"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        # Tutorials print dtypes; users expect PyTorch's spelling.
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        return {"complex64": float32, "complex128": float64}.get(self.name, self)


# torch's floating dtypes that NumPy lacks, made from ml_dtypes' types on first use.
ML_NAMES = frozenset(
    """bfloat16 float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz
    float8_e8m0fnu""".split()
)


def kind(np_dtype: np.dtype) -> str:
    """NumPy's kind letter, with ml_dtypes' floats (kind "V") counted as floats ("f")."""
    k = np_dtype.kind
    return "f" if k == "V" and np_dtype.name in ML_NAMES else k


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
uint8 = dtype("uint8", np.uint8)
# torch's "shell" unsigned types: creation, casting, copying, printing, a few kernels
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool = dtype("bool", np.bool_)  # noqa: A001 - torch exposes ember.bool

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL = (
    float16,
    float32,
    float64,
    complex64,
    complex128,
    uint8,
    int8,
    int16,
    int32,
    int64,
    bool,
    uint16,
    uint32,
    uint64,
)
# torch refuses to promote these with any other dtype (and has few kernels for them)
UNSIGNED_SHELL = frozenset(np.dtype(t) for t in (np.uint16, np.uint32, np.uint64))
_FROM_NP = {d.np: d for d in ALL}
_NAMES = {d.name: d for d in ALL}


def _by_name(name: str) -> dtype:
    if name in ML_NAMES:
        return ml_dtype(name)
    return _NAMES[name]


_BF16 = []


def ml_dtype(name: str) -> dtype:
    """``torch.<name>`` for a float type NumPy lacks (bfloat16, the float8 types), made on
    first use from ml_dtypes' type (imported then, not at ``import ember``). float8 tensors
    are for storage and conversion, as in torch (whose CPU ops mostly refuse them).

    Example:
        >>> import ember
        >>> ember.tensor([0.3, 448.0]).to(ember.float8_e4m3fn).float()
        tensor([  0.3125, 448.0000])
    """
    if name == "bfloat16":
        return _bfloat16()
    made = _NAMES.get(name)
    if made is not None:
        return made
    ml_dtypes = _import_ml_dtypes(name)
    np_type = getattr(ml_dtypes, name, None)
    if np_type is None:
        raise AttributeError(f"torch.{name} needs a newer ml_dtypes (it has no {name})")
    d = dtype(name, np_type)
    _FROM_NP[d.np] = d
    _NAMES[name] = d
    return d


def _import_ml_dtypes(name: str):
    try:
        import ml_dtypes  # deferred: `import ember` must not load ml_dtypes
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"torch.{name} needs the ml_dtypes package (NumPy's {name} type), which is not "
            f"installed: pip install ml_dtypes (it has no WebAssembly build: {name} is not "
            "available under Pyodide)",
            name="ml_dtypes",
        ) from None
    return ml_dtypes


def _bfloat16() -> dtype:
    """``torch.bfloat16``, made on first use (ml_dtypes is imported then, not at import)."""
    if _BF16:
        return _BF16[0]
    ml_dtypes = _import_ml_dtypes("bfloat16")

    d = dtype("bfloat16", ml_dtypes.bfloat16)
    _BF16.append(d)
    _FROM_NP[d.np] = d
    _NAMES[d.name] = d
    return d


def __getattr__(name: str):
    if name in ML_NAMES:
        return ml_dtype(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def from_numpy_dtype(np_dtype) -> dtype:
    """The ember dtype for a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        pass
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        name = _ml_name(np_dtype)
        if name is not None:
            return ml_dtype(name)
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint64, uint32, uint16, uint8, and bool."
        ) from None


def to_numpy_dtype(d) -> np.dtype:
    """Accept an ember dtype, a NumPy dtype or a Python type and return the NumPy dtype."""
    if type(d) is dtype:
        return d.np
    if d is builtins_float:
        return _default[0].np
    if d is builtins_int:
        return np.dtype(np.int64)
    if d is builtins_bool:
        return np.dtype(np.bool_)
    if isinstance(d, str) and d in ML_NAMES:
        return ml_dtype(d).np
    return np.dtype(d)


def _ml_name(x) -> str | None:
    """The name of the ml_dtypes float type ``x`` names (a string, the type or its NumPy
    dtype), or None."""
    name = x if isinstance(x, str) else getattr(x, "__name__", None) or getattr(x, "name", None)
    return name if name in ML_NAMES else None


import builtins as _builtins  # noqa: E402

builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool

_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype given to tensors made from Python floats (``float32`` unless changed).

    Example:
        >>> import ember
        >>> ember.get_default_dtype()
        torch.float32
    """
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the floating dtype used for Python floats; only float32/float64 (and float16).

    Example:
        >>> import ember
        >>> ember.set_default_dtype(ember.float64)
        >>> ember.tensor([1.5]).dtype
        torch.float64
        >>> ember.set_default_dtype(ember.float32)
    """
    if type(d) is not dtype or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d
    _tensor_str.set_default_numpy_dtype(d.np)


# torch's ScalarType names (its dtype error messages) and the C++ types some messages print.
SCALAR_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint64": "UInt64",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "bfloat16": "BFloat16",
    "float8_e4m3fn": "Float8_e4m3fn",
    "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz",
    "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}
CPP_NAMES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
    "bfloat16": "c10::BFloat16",
}


def _name_of(d) -> str:
    if isinstance(d, str):
        return d
    if type(d) is dtype:
        return d.name
    return np.dtype(d).name


def scalar_name(d) -> str:
    """torch's ScalarType name of a dtype ("Float", "Long", ...), for error messages."""
    name = _name_of(d)
    return SCALAR_NAMES.get(name, name)


def cpp_name(d) -> str:
    """The C++ type name torch prints for a dtype ("float", "long int", ...)."""
    name = _name_of(d)
    return CPP_NAMES.get(name, name)


# torch's promotion lattice: bool < integers < floats < complex, within a category by width.
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def category(np_dtype: np.dtype) -> _builtins.int:
    return _CATEGORY[kind(np_dtype)]
