"""MkDocs hooks that write the generated pages of the documentation site.

* ``reference/*.md``: the API reference, one page per namespace of
  ``tools/docs_reference.PAGES``, every public name with its signature and docstring.
  ember's names are made at import (ops declared in tables, wrappers that check arguments),
  so the reference reads them from the imported package with ``inspect``, as Sphinx's
  autodoc does; static analysis (mkdocstrings' griffe) cannot resolve them.
* ``tutorials/seed-*.md``: the seed tutorials, each cell run by this build with ember
  (``import torch`` meaning ember) and its output shown, marked where it prints exactly
  what PyTorch 2.13 printed.
* ``examples/*.md``: each program of ``examples/`` run with short settings by this build,
  its output and pictures shown, then its source.

``mkdocs.yml`` names this file under ``hooks``; ``make docs`` builds the site.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str):
    """A module of tools/ (this file is loaded by MkDocs, not imported from a package)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before running it: its dataclasses look it up there
        spec.loader.exec_module(module)
    return sys.modules[name]


docs_reference = _tool("docs_reference")

# -- docstrings to Markdown -----------------------------------------------------------------

SECTIONS = {
    "Args",
    "Arguments",
    "Parameters",
    "Keyword args",
    "Keyword Args",
    "Returns",
    "Return",
    "Yields",
    "Raises",
    "Example",
    "Examples",
    "Note",
    "Notes",
    "Warning",
    "Warnings",
    "See also",
    "See Also",
    "Attributes",
    "Shape",
    "Inputs",
    "Outputs",
}
LIST_SECTIONS = {"Args", "Arguments", "Parameters", "Keyword args", "Keyword Args", "Attributes"}
ITEM = re.compile(r"^(\*{0,2}[\w.]+(?:,\s*\*{0,2}[\w.]+)*)\s*(\([^)]*\))?\s*:\s*(.*)$")
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
QUOTED_ANNOTATION = re.compile(r"(: |-> )'([^']*)'")


def _escape_html(text: str) -> str:
    """``<`` outside code spans would start an HTML tag in Markdown (``<AddBackward0>``)."""
    parts = re.split(r"(`+[^`]*?`+)", text)
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;") for p in parts)


def _fence(lines: list[str], lang: str) -> list[str]:
    body = inspect.cleandoc("\n".join(lines)).split("\n")
    return ["", f"```{lang}", *body, "```", ""]


def docstring_markdown(doc: str) -> str:
    """A Google-style docstring as Markdown: sections as bold labels, argument lists as
    bullet lists, doctest examples as console code blocks, other text as it is."""
    lines = inspect.cleandoc(doc).split("\n")
    out: list[str] = []
    section = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += _fence(block, "pycon")
            continue
        if stripped.endswith("::") and not line.startswith(" "):
            # reST's literal block: the indented lines after it are code
            out.append(_escape_html(stripped[:-1].rstrip() + ":"))
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            out += _fence(block, "text") if any(b.strip() for b in block) else []
            continue
        if not line.startswith(" ") and stripped.rstrip(":") in SECTIONS and stripped.endswith(":"):
            section = stripped[:-1]
            out += ["", f"**{section}**", ""]
            i += 1
            continue
        if section and line.startswith(" ") and stripped:
            item = ITEM.match(stripped) if section in LIST_SECTIONS else None
            if item and len(line) - len(line.lstrip()) <= 4:
                names, kind, text = item.groups()
                kind = f" {kind}" if kind else ""
                out.append(f"- `{names}`{_escape_html(kind)}: {_escape_html(text)}")
            elif section in LIST_SECTIONS:
                out.append("  " + _escape_html(stripped))
            else:
                out.append(_escape_html(stripped))
            i += 1
            continue
        if not line.startswith(" "):
            section = None if not stripped else section
        if line.startswith("    ") and (not out or not out[-1].strip()):
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                block.append(lines[i])
                i += 1
            out += _fence(block, "text")
            continue
        out.append(_escape_html(line.strip() if not section else line))
        i += 1
    return "\n".join(out).strip() + "\n"


# -- the reference pages --------------------------------------------------------------------

