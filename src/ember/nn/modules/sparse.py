"""``Embedding`` and ``EmbeddingBag``."""

from __future__ import annotations

from ... import _creation
from ..._aten import nn_embedding as _bag
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _factory
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim`` (initialised
    from N(0, 1); the ``padding_idx`` row is zero and gets no gradient).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> emb = nn.Embedding(10, 3, padding_idx=0)
        >>> emb
        Embedding(10, 3, padding_idx=0)
        >>> emb(ember.tensor([[0, 2], [4, 4]])).shape
        torch.Size([2, 2, 3])
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx=None,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight=None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= self.num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -self.num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(
                _creation.empty((num_embeddings, embedding_dim), **kw), requires_grad=not _freeze
            )
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        """Redraw the weights from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight._data[self.padding_idx] = 0
                self.weight._bump()

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze: bool = True,
        padding_idx=None,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose weight is the 2-D ``embeddings`` (frozen by default)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


def _check_padding_idx(padding_idx, num: int, message: str):
    """``padding_idx`` made non-negative (torch's checks)."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError(message)
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError(message)
            padding_idx = num + padding_idx
    return padding_idx


class EmbeddingBag(Module):
    """Sums, means or maxima (``mode``) of bags of embedding vectors, without building the
    per-index embeddings (``F.embedding_bag``): ``forward(input, offsets=None,
    per_sample_weights=None)``. The ``padding_idx`` entries are left out of their bags.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag
        EmbeddingBag(10, 3, mode='sum')
        >>> bag(ember.tensor([1, 2, 4, 5, 4]), ember.tensor([0, 2])).shape
        torch.Size([2, 3])
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight=None,
        include_last_offset: bool = False,
        padding_idx=None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _check_padding_idx(
            padding_idx, num_embeddings, "padding_idx must be within num_embeddings"
        )
        if _weight is None:
            self.weight = Parameter(_creation.empty((num_embeddings, embedding_dim), **kw))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Redraw the weights from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight._data[self.padding_idx] = 0
                self.weight._bump()

    def forward(self, input, offsets=None, per_sample_weights=None):
        return _bag.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        s += ", mode={mode}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**{k: repr(v) for k, v in self.__dict__.items()})

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze: bool = True,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx=None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose weight is the 2-D ``embeddings`` (frozen by default)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
