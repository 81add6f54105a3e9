"""The kernel cache: its folders and files only their user can write (under any umask), a
shared object that someone else could have planted there never loaded (and ``explain``
saying why), no symlink followed into it, its size bounded by evicting the least recently
used kernels; and the C sources compiled with gcc's warnings on, the fixed ones without
any."""

from __future__ import annotations

import importlib.resources
import logging
import os
import stat
import subprocess
import sysconfig
import time

import numpy as np
import pytest

import ember
from ember._compile import kernels, lowerings
from ember._compile.kernels import Group, KernelCacheError, leaf, trace

pytestmark = pytest.mark.skipif(
    bool(kernels.available()), reason="fused kernels need gcc and Python's headers"
)

needs_root = pytest.mark.skipif(os.getuid() != 0, reason="giving a file away needs root")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """The kernels folder of a fresh cache; modules built before are forgotten, so each
    build reads the disk."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EMBER_CACHE_MAX_MB", raising=False)
    monkeypatch.setattr(kernels, "_LOADED", {})
    monkeypatch.setattr(lowerings, "_MODULES", {})
    return tmp_path / "cache" / "kernels"


def _build(factor: float = 2.0):
    """A module computing ``x * factor`` (a distinct kernel per factor)."""
    res = trace(lambda a: a * factor, (leaf("x", (8,), np.float64),))
    group = Group(res.shape)
    group.members = [("out", res.node)]
    group.outputs = ["out"]
    return kernels.build({"k0": group.source("k0")})


@pytest.fixture
def plant(tmp_path):
    """``plant(path)`` writes at ``path`` a shared object that, once loaded, creates the
    file ``tmp_path / "planted-code-ran"``; returns that marker's path."""
    marker = tmp_path / "planted-code-ran"
    src = tmp_path / "planted.c"
    src.write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void planted(void) {\n"
        f'  FILE *f = fopen("{marker}", "w");\n'
        "  if (f) fclose(f);\n"
        "}\n"
    )

    def write(path):
        subprocess.run([kernels._cc(), "-shared", "-fPIC", str(src), "-o", str(path)], check=True)
        return marker

    return write


def _forget_loaded(monkeypatch):
    monkeypatch.setattr(kernels, "_LOADED", {})


def _elsewhere(tmp_path, monkeypatch, fn):
    """``fn()`` with a scratch cache: the kernels it builds are named as in any cache, and
    this process has not loaded their files from the one under test."""
    scratch = tmp_path / "scratch"
    with monkeypatch.context() as m:
        m.setenv("EMBER_CACHE_DIR", str(scratch))
        m.setattr(kernels, "_LOADED", {})
        fn()
    return sorted(os.listdir(scratch / "kernels"))


def test_folders_and_kernels_are_private_under_umask_000(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "a" / "b"))
    old = os.umask(0)
    try:
        module = _build()
    finally:
        os.umask(old)
    for folder in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "kernels"):
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700, folder
    (so,) = (tmp_path / "a" / "b" / "kernels").iterdir()
    assert stat.S_IMODE(os.lstat(so).st_mode) & 0o077 == 0
    np.testing.assert_array_equal(module.k0(np.arange(8.0)), 2 * np.arange(8.0))


def _world_writable(folder, base):
    folder.chmod(0o777)


def _group_writable(folder, base):
    folder.chmod(0o770)


def _owned_by_another_user(folder, base):
    os.chown(folder, 1, -1)


def _in_a_folder_others_can_write(folder, base):
    base.chmod(0o777)  # others could rename the kernels folder and put theirs in its place


UNSAFE_FOLDERS = [
    pytest.param(_world_writable, "it is writable by others", id="world-writable"),
    pytest.param(_group_writable, "it is writable by its group", id="group-writable"),
    pytest.param(_owned_by_another_user, "it is owned by uid 1", id="uid 1", marks=needs_root),
    pytest.param(
        _in_a_folder_others_can_write, "cache is writable by others", id="in a writable folder"
    ),
]


