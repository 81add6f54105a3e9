"""``torch._inductor.config``: inductor's settings that programs set, kept with no effect
(ember.compile has its own code generator). Unknown settings can be assigned too.

Example:
    >>> from ember._inductor import config
    >>> config.triton.cudagraphs
    False
"""

from __future__ import annotations

from types import SimpleNamespace

coordinate_descent_tuning = False
epilogue_fusion = True
max_autotune = False
max_autotune_pointwise = False
max_autotune_gemm = False
freezing = False
force_fuse_int_mm_with_mul = False
use_mixed_mm = False
fx_graph_cache = False
fx_graph_remote_cache = None
autotune_local_cache = True
unique_kernel_names = False
benchmark_kernel = False
debug = False
compile_threads = 1
cpp = SimpleNamespace(threads=-1, simdlen=None, enable_kernel_profile=False)
triton = SimpleNamespace(cudagraphs=False, unique_kernel_names=False, cudagraph_trees=True)
