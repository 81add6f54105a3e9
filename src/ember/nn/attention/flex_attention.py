"""``torch.nn.attention.flex_attention``: attention with a user ``score_mod`` and a block mask.

ember computes flex attention by torch's math path: ``scores = q @ k^T * scale`` (in
float32, or float64 for float64 inputs), ``score_mod`` applied to every score, the mask of
``block_mask`` (its ``mask_mod`` and its block structure) applied as ``-inf``, a softmax
whose fully masked rows are zero, then ``@ v``. Everything is ember ops, so gradients
flow to the query, key, value and any tensors ``score_mod`` closes over (torch's CPU
build refuses backward here; its GPU kernels compute it). The mods are called once on
broadcasting index tensors (``b`` shaped ``(B, 1, 1, 1)``, ``h`` ``(1, H, 1, 1)``,
``q_idx`` ``(1, 1, Q, 1)``, ``kv_idx`` ``(1, 1, 1, KV)``), which gives what torch's
``vmap`` over the four indices gives for elementwise mods and for mods that index tensors.

Example:
    >>> import ember
    >>> from ember.nn.attention.flex_attention import create_block_mask, flex_attention
    >>> def causal(b, h, q_idx, kv_idx):
    ...     return q_idx >= kv_idx
    >>> mask = create_block_mask(causal, None, None, 4, 4, BLOCK_SIZE=2)
    >>> q = k = v = ember.ones(1, 1, 4, 2)
    >>> flex_attention(q, k, v, block_mask=mask).shape
    torch.Size([1, 1, 4, 2])
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import warnings
from typing import NamedTuple, TypedDict

from ... import _torch as ember  # torch's namespace: the ops the math path is made of
from .. import functional as _F

__all__ = [
    "AuxOutput",
    "AuxRequest",
    "BlockMask",
    "FlexKernelOptions",
    "and_masks",
    "create_block_mask",
    "create_mask",
    "flex_attention",
    "noop_mask",
    "or_masks",
]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30
_WARNED: set = set()


class FlexKernelOptions(TypedDict, total=False):
    """Options for torch's generated kernels (``BACKEND``, block sizes, ...). ember's math
    path reads only ``BACKEND`` (checked against torch's values); the rest are accepted.

    Example:
        >>> from ember.nn.attention.flex_attention import FlexKernelOptions
        >>> FlexKernelOptions(BACKEND="AUTO")
        {'BACKEND': 'AUTO'}
    """

    BACKEND: str
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    BLOCK_M: int
    BLOCK_N: int
    num_warps: int
    num_stages: int


_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")


class AuxRequest(NamedTuple):
    """Which auxiliary outputs :func:`flex_attention` returns (``lse``, ``max_scores``).

    Example:
        >>> from ember.nn.attention.flex_attention import AuxRequest
        >>> AuxRequest(lse=True)
        AuxRequest(lse=True, max_scores=False)
    """

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs :func:`flex_attention` computed (``None`` where not requested).

    Example:
        >>> from ember.nn.attention.flex_attention import AuxOutput
        >>> AuxOutput()
        AuxOutput(lse=None, max_scores=None)
    """

    lse: object = None
    max_scores: object = None


def _identity(score, batch, head, token_q, token_kv):
    return score


def noop_mask(batch, head, token_q, token_kv):
    """The mask_mod that masks nothing: a 0-d ``True``.

    Example:
        >>> import ember
        >>> from ember.nn.attention.flex_attention import noop_mask
        >>> i = ember.tensor(0)
        >>> noop_mask(i, i, i, i)
        tensor(True)
    """
    return batch.new_ones((), dtype=ember.bool)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], "
        "the mask_mod attribute is reset. You must set it from the original BlockMask's "
        "mask_mod."
    )


def or_masks(*mask_mods):
    """The mask_mod that keeps a position when any of ``mask_mods`` keeps it.

    Example:
        >>> import ember
        >>> from ember.nn.attention.flex_attention import create_mask, or_masks
        >>> diag = or_masks(lambda b, h, q, kv: q == kv, lambda b, h, q, kv: kv == 0)
        >>> create_mask(diag, 1, 1, 2, 2).int()
        tensor([[[[1, 0],
                  [1, 1]]]], dtype=torch.int32)
    """
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=ember.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods):
    """The mask_mod that keeps a position when all of ``mask_mods`` keep it.

    Example:
        >>> import ember
        >>> from ember.nn.attention.flex_attention import and_masks, create_mask
        >>> m = and_masks(lambda b, h, q, kv: q >= kv, lambda b, h, q, kv: kv > 0)
        >>> create_mask(m, 1, 1, 2, 2).int()
        tensor([[[[0, 0],
                  [0, 1]]]], dtype=torch.int32)
    """
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=ember.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _num_positional(fn) -> int:
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    import inspect

    return sum(
        1 for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty
    )


