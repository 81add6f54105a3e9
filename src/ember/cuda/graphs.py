"""``torch.cuda.graphs``: CUDA graphs, as a CPU-only build of torch has them: the names
exist (libraries name them in annotations and at import) and using them raises that build's
errors.

Example:
    >>> import ember
    >>> try:
    ...     ember.cuda.CUDAGraph()
    ... except RuntimeError as e:
    ...     print(e)
    Tried to instantiate dummy base class CUDAGraph
"""

from __future__ import annotations

__all__ = [
    "CUDAGraph",
    "graph",
    "graph_pool_handle",
    "is_current_stream_capturing",
    "make_graphed_callables",
]


def _dummy(name: str) -> RuntimeError:
    """The error a CPU build raises for a CUDA binding it does not have."""
    return RuntimeError(f"Tried to instantiate dummy base class {name}")


class CUDAGraph:
    """``torch.cuda.CUDAGraph``: cannot be made without CUDA."""

    def __init__(self, *args, **kwargs) -> None:
        raise _dummy("CUDAGraph")


def is_current_stream_capturing() -> bool:
    """Raises as a CPU build does: there is no stream to ask."""
    raise _dummy("_cuda_isCurrentStreamCapturing")


def graph_pool_handle():
    """Raises as a CPU build does: there is no memory pool."""
    raise _dummy("_graph_pool_handle")


class graph:  # noqa: N801 (torch's name)
    """``torch.cuda.graph(cuda_graph, pool=None, stream=None, ...)``: capturing into a
    CUDA graph needs a CUDA stream, which a CPU build cannot make."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, **kwargs):
    """Raises as a CPU build does: a graph cannot be made."""
    raise _dummy("CUDAGraph")