# The torch page's sections, by the file that defines a name (the first pattern that matches).
TORCH_SECTIONS = (
    ("Tensors and creation", ("_creation", "_tensor.py", "_compat", "_torch.py", "_tensor_str")),
    ("Data types", ("_dtype",)),
    ("Pointwise math", ("_aten/elementwise", "_aten/special", "_aten/complex")),
    ("Reductions", ("_aten/reduction",)),
    ("Indexing, slicing, joining, mutating", ("_aten/shape", "_aten/indexing")),
    ("Sorting, searching and comparing", ("_aten/sorting",)),
    ("Linear algebra (BLAS and LAPACK)", ("_aten/linalg",)),
    ("Random sampling", ("random",)),
    ("Neural-network ops", ("_aten/nn_",)),
    ("Sparse tensors", ("sparse",)),
    ("Gradient modes", ("autograd/",)),
    ("Saving and loading", ("serialization", "_torch_zip")),
    ("Transforms and compilation", ("func", "_compile", "compiler")),
)


def _source_file(obj) -> str:
    """The file that defines ``obj`` (for a generated public wrapper, its implementation's)."""
    fn = getattr(obj, "__func__", obj)
    fn = inspect.unwrap(fn) if callable(fn) else fn
    impl = getattr(fn, "__globals__", {}).get("_impl")
    if impl is not None:
        fn = impl
    try:
        return inspect.getsourcefile(fn) or ""
    except TypeError:
        return getattr(fn, "__module__", "") or ""


def _torch_section(obj) -> str:
    if obj is None:
        return "Data types and constants"
    path = _source_file(obj).replace("\\", "/")
    for title, patterns in TORCH_SECTIONS:
        if any(p in path for p in patterns):
            return title
    return "Utilities"


def _signature(name: str, obj) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    sig = QUOTED_ANNOTATION.sub(r"\1\2", sig)  # annotations are strings (PEP 563)
    return ADDRESS.sub("", f"{name}{sig}")


def _kind(obj) -> str:
    if isinstance(obj, type):
        return "class"
    if isinstance(obj, property) or not callable(obj) or type(obj).__name__.endswith("descriptor"):
        return "attribute"
    return ""


def _heading_id(qualname: str) -> str:
    return qualname.replace(" ", "-")


def _entry(qualname: str, obj, level: int, seen: dict) -> list[str]:
    """One name's Markdown: a heading, its signature, its docstring (a class also lists the
    public methods it defines itself)."""
    hashes = "#" * level
    out = [f"{hashes} `{qualname}` {{ #{_heading_id(qualname)} }}", ""]
    if id(obj) in seen:
        first = seen[id(obj)]
        return out + [f"Another name for [`{first}`](#{_heading_id(first)}).", ""]
    seen[id(obj)] = qualname
    kind = _kind(obj)
    if kind == "attribute":
        out += [f"*attribute* `{qualname}`", ""]
    else:
        signature = _signature(qualname, obj)
        if kind == "class":
            signature = signature.removesuffix(" -> None")  # (__init__'s return)
        out += ["```python", f"{kind + ' ' if kind else ''}{signature}", "```", ""]
    doc = obj.__doc__ if isinstance(obj, type) else inspect.getdoc(obj)
    out.append(docstring_markdown(doc) if doc else "")
    if isinstance(obj, type):
        for meth_name, meth in sorted(vars(obj).items()):
            if meth_name.startswith("_") or meth_name == "forward" and not meth.__doc__:
                continue
            fn = meth.__func__ if isinstance(meth, (staticmethod, classmethod)) else meth
            if not callable(fn) or isinstance(fn, type) or not getattr(fn, "__doc__", None):
                continue
            method_id = _heading_id(f"{qualname}.{meth_name}")
            out += [
                f"{hashes}# `{qualname}.{meth_name}` {{ #{method_id} }}",
                "",
                "```python",
                _signature(meth_name, fn).replace("(self, ", "(").replace("(self)", "()"),
                "```",
                "",
                docstring_markdown(fn.__doc__),
            ]
    return out


def _data_table(page, names: list[str]) -> list[str]:
    owner = docs_reference._module(page.module)
    rows = ["| name | value | what it is |", "| --- | --- | --- |"]
    for name in names:
        value = getattr(owner, name)
        doc = (type(value).__doc__ or "").strip().split("\n")[0]
        shown = ADDRESS.sub("", repr(value)).replace("|", "\\|")
        anchor = f'<a id="{page.module}.{name}"></a>'
        rows.append(f"| {anchor}`{page.module}.{name}` | `{shown}` | {_escape_html(doc)} |")
    return rows


