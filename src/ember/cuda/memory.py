"""``torch.cuda.memory``: the memory probes of ``torch.cuda`` (all zero without CUDA)."""

from . import (  # noqa: F401
    empty_cache,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
