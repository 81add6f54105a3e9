"""Variable-length sequences for recurrent layers (torch.nn.utils.rnn): ``PackedSequence``,
packing, padding and their inverses.

A packed sequence stores a batch of sequences sorted by decreasing length time step by
time step: ``data`` holds step 0 of every sequence, then step 1 of those still running, and
so on; ``batch_sizes[t]`` says how many sequences are running at step ``t``. When the
batch was not sorted (``enforce_sorted=False``), ``sorted_indices`` gives the batch order
used and ``unsorted_indices`` its inverse.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ... import _creation, _overrides
from ... import _dtype as _dtypes
from ..._aten._core import intp, record
from ..._aten.nn_rnn import PackPaddedSequenceBackward0, _long, _pack_forward
from ..._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]

_wrap = Tensor._wrap


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """A batch of variable-length sequences packed time step by time step (see the module
    docstring). Made by :func:`pack_padded_sequence` / :func:`pack_sequence`, accepted by
    ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU``, undone by :func:`pad_packed_sequence`.

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([ember.tensor([1.0, 2.0, 3.0]), ember.tensor([4.0])])
        >>> p.data, p.batch_sizes
        (tensor([1., 4., 2., 3.]), tensor([2, 1, 1]))
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(
            cls, *_init_args(data, batch_sizes, sorted_indices, unsorted_indices)
        )

    def pin_memory(self):
        """The same sequence: ember has no pinned memory (torch raises without a GPU)."""
        return self

    def to(self, *args, **kwargs):
        """``data.to(*args, **kwargs)``; the indices follow the data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_dtypes.float64)

    def float(self):
        return self.to(dtype=_dtypes.float32)

    def half(self):
        return self.to(dtype=_dtypes.float16)

    def long(self):
        return self.to(dtype=_dtypes.int64)

    def int(self):
        return self.to(dtype=_dtypes.int32)

    def short(self):
        return self.to(dtype=_dtypes.int16)

    def char(self):
        return self.to(dtype=_dtypes.int8)

    def byte(self):
        return self.to(dtype=_dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether the data is on a CUDA device (never, in ember)."""
        return self.data.is_cuda


def _init_args(data, batch_sizes, sorted_indices, unsorted_indices) -> tuple:
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of an index permutation (None stays None).

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import invert_permutation
        >>> invert_permutation(ember.tensor([2, 0, 1]))
        tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    perm = np.asarray(permutation._data)
    out = np.empty_like(perm)
    out[perm] = np.arange(perm.size, dtype=perm.dtype)
    return _wrap(out)


# -- packing ---------------------------------------------------------------------------------


def _pack_index(lengths: np.ndarray) -> tuple:
    """(time, batch) of each packed row, time-major, for lengths sorted decreasingly."""
    steps = int(lengths[0]) if lengths.size else 0
    t = np.arange(steps)
    active = t[:, None] < lengths[None, :]  # (T, B)
    ti, bi = np.nonzero(active)
    return ti, bi