def reference_page(page) -> str:
    """The Markdown of one reference page."""
    names = docs_reference.public_names(page)
    objects = {n: docs_reference.documented_object(page, n) for n in names}
    out = [f"# `{page.module}`", "", page.summary, ""]
    seen: dict = {}
    if page.module == "ember":
        groups: dict[str, list[str]] = {}
        for n in names:
            groups.setdefault(_torch_section(objects[n]), []).append(n)
        order = [t for t, _ in TORCH_SECTIONS] + ["Utilities", "Data types and constants"]
        for title in order:
            if title not in groups:
                continue
            out += [f"## {title}", ""]
            if title == "Data types and constants":
                out += _data_table(page, groups[title]) + [""]
                continue
            for n in groups[title]:
                out += _entry(f"ember.{n}", objects[n], 3, seen)
        return "\n".join(out)
    data = [n for n in names if objects[n] is None]
    if page.module == "ember.Tensor":
        attributes = [
            n for n in names if objects[n] is not None and _kind(objects[n]) == "attribute"
        ]
        methods = [n for n in names if n not in attributes and objects[n] is not None]
        for title, group in (("Attributes", attributes), ("Methods", methods)):
            out += [f"## {title}", ""]
            for n in group:
                out += _entry(f"Tensor.{n}", objects[n], 3, seen)
        return "\n".join(out)
    for n in names:
        if objects[n] is not None:
            out += _entry(f"{page.module}.{n}", objects[n], 2, seen)
    if data:
        out += ["## Constants", ""] + _data_table(page, data) + [""]
    return "\n".join(out)


def reference_index() -> str:
    rows = ["| page | what it documents | names |", "| --- | --- | ---: |"]
    for page in docs_reference.PAGES:
        rows.append(
            f"| [`{page.module}`]({page.slug}.md) | {page.summary} "
            f"| {len(docs_reference.public_names(page))} |"
        )
    return "\n".join(
        [
            "# API reference",
            "",
            "Every public name of ember, organised as torch's reference is: what it does, its "
            "signature and an example whose output is what ember prints (the examples run in "
            "the test suite). Where ember follows torch, torch's documentation applies too.",
            "",
            *rows,
            "",
            "[Every name at a glance](../api.md) lists them all on one page.",
            "",
        ]
    )


# -- the seed tutorials ---------------------------------------------------------------------


def _seed_pages() -> dict[str, str]:
    """``tutorials/<id>.md`` -> Markdown: each seed tutorial, its cells run with ember."""
    build_playground = _tool("build_playground")
    modules = build_playground._seed_modules()
    import replay

    pages = {}
    for module in modules:
        book = build_playground.seed_notebook(module)
        outcomes = replay.replay(module.CELLS, build_playground.SEED)
        out = [f"# Tutorial {book['id']}", "", book["about"], ""]
        out += [
            '!!! note "How this page was made"',
            "    The cells below are the tutorial's code, run by the documentation build with "
            "ember (`import torch` gives ember; random draws after "
            f"`manual_seed({build_playground.SEED})`). Under each is what ember printed; "
            "**✓** marks a cell whose output is exactly what PyTorch 2.13 prints.",
            "",
            _transcript_text(book["intro"]),
            "",
        ]
        for cell, entry in zip(module.CELLS, book["cells"]):
            out += [f"**{entry['label']}**", "", "```python", entry["source"].rstrip(), "```", ""]
            if "skip" in entry:
                out += [f"*{entry['skip']}*", ""]
            else:
                got = outcomes[cell.n]
                text = got.output
                if got.error is not None:
                    text += f"{type(got.error).__name__}: {got.error}\n"
                mark = "✓ same as PyTorch 2.13" if _matches(entry, got) else "ember's output"
                if text.strip():
                    out += [f"*{mark}:*", "", "```text", text.rstrip(), "```", ""]
            prose = _transcript_text(entry["transcript"], skip_output=True)
            if prose.strip():
                out += [prose, ""]
        pages[f"tutorials/seed-{book['id']}.md"] = "\n".join(out)
    return pages


def _matches(entry: dict, outcome) -> bool:
    import replay

    expect = entry.get("expect")
    if expect is None:
        return False
    return replay.normalize(outcome.output) == replay.normalize(expect) and (
        ("raises" in entry) == (outcome.error is not None)
    )


