"""``torch.version``: ember's version, and no CUDA or ROCm."""

__version__ = "0.1.0"
cuda = None
hip = None
debug = False
git_version = "unknown"