def _is_score_mod(fn) -> bool:
    n = _num_positional(fn)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return n == 5


def _indices(B: int, H: int, Q: int, KV: int) -> tuple:
    """The index tensors the mods receive, shaped to broadcast to ``(B, H, Q, KV)``."""
    return (
        ember.arange(B).view(B, 1, 1, 1),
        ember.arange(H).view(1, H, 1, 1),
        ember.arange(Q).view(1, 1, Q, 1),
        ember.arange(KV).view(1, 1, 1, KV),
    )


def _mask_of(mask_mod, B: int, H: int, Q: int, KV: int):
    out = mask_mod(*_indices(B, H, Q, KV))
    if not isinstance(out, ember.Tensor):
        out = ember.tensor(out)
    return out.expand(B, H, Q, KV)


def create_mask(mod_fn, B, H, Q_LEN: int, KV_LEN: int, device=None):
    """The dense ``(B, H, Q_LEN, KV_LEN)`` boolean mask of a mask_mod (True: attend) or of a
    score_mod (True where it does not give ``-inf``); ``B``/``H`` of None mean 1.

    Example:
        >>> from ember.nn.attention.flex_attention import create_mask
        >>> create_mask(lambda b, h, q, kv: q >= kv, None, None, 2, 2)
        tensor([[[[ True, False],
                  [ True,  True]]]])
    """
    B = 1 if B is None else B
    H = 1 if H is None else H
    if _is_score_mod(mod_fn):
        out = mod_fn(ember.zeros(B, H, Q_LEN, KV_LEN), *_indices(B, H, Q_LEN, KV_LEN))
        out = out.expand(B, H, Q_LEN, KV_LEN)
        return ember.where(ember.isneginf(out), False, True)
    return _mask_of(mod_fn, B, H, Q_LEN, KV_LEN)


def _ordered_to_dense(num_blocks, indices, num_cols: int):
    """Dense ``(..., rows, num_cols)`` int32 block mask from (num_blocks, indices)."""
    max_entries = indices.shape[-1]
    valid = ember.arange(max_entries) < num_blocks.unsqueeze(-1)
    where = ember.where(valid, indices.long(), num_cols)
    dense = ember.zeros(*indices.shape[:-1], num_cols + 1, dtype=ember.int32)
    dense = dense.scatter(-1, where, 1)
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense):
    dense = dense.to(ember.int32)
    num_blocks = dense.sum(dim=-1).to(ember.int32)
    indices = ember.argsort(dense, dim=-1, descending=True, stable=True).to(ember.int32)
    return num_blocks, indices


def _transpose_ordered(num_blocks, indices):
    dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(num_blocks, indices, new_num_rows: int, new_num_cols: int):
    indices = indices[:, :, :new_num_rows, :new_num_cols]
    num_blocks = num_blocks[:, :, :new_num_rows]
    num_blocks = ember.where(num_blocks < new_num_cols, num_blocks, new_num_cols)
    num_blocks = ember.sum(indices < num_blocks[:, :, :, None], dim=-1).to(ember.int32)
    return num_blocks, indices


