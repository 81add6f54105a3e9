"""``torch.version``: the torch release ember implements, and no CUDA or ROCm.

``__version__`` is torch 2.13's, so that a program's version checks take the branch written
for the torch whose API ember has; ember's own release is its local label (and ``release``).

Example:
    >>> import ember
    >>> ember.__version__ >= "2.0", ember.__version__ >= (2, 0), ember.version.release
    (True, True, '0.1.0')
"""

from .torch_version import TorchVersion

release = "0.1.0"  # ember's own version (pyproject.toml's)
__version__ = TorchVersion(f"2.13.0+ember.{release}")
cuda = None
hip = None
debug = False
git_version = "unknown"
