"""The playground page's Python side: it runs in Pyodide, next to ember.

playground.js runs each cell through :func:`run_cell`, which behaves as a notebook (and as
the test suite's seed replay, ``tests/seeds/replay.py``): everything the cell prints, then
the ``repr`` of its last expression unless that is ``None``; an exception ends the cell
and its traceback is shown. Output reaches the page while the cell runs (a training loop's
prints appear as it goes), through the ``emit(kind, text)`` callback the page passes in.

A graph (``ember.viz.make_dot``'s ``graphviz.Digraph``) is sent to the page as DOT text,
which draws it with Graphviz compiled to WebAssembly: there is no ``dot`` program here.
"""

from __future__ import annotations

import linecache
import sys
import traceback

from pyodide.code import eval_code_async

# The running cell's callback: ``show`` (called from inside a cell) sends its graph there.
_emit = None


class _Stream:
    """A cell's ``sys.stdout``/``sys.stderr``: each write goes straight to the page."""

    encoding = "utf-8"

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def write(self, text: str) -> int:
        if text:
            _emit(self.kind, text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _is_graph(value) -> bool:
    """Whether ``value`` is a graphviz graph (``make_dot``'s result), drawn, not printed."""
    return type(value).__module__.split(".")[0] == "graphviz" and hasattr(value, "source")


def show(graph) -> None:
    """Draw ``graph`` (a graphviz graph such as ``make_dot(y)``, or DOT text) in the page."""
    if _emit is None:
        raise RuntimeError("show() draws into a running cell's output")
    _emit("dot", graph if isinstance(graph, str) else graph.source)


def new_namespace(seed: int | None) -> dict:
    """A fresh notebook: its globals, with ``show``; a seed tutorial's namespace starts
    after ``manual_seed(seed)``, as the test suite replays it, so its random cells draw
    the values their expected texts were computed from."""
    if seed is not None:
        import ember

        ember.manual_seed(seed)
    return {"__name__": "__main__", "show": show}


def _cell_traceback(error: BaseException, filename: str) -> str:
    """The traceback from the cell's own frame on (the frames of Pyodide's runner above it
    say nothing about the cell)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


async def run_cell(source: str, ns, label: str, emit) -> str | None:
    """Run ``source`` in the notebook ``ns`` (top-level ``await`` allowed); stream what it
    shows to ``emit``. Returns ``"ExcType: message"`` if it raised, else ``None``."""
    global _emit
    filename = f"<{label}>"
    # Tracebacks quote the cell's lines from linecache, as for a file.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _emit = emit
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
    try:
        value = await eval_code_async(source, ns, filename=filename)
        if _is_graph(value):
            show(value)
        elif value is not None:
            print(repr(value))
        return None
    except Exception as e:  # noqa: BLE001 - a notebook shows the error and goes on
        emit("error", _cell_traceback(e, filename))
        return f"{type(e).__name__}: {e}"
    finally:
        sys.stdout, sys.stderr = saved
        _emit = None