class BlockMask:
    """torch's block-sparse attention mask: for each ``(batch, head, query block)`` row, how
    many key/value blocks are computed (``kv_num_blocks``) and which (``kv_indices``), with
    the fully unmasked blocks apart (``full_kv_*``) and the transposed structure for the
    backward pass (``q_*``); ``mask_mod`` is the elementwise mask inside the blocks.

    Example:
        >>> from ember.nn.attention.flex_attention import create_block_mask
        >>> m = create_block_mask(lambda b, h, q, kv: q >= kv, 1, 1, 4, 4, BLOCK_SIZE=2)
        >>> m.shape, m.kv_num_blocks.tolist(), m.full_kv_num_blocks.tolist()
        ((1, 1, 4, 4), [[[1, 1]]], [[[0, 1]]])
        >>> m.to_dense().tolist()
        [[[[1, 0], [1, 1]]]]
    """

    _TENSOR_ATTRS = [
        "kv_num_blocks",
        "kv_indices",
        "full_kv_num_blocks",
        "full_kv_indices",
        "q_num_blocks",
        "q_indices",
        "full_q_num_blocks",
        "full_q_indices",
        "dq_write_order",
        "dq_write_order_full",
        "dq_kv_order",
    ]

    def __init__(
        self,
        seq_lengths,
        kv_num_blocks,
        kv_indices,
        full_kv_num_blocks,
        full_kv_indices,
        q_num_blocks,
        q_indices,
        full_q_num_blocks,
        full_q_indices,
        BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
        mask_mod=noop_mask,
        *,
        dq_write_order=None,
        dq_write_order_full=None,
        dq_kv_order=None,
        dq_kv_order_spt=None,
    ) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError(
                "full_q_num_blocks and full_q_indices must be both provided or omitted"
            )
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.dq_write_order = dq_write_order
        self.dq_write_order_full = dq_write_order_full
        self.dq_kv_order = dq_kv_order
        self.dq_kv_order_spt = dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(
        cls,
        kv_num_blocks,
        kv_indices,
        full_kv_num_blocks=None,
        full_kv_indices=None,
        BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
        mask_mod=None,
        seq_lengths=None,
        compute_q_blocks: bool = True,
        *,
        dq_write_order=None,
        dq_write_order_full=None,
        dq_kv_order=None,
    ) -> BlockMask:
        """A BlockMask from its key/value block structure; the query-side structure is
        computed by transposing it (``compute_q_blocks``).

        Example:
            >>> import ember
            >>> from ember.nn.attention.flex_attention import BlockMask
            >>> m = BlockMask.from_kv_blocks(
            ...     ember.tensor([[1, 2]], dtype=ember.int32),
            ...     ember.tensor([[[0, 1], [0, 1]]], dtype=ember.int32),
            ...     BLOCK_SIZE=2,
            ... )
            >>> m.shape, m.q_num_blocks.tolist()
            ((1, 4, 4), [[2, 1]])
        """
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(
                    full_kv_num_blocks, full_kv_indices
                )
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        mask_mod = mask_mod if mask_mod is not None else noop_mask
        if seq_lengths is None:
            seq_lengths = (
                kv_indices.shape[-2] * BLOCK_SIZE[0],
                kv_indices.shape[-1] * BLOCK_SIZE[1],
            )
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, ember.Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(
            seq_lengths=seq_lengths,
            kv_num_blocks=kv_num_blocks,
            kv_indices=kv_indices,
            full_kv_num_blocks=full_kv_num_blocks,
            full_kv_indices=full_kv_indices,
            q_num_blocks=q_num_blocks,
            q_indices=q_indices,
            full_q_num_blocks=full_q_num_blocks,
            full_q_indices=full_q_indices,
            BLOCK_SIZE=BLOCK_SIZE,
            mask_mod=mask_mod,
            dq_write_order=dq_write_order,
            dq_write_order_full=dq_write_order_full,
            dq_kv_order=dq_kv_order if isinstance(dq_kv_order, ember.Tensor) else None,
            dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None,
        )

    def as_tuple(self, flatten: bool = True) -> tuple:
        """The mask's fields as a tuple (``BLOCK_SIZE`` and ``seq_lengths`` spread when
        ``flatten``), ``mask_mod`` last."""
        if flatten:
            block_size, seq_lengths = tuple(self.BLOCK_SIZE), tuple(self.seq_lengths)
        else:
            block_size, seq_lengths = (self.BLOCK_SIZE,), (self.seq_lengths,)
        return (
            *seq_lengths,
            self.kv_num_blocks,
            self.kv_indices,
            self.full_kv_num_blocks,
            self.full_kv_indices,
            self.q_num_blocks,
            self.q_indices,
            self.full_q_num_blocks,
            self.full_q_indices,
            self.dq_write_order,
            self.dq_write_order_full,
            self.dq_kv_order,
            self.dq_kv_order_spt,
            *block_size,
            self.mask_mod,
        )

    @property
    def shape(self) -> tuple:
        """The mask's batch dimensions followed by ``(Q_LEN, KV_LEN)``."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def __str__(self) -> str:
        return (
            f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
            + self.to_string().strip()
            + "\n)"
        )

    def __repr__(self) -> str:
        def shape_or_none(x):
            return x.shape if x is not None else None

        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (
            "BlockMask(\n"
            f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
            f"    kv_indices={self.kv_indices.shape},\n"
            f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
            f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
            f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
            f"    q_indices={shape_or_none(self.q_indices)},\n"
            f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
            f"    full_q_indices={shape_or_none(self.full_q_indices)},\n"
            f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
            f"    shape={self.shape},\n"
            f"    sparsity={self.sparsity():.2f}%,\n"
            f"    mask_mod={name}\n"
            ")"
        )

    def __getitem__(self, index) -> BlockMask:
        """The mask of the selected batches, heads and query blocks (its ``mask_mod`` can
        no longer be used: it was written for the whole mask)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata."
            )
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple(
            (slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
            if isinstance(i, int)
            else i
            for i, n in zip(padded, sizes)
        )
        full = self.full_kv_num_blocks is not None
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index],
            self.kv_indices[index],
            self.full_kv_num_blocks[index] if full else None,
            self.full_kv_indices[index] if full else None,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None,
        )

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        new_rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        new_cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]
        num, idx = _adjust_num_blocks_and_indices(
            self.kv_num_blocks, self.kv_indices, new_rows, new_cols
        )
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = _adjust_num_blocks_and_indices(
                self.full_kv_num_blocks, self.full_kv_indices, new_rows, new_cols
            )
        return self.from_kv_blocks(
            num,
            idx,
            full_num,
            full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            seq_lengths=(new_q_len, new_kv_len),
            compute_q_blocks=self.q_indices is not None,
        )

    def numel(self) -> int:
        """The number of elements of the mask (not counting sparsity)."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """The percentage of blocks that are not computed."""
        computed = self.kv_num_blocks.sum()
        if self.full_kv_num_blocks is not None:
            computed = computed + self.full_kv_num_blocks.sum()
        size = computed.item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - size / self.numel())

    def to_dense(self):
        """The dense block-level mask: 1 where a (query block, key/value block) pair is
        computed."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(
                self.full_kv_num_blocks, self.full_kv_indices, self.full_kv_indices.shape[-1]
            )
        return dense

    def to_string(self, grid_size=(20, 20), limit: int = 4) -> str:
        """A picture of the block mask (``█`` computed, ``░`` partly, blank skipped)."""
        dense = self.to_dense()
        *batch_dims, num_rows, num_cols = dense.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))

        def vis(*batch_idx) -> str:
            out = f"{batch_idx}\n"
            cur = dense
            for i in batch_idx:
                cur = cur[i]
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    p = cur[r : r + row_step, c : c + col_step].float().mean().item()
                    out += ("█" if p == 1 else " " if p == 0 else "░") * 2
                out += "\n"
            return out

        parts = []
        for i, batch_idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if i == limit:
                parts.append("...")
                parts.append("To print out more, set BlockMask.to_string(limit=N)")
                parts.append(
                    "You can also index (BlockMask[batch, head]) to choose a specific batch or head"
                )
                break
            parts.append(vis(*batch_idx))
        return "\n".join(parts)

    def to(self, device) -> BlockMask:
        """The mask with its tensors moved to ``device`` (ember's tensors are on the CPU)."""
        moved = {
            a: (getattr(self, a).to(device) if getattr(self, a) is not None else None)
            for a in self._TENSOR_ATTRS
        }
        return BlockMask(
            seq_lengths=self.seq_lengths,
            **moved,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            dq_kv_order_spt=self.dq_kv_order_spt,
        )

    def _element_mask(self, Q: int, KV: int):
        """The block structure as an element mask, shaped to broadcast to (B, H, Q, KV)."""
        dense = self.to_dense().to(ember.bool)
        while dense.dim() < 4:
            dense = dense.unsqueeze(0)
        qb, kvb = self.BLOCK_SIZE
        dense = dense.repeat_interleave(qb, dim=-2)[..., :Q, :]
        return dense.repeat_interleave(kvb, dim=-1)[..., :KV]