@pytest.mark.parametrize("make_unsafe,why", UNSAFE_FOLDERS)
def test_nothing_is_loaded_from_a_folder_others_can_write(
    make_unsafe, why, cache, plant, tmp_path, monkeypatch
):
    (name,) = _elsewhere(tmp_path, monkeypatch, _build)
    cache.mkdir(parents=True)
    marker = plant(cache / name)  # what an attacker puts under the name the build looks for
    make_unsafe(cache, cache.parent)
    with pytest.raises(KernelCacheError, match="is not safe") as info:
        _build()
    assert why in str(info.value)
    assert not marker.exists(), "the planted shared object was loaded"
    assert "is not safe" in kernels.available()
    assert lowerings.lowered(type("SoftmaxBackward0", (), {}), "forward", None) is None


def _give_away(so, plant, tmp_path):
    marker = plant(so)
    os.chown(so, 1, -1)
    return marker


def _make_writable(so, plant, tmp_path):
    marker = plant(so)
    os.chmod(so, 0o666)
    return marker


def _symlink_elsewhere(so, plant, tmp_path):
    marker = plant(tmp_path / "elsewhere.so")
    os.symlink(tmp_path / "elsewhere.so", so)
    return marker


UNSAFE_FILES = [
    pytest.param(_give_away, "owned by uid 1", id="uid 1", marks=needs_root),
    pytest.param(_make_writable, "writable by others", id="writable by others"),
    pytest.param(_symlink_elsewhere, "a symlink", id="a symlink"),
]


@pytest.mark.parametrize("replace,why", UNSAFE_FILES)
def test_a_kernel_file_someone_else_could_have_written_is_not_loaded(
    replace, why, cache, plant, tmp_path, monkeypatch
):
    (name,) = _elsewhere(tmp_path, monkeypatch, _build)
    cache.mkdir(parents=True)
    marker = replace(cache / name, plant, tmp_path)
    with pytest.raises(KernelCacheError, match=f"a cached kernel is {why}, not loaded"):
        _build()
    assert not marker.exists(), "the planted shared object was loaded"


def test_a_symlink_in_place_of_the_kernels_folder_is_not_followed(
    cache, plant, tmp_path, monkeypatch
):
    (name,) = _elsewhere(tmp_path, monkeypatch, _build)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    marker = plant(elsewhere / name)
    cache.parent.mkdir()
    cache.symlink_to(elsewhere)
    with pytest.raises(KernelCacheError, match="it is a symlink"):
        _build()
    assert not marker.exists(), "the planted shared object was loaded"
    assert cache.is_symlink() and "it is a symlink" in kernels.available()


def test_a_cache_location_reached_through_a_symlink_is_checked_where_it_leads(
    tmp_path, monkeypatch
):
    """(~/.cache may be a symlink: ancestors are followed, then checked.)"""
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "link"))
    module = _build()
    assert os.path.dirname(module.__file__) == str(real / "kernels")
    real.chmod(0o777)
    _forget_loaded(monkeypatch)
    with pytest.raises(KernelCacheError, match=f"{real} is writable by others"):
        _build()


def _add(x):
    return (x * 2).tanh() + x


def _compiled_explain(fn):
    f = ember.compile(fn)
    x = ember.linspace(-1, 1, 7, requires_grad=True)
    for _ in range(2):
        out = f(x)
        out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), _add(x).detach().numpy(), rtol=1e-6)
    return f._ember_compiled.explain()


def test_explain_says_why_a_cache_others_can_write_is_not_used(cache):
    cache.mkdir(parents=True)
    cache.chmod(0o777)
    report = _compiled_explain(_add)
    assert "0 fused kernels" in report
    assert f"no fused kernels: kernel cache {cache} is not safe: it is writable by" in report


@needs_root
def test_explain_says_why_a_planted_kernel_is_not_loaded(cache, plant, tmp_path, monkeypatch):
    (name,) = _elsewhere(tmp_path, monkeypatch, lambda: _compiled_explain(_add))
    cache.mkdir(parents=True)
    marker = _give_away(cache / name, plant, tmp_path)
    report = _compiled_explain(_add)
    assert "0 fused kernels" in report
    assert "KernelCacheError: a cached kernel is owned by uid 1, not loaded" in report
    assert not marker.exists(), "the planted shared object was loaded"