def _transcript_text(text: str, skip_output: bool = False) -> str:
    """The transcript's prose around a cell as Markdown. After a cell the transcript first
    repeats the output its author saw (up to the first two blank lines), left out here:
    the page shows what ember printed instead."""
    if skip_output:
        parts = text.split("\n\n\n", 1)
        text = parts[1] if len(parts) == 2 else ""
    text = re.sub(r"```(\S[^`\n]*?)```", r"`\1`", text)  # the transcripts' inline code
    return _escape_html(text.strip("\n"))


# -- the examples ---------------------------------------------------------------------------

# Each example with the short settings the build runs it with (the page shows the command).
EXAMPLES = {
    "digits": ["--epochs", "3", "--no-progress"],
    "charlm": ["--steps", "30", "--eval-every", "10", "--sample-len", "120", "--no-progress"],
    "gcn": ["--epochs", "50"],
    "graphs": [],
}


def _example_page(name: str, args: list[str], out_dir: Path) -> tuple[str, list[Path]]:
    script = ROOT / "examples" / f"{name}.py"
    source = script.read_text(encoding="utf-8")
    module_doc = (ast_docstring(source) or "").strip()
    run_dir = out_dir / name
    run_dir.mkdir(parents=True, exist_ok=True)
    full = list(args)
    if (
        "--out-dir"
        in subprocess.run(
            [sys.executable, str(script), "--help"], capture_output=True, text=True, cwd=ROOT
        ).stdout
    ):
        full += ["--out-dir", str(run_dir)]
    proc = subprocess.run(
        [sys.executable, str(script), *full], capture_output=True, text=True, cwd=ROOT
    )
    if proc.returncode != 0:
        raise RuntimeError(f"examples/{name}.py failed:\n{proc.stdout}\n{proc.stderr}")
    pictures = sorted([*run_dir.glob("*.png"), *run_dir.glob("*.svg")])
    shown_args = " ".join(args)
    out = [
        f"# `examples/{name}.py`",
        "",
        docstring_markdown(module_doc),
        "",
        "## A short run",
        "",
        "The documentation build ran it with short settings:",
        "",
        "```sh",
        f"python examples/{name}.py {shown_args}".rstrip(),
        "```",
        "",
        "```text",
        ADDRESS.sub("", proc.stdout.rstrip()),
        "```",
        "",
    ]
    for pic in pictures:
        out += [f"![{pic.stem}]({name}-{pic.name})", ""]
    out += [
        "## The source",
        "",
        '??? example "examples/' + name + '.py"',
        "",
        "    ```python",
        *("    " + line if line else "" for line in source.rstrip().split("\n")),
        "    ```",
        "",
    ]
    return "\n".join(out), pictures


def ast_docstring(source: str) -> str | None:
    import ast

    return ast.get_docstring(ast.parse(source))


# -- MkDocs events --------------------------------------------------------------------------

REFERENCE_NAV = "API reference"


def on_config(config):
    """The reference, tutorials and examples sections of the navigation, from the lists."""
    nav = config["nav"]
    for item in nav:
        if not isinstance(item, dict):
            continue
        if REFERENCE_NAV in item:
            item[REFERENCE_NAV] = [
                {"Overview": "reference/index.md"},
                *({p.module: f"reference/{p.slug}.md"} for p in docs_reference.PAGES),
                {"Every name at a glance": "api.md"},
            ]
        elif "Tutorials" in item:
            ids = sorted(
                p.stem.split("_")[-1] for p in (ROOT / "tests/seeds").glob("test_seed_*.py")
            )
            item["Tutorials"] = [{f"Tutorial {i}": f"tutorials/seed-{i}.md"} for i in ids]
        elif "Examples" in item:
            item["Examples"] = [{f"{n}.py": f"examples/{n}.md"} for n in EXAMPLES]
    return config


def on_files(files, config):
    """Add the generated pages (and the examples' pictures) to the site's files."""
    import ember

    def add(uri: str, content: str | bytes) -> None:
        files.append(File.generated(config, uri, content=content))

    ember.manual_seed(0)
    for page in docs_reference.PAGES:
        add(f"reference/{page.slug}.md", reference_page(page))
    add("reference/index.md", reference_index())
    for uri, text in _seed_pages().items():
        add(uri, text)
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in EXAMPLES.items():
            text, pictures = _example_page(name, args, Path(tmp))
            add(f"examples/{name}.md", text)
            for pic in pictures:
                add(f"examples/{name}-{pic.name}", pic.read_bytes())
    return files