def _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE: int, KV_BLOCK_SIZE: int, separate_full: bool):
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    pad_kv = -mask.shape[-1] % KV_BLOCK_SIZE
    pad_q = -mask.shape[-2] % Q_BLOCK_SIZE
    mask = _F.pad(mask, (0, pad_kv, 0, pad_q))
    B, H, Q, KV = mask.shape
    mask = mask.view(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE, KV_BLOCK_SIZE)
    block_sum = mask.permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if separate_full:
        whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
        partial = ((block_sum > 0) & (block_sum < whole)).to(ember.int8)
        return partial, (block_sum == whole).to(ember.int8)
    return (block_sum > 0).to(ember.int8), None


def create_block_mask(
    mask_mod,
    B,
    H,
    Q_LEN: int,
    KV_LEN: int,
    device=None,
    BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
    _compile=False,
    separate_full_blocks: bool = True,
    compute_dq_write_order: bool = False,
    dq_kv_order: bool = True,
) -> BlockMask:
    """The :class:`BlockMask` of ``mask_mod(b, h, q_idx, kv_idx)`` (True: attend) for
    ``B`` batches and ``H`` heads (None: 1, broadcast), in blocks of ``BLOCK_SIZE``.

    Example:
        >>> from ember.nn.attention.flex_attention import create_block_mask
        >>> m = create_block_mask(lambda b, h, q, kv: q >= kv, None, None, 256, 256)
        >>> m.shape, f"{m.sparsity():.1f}"
        ((1, 1, 256, 256), '25.0')
    """
    if _is_score_mod(mask_mod):
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    if isinstance(BLOCK_SIZE, int):
        q_block = kv_block = BLOCK_SIZE
    else:
        q_block, kv_block = BLOCK_SIZE
    if _compile:
        warnings.warn(
            "_compile flag on create_block_mask was originally added to work around a "
            "torch.compile limitation. That limitation has since been addressed. So, to "
            "compile create_block_mask, we suggest doing torch.compile(create_block_mask). "
            "This still works for now, but will be removed in the future.",
            DeprecationWarning,
            stacklevel=2,
        )
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    if compute_dq_write_order:
        raise NotImplementedError(
            "create_block_mask(compute_dq_write_order=True): ember does not compute the "
            "dQ write order of torch's FLASH backward kernel"
        )
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, q_block, kv_block, separate_full_blocks)
    num, idx = _dense_to_ordered(partial)
    full_num, full_idx = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(
        num,
        idx,
        full_num,
        full_idx,
        BLOCK_SIZE=(q_block, kv_block),
        mask_mod=mask_mod,
        seq_lengths=(Q_LEN, KV_LEN),
    )