def test_the_cache_keeps_the_recently_used_kernels_within_its_cap(cache, monkeypatch):
    a, b = _build(2.0).__file__, _build(3.0).__file__
    now = time.time()
    os.utime(a, (now - 100, now - 100))
    os.utime(b, (now - 50, now - 50))
    _forget_loaded(monkeypatch)
    _build(2.0)  # loaded from the cache: now the most recently used
    size = max(os.path.getsize(a), os.path.getsize(b))
    monkeypatch.setenv("EMBER_CACHE_MAX_MB", str(2.5 * size / 2**20))  # two kernels fit
    c = _build(4.0).__file__
    assert sorted(os.listdir(cache)) == sorted(os.path.basename(p) for p in (a, c))
    monkeypatch.setenv("EMBER_CACHE_MAX_MB", "0")  # the kernel just built is kept
    module = _build(5.0)
    assert os.listdir(cache) == [os.path.basename(module.__file__)]
    np.testing.assert_array_equal(module.k0(np.ones(8)), 5 * np.ones(8))


def test_a_cap_that_is_not_a_number_is_an_error(monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_MAX_MB", "lots")
    with pytest.raises(ValueError, match="EMBER_CACHE_MAX_MB='lots'"):
        _build()


# Each C file of lowerings.py's loops (in the package's c/ folder), with sizes to build it for.
LOWERING_BUILDS = {
    "max_pool2d.c": [
        (("max_pool2d", "max_pool2d_grad"), dict(H=4, W=6, OH=2, OW=3, KH=2, KW=2, PARALLEL=p))
        for p in (0, 1)
    ],
    "layer_norm.c": [(("layer_norm", "layer_norm_grad"), dict(D=8))],
    "embedding.c": [(("embedding_grad",), {})],
    # (the compiled core: dtype-independent, built here with T defined all the same)
    "core.c": [(("core_init", "record", "execute", "dependencies"), {})],
    "softmax.c": [(lowerings._SOFTMAX_NAMES, dict(D=8))],
    "attention.c": [(("attention", "attention_grad"), dict(L=4, S=5, E=8, EV=3))],
    "lstm.c": [(("lstm_cell", "lstm_cell_grad"), dict(H=8))],
    "conv2d.c": [
        (
            ("im2col", "col2im"),
            dict(H=5, W=6, OH=3, OW=4, KH=3, KW=2, SH=2, SW=1, DH=1, DW=2, PH=1, PW=0, PARALLEL=p),
        )
        for p in (0, 1)
    ],
    "batch_norm.c": [(lowerings._BN_NAMES, dict(C=3, L=5, PARALLEL=p)) for p in (0, 1)],
    "batch_norm_relu.c": [(lowerings._BN_RELU_NAMES, dict(C=3, L=5, PARALLEL=p)) for p in (0, 1)],
    "activation.c": [(lowerings._ACTIVATION_NAMES, {})],
}


def _c_files() -> set:
    """The names of the package's C files (.c and .h), as importlib.resources finds them."""
    folder = importlib.resources.files("ember._compile") / "c"
    return {f.name for f in folder.iterdir() if f.name.endswith((".c", ".h"))}


def _fused_sources() -> dict:
    """Generated kernels of every form: broadcasts, booleans, several outputs, a single
    element (no loop) and a loop split over the cores."""
    sources = {}
    for i, (fn, shapes, dtype) in enumerate(
        [
            (lambda a, b: (a * b > 0) * np.tanh(a) + np.where(b > 1, b, 0.5), [(3, 4), (4,)], "f"),
            (lambda a, b: np.maximum(a, b) ** 2 - np.exp(a) / b, [(5,), (5,)], "d"),
            (lambda a, b: np.sin(a) * b, [(), ()], "d"),
            (lambda a, b: np.hypot(a, b).astype(np.float32), [(1 << 18,), (1,)], "d"),
        ]
    ):
        leaves = tuple(leaf(f"v{j}", s, dtype) for j, s in enumerate(shapes))
        res = trace(fn, leaves)
        assert res is not None, f"kernel {i} should trace"
        group = Group(res.shape)
        group.members = [("out", res.node), ("twice", (res * 2).node)]
        group.outputs = ["out", "twice"]
        sources[f"k{i}"] = group.source(f"k{i}")
    return sources


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_c_sources_compile_without_warnings_under_wall(dtype, monkeypatch):
    assert "-Wall" in kernels._FLAGS and "-w" not in kernels._FLAGS
    c_files = {n for n in _c_files() if n.endswith(".c")}
    assert c_files == set(LOWERING_BUILDS), "a C file of the package this test does not build"
    read = set()  # the C files the modules below are made of (each is compiled: a fresh cache)
    c_file = kernels.c_file
    monkeypatch.setattr(kernels, "c_file", lambda name: read.add(name) or c_file(name))
    monkeypatch.setattr(kernels, "_FLAGS", [*kernels._FLAGS, "-Werror"])
    for name, builds in LOWERING_BUILDS.items():
        for names, sizes in builds:
            module = lowerings._module(name, names, np.dtype(dtype), **sizes)
            assert all(callable(getattr(module, n)) for n in names)
    if dtype == np.float64:  # the prelude with the generated kernels, once
        module = kernels.build(_fused_sources())
        out, twice = module.k2(np.array(0.5), np.array(3.0))
        assert out.item() == pytest.approx(np.sin(0.5) * 3) and twice == 2 * out
    assert read == _c_files(), "a C file of the package that no module here includes"


def test_each_c_file_compiles_as_it_is_with_its_macros_defined():
    """``_module`` puts only ``#define`` lines before a file: gcc compiles the file as it is,
    given them as -D options. (-fsyntax-only: outside a module, without its table of them,
    the functions are unused, which -Wall would warn of; the test above builds modules.)"""
    folder = importlib.resources.files("ember._compile") / "c"
    for name, builds in LOWERING_BUILDS.items():
        names, sizes = builds[0]
        for dtype in (np.float32, np.float64):
            defines = lowerings._defines(np.dtype(dtype), sizes)
            with importlib.resources.as_file(folder / name) as path:
                cmd = [kernels._cc(), "-fsyntax-only", "-Wall", "-Werror", "-fopenmp",
                       f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}",
                       *(f"-D{k}={v}" for k, v in defines.items()), str(path)]  # fmt: skip
                proc = subprocess.run(cmd, capture_output=True, text=True)
            assert proc.returncode == 0, f"{name} ({np.dtype(dtype)}):\n{proc.stderr}"


@pytest.mark.parametrize("changed", ["embedding.c", "lowering.h", "prelude.h"])
def test_the_cache_key_changes_with_a_c_file(changed, monkeypatch):
    """A module's name (its cache key) hashes its whole text: the C files it includes, a
    header included by another too."""
    before = lowerings._module("embedding.c", ("embedding_grad",), np.dtype(np.float32))
    c_file = kernels.c_file
    edited = lambda name: c_file(name) + ("/* edited */\n" if name == changed else "")
    monkeypatch.setattr(kernels, "c_file", edited)
    monkeypatch.setattr(lowerings, "_MODULES", {})
    after = lowerings._module("embedding.c", ("embedding_grad",), np.dtype(np.float32))
    assert after.__name__ != before.__name__


def test_compiler_warnings_are_logged_not_hidden(caplog):
    source = (
        "static PyObject *k0(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {\n"
        "  int unused_variable = 0;\n  Py_RETURN_NONE;\n}"
    )
    with caplog.at_level(logging.WARNING, logger="ember._compile.kernels"):
        module = kernels.build({"k0": source})
    assert module.k0() is None
    assert any("unused_variable" in r.getMessage() for r in caplog.records)
