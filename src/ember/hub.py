"""``torch.hub``: ember never reaches the network, so loading a model from a hub repository
fails with torch's offline error; the cache directory is reported as torch's is.

Example:
    >>> import ember
    >>> ember.hub.get_dir().endswith("hub")
    True
"""

from __future__ import annotations

import os
import re
import sys
from urllib.parse import urlparse  # noqa: F401  (torch.hub's namespace has it; timm imports it)

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]


class _Progress:
    """A progress report on stderr for when tqdm is not installed (what ``torch.hub.tqdm``
    is then): the percentage done, or the bytes counted when the total is unknown."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs) -> None:
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n) -> None:
        if self.disable:
            return
        self.n += n
        shown = f"{self.n:.1f} bytes" if self.total is None else f"{100 * self.n / self.total:.1f}%"
        sys.stderr.write("\r" + shown)
        sys.stderr.flush()

    def set_description(self, *args, **kwargs) -> None:
        pass

    def write(self, s) -> None:
        sys.stderr.write(f"{s}\n")

    def close(self) -> None:
        self.disable = True

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc) -> None:
        if not self.disable:
            sys.stderr.write("\n")


try:  # torch.hub.tqdm (and torch.utils.model_zoo.tqdm): tqdm's when it is installed
    from tqdm import tqdm
except ImportError:
    tqdm = _Progress

# The hash prefix in a checkpoint file's name (``resnet18-f37072fd.pth``), which torch checks
# downloads against; libraries import it to parse such names.
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")

_hub_dir: list = [None]


def get_dir() -> str:
    """``$TORCH_HOME/hub``, or ``~/.cache/torch/hub`` (XDG_CACHE_HOME respected), as torch."""
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    home = os.getenv("TORCH_HOME") or os.path.join(
        os.getenv("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "torch"
    )
    return os.path.join(os.path.expanduser(home), "hub")


def _get_torch_home() -> str:
    """torch's cache root: ``$TORCH_HOME``, or ``$XDG_CACHE_HOME/torch`` (default
    ``~/.cache/torch``), user-expanded."""
    return os.path.expanduser(
        os.getenv(
            "TORCH_HOME",
            os.path.join(
                os.getenv("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")),
                "torch",
            ),
        )
    )


def set_dir(d) -> None:
    _hub_dir[0] = os.path.expanduser(os.fspath(d))


def _offline() -> RuntimeError:
    return RuntimeError(
        "It looks like there is no internet connection and the repo could not be found in the "
        f"cache ({get_dir()})"
    )


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, **kw):
    """Refused: ember does not download or run code from hub repositories."""
    raise _offline()


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):  # noqa: A001
    raise _offline()


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):  # noqa: A001
    raise _offline()


def load_state_dict_from_url(url, model_dir=None, map_location=None, **kwargs):
    """Refused: ember makes no network requests (download the file and ``ember.load`` it)."""
    raise RuntimeError(
        f"ember does not download files: fetch {url} yourself and read it with ember.load"
    )


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    raise RuntimeError(f"ember does not download files: fetch {url} yourself")