def _warn_once(key: str, message: str, category) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, category, stacklevel=3)


def _validate(query, key, value, block_mask, enable_gqa: bool) -> None:
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead."
        )
    if query.size(-1) != key.size(-1):
        raise ValueError(
            "Expect query and key/value to have the same embedding dimension but got "
            f"E={query.size(-1)} and E={key.size(-1)}."
        )
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(
            "Expect query and key/value to have the same number of heads but got "
            f"Hq={query.size(-3)} and Hkv={key.size(-3)}. Try setting enable_gqa=True for GQA."
        )
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(
            "Expect number of query heads to be a multiple of kv heads for GQA but got "
            f"Hq={query.size(1)} and Hkv={key.size(1)}."
        )
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(
                "Expect query and key/value to have the same batch size, or non-none "
                f"block_mask, but got block_mask=None, Bq={query.size(0)}, and "
                f"Bkv={key.size(0)}."
            )
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(
                "Expect query and key/value to have the same batch size, or block_mask and "
                f"query to have the same batch size, but got Bq={query.size(0)}, "
                f"Bkv={key.size(0)}, B_block_mask={block_mask.kv_num_blocks.size(0)}."
            )


def _check_block_mask_lengths(block_mask: BlockMask, q_len: int, kv_len: int) -> None:
    mq, mkv = block_mask.shape[-2], block_mask.shape[-1]
    if q_len > mq or kv_len > mkv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={q_len} and kv_len={kv_len}. As the block mask was created for a smaller "
            "length than you're using it for, you likely need to create a new block mask."
        )
    if q_len != mq or kv_len != mkv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={q_len} and kv_len={kv_len}. As the block mask was created for a larger "
            "length than you're using it for, you can either 1. create a new block mask with "
            "the correct length, or 2. 'adjust' the existing block mask to the correct length "
            "by calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the block "
            "mask to the upper left corner, which does not work for all mask_mods!"
        )