def _lengths_array(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        a = np.asarray(lengths._data)
        if a.ndim != 1:
            raise RuntimeError(
                "'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{a.ndim}D cpu {_type_word(a)} tensor"
            )
        return a.astype(np.int64)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _type_word(a: np.ndarray) -> str:
    words = {"int64": "Long", "int32": "Int", "float32": "Float", "float64": "Double"}
    return words.get(a.dtype.name, a.dtype.name.capitalize())


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    of the given ``lengths``.

    With ``enforce_sorted`` (the default) the lengths must decrease; otherwise the batch is
    sorted first and the order kept in ``sorted_indices`` / ``unsorted_indices``.

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import pack_padded_sequence
        >>> x = ember.tensor([[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]])  # (T=3, B=2)
        >>> pack_padded_sequence(x, [3, 1]).data
        tensor([1., 4., 2., 3.])
    """
    lens = _lengths_array(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = _long(order)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    batch = input.shape[0 if batch_first else 1]
    if lens.size != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
            f"(batch_size={batch})"
        )
    if lens.size and int(lens[-1]) <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    if np.any(lens[1:] > lens[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX exportability."
        )
    steps = input.shape[1 if batch_first else 0]
    if lens.size and int(lens[0]) > steps:
        raise RuntimeError(
            f"Expected the longest length ({int(lens[0])}) to be at most the padded "
            f"sequence length ({steps})"
        )
    index = _pack_index(lens)
    params = (index, tuple(input.shape), bool(batch_first))
    data = record(
        PackPaddedSequenceBackward0, _pack_forward(input._data, *params), (input,), params
    )
    batch_sizes = _long(np.bincount(intp(index[0]), minlength=int(lens[0]) if lens.size else 0))
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)`` with the padded batch
    ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) in the original batch order.

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import pack_sequence, pad_packed_sequence
        >>> p = pack_sequence([ember.tensor([1.0, 2.0]), ember.tensor([3.0])])
        >>> pad_packed_sequence(p, batch_first=True)
        (tensor([[1., 2.],
                [3., 0.]]), tensor([2, 1]))
    """
    sizes = np.asarray(sequence.batch_sizes._data, dtype=np.int64)
    max_seq_length = sizes.size
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    batch = int(sizes[0]) if sizes.size else 0
    lens = (sizes[:, None] > np.arange(batch)[None, :]).sum(0).astype(np.int64)
    ti, bi = _pack_index(lens)
    trail = tuple(data.shape[1:])
    padded = _creation.full((max_seq_length, batch) + trail, padding_value, dtype=data.dtype)
    padded[_long(ti), _long(bi)] = data
    if batch_first:  # torch pads time-major, then transposes (a TransposeBackward0 view)
        padded = padded.transpose(0, 1)
    lengths = _long(lens)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = _long(lens[np.asarray(unsorted._data)])
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shapes ``(L_i, *)`` into one ``(max L, B, *)`` tensor
    (``(B, max L, *)`` with ``batch_first``), padded with ``padding_value`` on
    ``padding_side``.

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import pad_sequence
        >>> pad_sequence([ember.tensor([1.0, 2.0]), ember.tensor([3.0])], batch_first=True)
        tensor([[1., 2.],
                [3., 0.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    trail = tuple(first.shape[1:])
    for s in sequences[1:]:
        other = tuple(s.shape[1:])
        if other != trail:
            for k in range(1, 1 + min(len(trail), len(other))):
                if other[-k] != trail[-k] and 1 not in (other[-k], trail[-k]):
                    dim = len(trail) - k + 1
                    raise RuntimeError(
                        f"The size of tensor a ({trail[-k]}) must match the size of tensor b "
                        f"({other[-k]}) at non-singleton dimension {dim}"
                    )
    max_len = max(s.shape[0] for s in sequences)
    n = len(sequences)
    shape = ((n, max_len) if batch_first else (max_len, n)) + trail
    out = _creation.full(shape, padding_value, dtype=first.dtype)
    for i, s in enumerate(sequences):
        length = s.shape[0]
        rows = slice(0, length) if padding_side == "right" else slice(max_len - length, max_len)
        if batch_first:
            out[i, rows] = s
        else:
            out[rows, i] = s
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences (a list of ``(L_i, *)`` tensors).

    Unlike torch, the argument is not transposed in place when ``batch_first`` is False.

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import unpad_sequence
        >>> x = ember.tensor([[1.0, 2.0], [3.0, 0.0]])
        >>> unpad_sequence(x, ember.tensor([2, 1]), batch_first=True)
        [tensor([1., 2.]), tensor([3.])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    max_length = padded_sequences.shape[1]
    idx = _creation.arange(max_length)
    lens = lengths if isinstance(lengths, Tensor) else _long(lengths)
    if len(padded_sequences) != len(lens):
        raise ValueError(
            "zip() argument 2 is "
            + ("shorter" if len(lens) < len(padded_sequences) else "longer")
            + " than argument 1"
        )
    return [seq[idx < length] for seq, length in zip(padded_sequences, lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences of shapes ``(L_i, *)`` (see :func:`pack_padded_sequence`).

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import pack_sequence
        >>> pack_sequence([ember.tensor([1.0]), ember.tensor([2.0, 3.0])],
        ...               enforce_sorted=False).sorted_indices
        tensor([1, 0])
    """
    lengths = _long([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Undo :func:`pack_sequence`: the list of sequences, in the original order.

    Example:
        >>> import ember
        >>> from ember.nn.utils.rnn import pack_sequence, unpack_sequence
        >>> unpack_sequence(pack_sequence([ember.tensor([1.0, 2.0]), ember.tensor([3.0])]))
        [tensor([1., 2.]), tensor([3.])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


# The packing functions dispatch through __torch_function__ (ember._overrides): a Tensor
# subclass stays one through them, as through torch's _pack_padded_sequence op.
_overrides.install_namespace(
    globals(),
    [n for n in __all__ if n.endswith(("_sequence", "sequences"))],
    "torch.nn.utils.rnn",
)
