"""``python -m ember``: run a PyTorch program unchanged, with ``torch`` being ember.

    python -m ember train.py [args...]     a script (like ``python train.py``)
    python -m ember -m package.module ...  a module (like ``python -m``)
    python -m ember -c "import torch; ..."  a command
    python -m ember -                      the program read from standard input
    python -m ember                        an interactive console

``import torch``, ``import torch.nn as nn``, ``from torch.utils.data import DataLoader``
and ``functorch`` all resolve to ember's modules (``ember._as_torch``), whether or not real
torch is installed.
"""

from __future__ import annotations

import os
import runpy
import sys

from ._as_torch import as_torch

USAGE = """usage: python -m ember [-m module | -c command | script | -] [args ...]
Runs a PyTorch program with torch resolving to ember."""


def main(argv: list | None = None) -> int:
    """Run what ``argv`` names (``sys.argv[1:]`` by default) as ``python`` would, with
    ``torch`` resolving to ember; the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    as_torch()
    if not args:
        import code

        code.interact(banner="ember (import torch gives ember)", exitmsg="")
        return 0
    first = args[0]
    if first in ("-m", "-c") and len(args) < 2:
        print(f"Argument expected for the {first} option\n{USAGE}", file=sys.stderr)
        return 2
    if first == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif first == "-c":
        sys.argv = ["-c", *args[2:]]
        sys.path.insert(0, "")
        _run_source(args[1], "<string>")
    elif first == "-":
        sys.argv = ["-", *args[1:]]
        sys.path.insert(0, "")
        _run_source(sys.stdin.read(), "<stdin>")
    else:
        sys.argv = args
        sys.path[0] = os.path.dirname(os.path.abspath(first))
        runpy.run_path(first, run_name="__main__")
    return 0


def _run_source(source: str, filename: str) -> None:
    import types

    module = types.ModuleType("__main__")
    module.__file__ = None
    main_before = sys.modules["__main__"]
    sys.modules["__main__"] = module  # classes the program defines pickle as __main__.X
    try:
        exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102
    finally:
        sys.modules["__main__"] = main_before


if __name__ == "__main__":
    sys.exit(main())