def flex_attention(
    query,
    key,
    value,
    score_mod=None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: FlexKernelOptions | None = None,
    *,
    return_aux: AuxRequest | None = None,
):
    """Scaled dot-product attention with ``score_mod(score, b, h, q_idx, kv_idx)`` applied
    to each score and ``block_mask`` (from :func:`create_block_mask`) masking positions.

    ``query`` is ``(B, Hq, L, E)``, ``key``/``value`` ``(B, Hkv, S, E)``/``(B, Hkv, S, Ev)``
    (``Hq`` a multiple of ``Hkv`` with ``enable_gqa``). Returns the output ``(B, Hq, L, Ev)``,
    with ``return_aux=AuxRequest(lse=True)`` also an :class:`AuxOutput` whose ``lse`` is the
    natural log-sum-exp of each row's scores (``-inf`` for a fully masked row, whose output
    is 0). Differentiable in the inputs and in tensors the mods use.

    Example:
        >>> import ember
        >>> from ember.nn.attention.flex_attention import AuxRequest, flex_attention
        >>> q = ember.tensor([[[[1.0, 0.0], [0.0, 1.0]]]], requires_grad=True)
        >>> def bias(score, b, h, q_idx, kv_idx):
        ...     return score + (q_idx - kv_idx)
        >>> out, aux = flex_attention(q, q, q, score_mod=bias, return_aux=AuxRequest(lse=True))
        >>> out.sum().backward()
        >>> aux.lse.shape, q.grad.shape
        (torch.Size([1, 1, 2]), torch.Size([1, 1, 2, 2]))
    """
    _validate(query, key, value, block_mask, enable_gqa)
    if score_mod is None:
        score_mod = _identity
    if block_mask is None:
        block_mask = BlockMask.from_kv_blocks(
            kv_num_blocks=ember.ones([1, 1, 1], dtype=ember.int32),
            kv_indices=ember.zeros([1, 1, 1, 1], dtype=ember.int32),
            BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE,
            seq_lengths=(1, 1),
        )
    if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    whole = tuple(block_mask.BLOCK_SIZE) == (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE)
    if not whole:
        _check_block_mask_lengths(block_mask, query.size(-2), key.size(-2))
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. return_lse is deprecated, please "
            "use return_aux=AuxRequest(lse=True) instead."
        )
    if return_lse:
        _warn_once(
            "deprecated_return_lse",
            "return_lse is deprecated and will be removed in v2.10. Please use "
            "return_aux=AuxRequest(lse=True) instead.",
            FutureWarning,
        )
    options = dict(kernel_options or {})
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError(
            "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND "
            "supersedes the legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only "
            "specify the desired BACKEND."
        )
    if "BACKEND" in options and options["BACKEND"] not in _BACKENDS:
        raise ValueError(
            f"Invalid BACKEND value '{options['BACKEND']}'. Must be one of {_BACKENDS}"
        )
    if return_aux is not None and return_aux.max_scores:
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")

    out, lse = _math_attention(query, key, value, score_mod, block_mask, scale, whole)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if want_lse else None, max_scores=None)
    if return_lse:
        return out, lse
    return out


def _math_attention(query, key, value, score_mod, block_mask, scale, whole: bool):
    group = query.size(1) // key.size(1)
    if group > 1:
        key = key.repeat_interleave(group, dim=1)
        value = value.repeat_interleave(group, dim=1)
    Bq, Bkv = query.size(0), key.size(0)
    if not (Bq == Bkv or (Bq > 1 and Bkv == 1)):
        raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={Bq} and Bkv={Bkv}")
    key = key.expand(Bq, *key.shape[1:])
    value = value.expand(Bq, *value.shape[1:])

    work = ember.float64 if query.dtype == ember.float64 else ember.float32
    scores = query.to(work) @ key.to(work).transpose(-2, -1)
    B, H, Q, KV = scores.shape
    idx = _indices(B, H, Q, KV)
    scores = (scores * scale).to(work)
    modded = score_mod(scores, *idx)
    keep = _mask_of(block_mask.mask_mod, B, H, Q, KV)
    if not whole:
        keep = keep & block_mask._element_mask(Q, KV)
    neg_inf = ember.tensor(-math.inf, dtype=work)
    post = ember.where(keep, modded, neg_inf)

    masked_rows = ember.all(post == -math.inf, dim=-1)
    rows = masked_rows.unsqueeze(-1)
    # a fully masked row has lse -inf and output zeros (torch's _safe_softmax); the row is
    # computed on a finite stand-in so that no NaN reaches the backward pass
    zero = ember.zeros((), dtype=work)
    safe = ember.where(rows, zero, post)
    lse = ember.where(masked_rows, neg_inf, safe.logsumexp(dim=-1))
    probs = ember.where(rows, zero, ember.softmax(safe, dim=-1))
    out = probs.to(query.dtype) @ value.to(query.dtype)
    return out, lse
