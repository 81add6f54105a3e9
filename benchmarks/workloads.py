"""Benchmark workloads W1-W5: one definition each, implemented per library.

Every implementation takes the inputs a workload's ``make`` returns (NumPy arrays) and
returns ``(value, [gradients...])`` as NumPy arrays, so the runner can check each
implementation's gradients against the float64 reference before timing it.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os

import numpy as np


def _jax():
    """JAX with float64 enabled, so float64 workloads stay float64 as in the other libraries."""
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, importlib.import_module("jax.numpy")


# -- W1 tiny-ops: 1000 elementwise ops on a 3-element leaf --------------------------------

W1_OPS = 1000


def w1_make(seed=0, n_ops=W1_OPS):
    rng = np.random.default_rng(seed)
    return {"x0": rng.uniform(0.1, 0.5, 3).astype(np.float64), "n_ops": n_ops}


def _w1_chain(x0, n_ops, sin, tanh):
    y = x0
    for i in range(n_ops):
        k = i % 5
        if k == 0:
            y = y * 1.001
        elif k == 1:
            y = y + 0.01
        elif k == 2:
            y = sin(y)
        elif k == 3:
            y = y * x0
        else:
            y = tanh(y)
    return y


def w1_numpy(inp):
    """Hand-written forward and backward: the floor."""
    x0, n = inp["x0"], inp["n_ops"]
    tape = []
    y = x0
    for i in range(n):
        k = i % 5
        if k == 0:
            y = y * 1.001
        elif k == 1:
            y = y + 0.01
        elif k == 2:
            tape.append(y)
            y = np.sin(y)
        elif k == 3:
            tape.append(y)
            y = y * x0
        else:
            y = np.tanh(y)
            tape.append(y)
    value = y.sum()
    g = np.ones_like(y)
    gx0 = np.zeros_like(x0)
    for i in reversed(range(n)):
        k = i % 5
        if k == 0:
            g = g * 1.001
        elif k == 2:
            g = g * np.cos(tape.pop())
        elif k == 3:
            gx0 += g * tape.pop()
            g = g * x0
        elif k == 4:
            t = tape.pop()
            g = g * (1 - t * t)
    gx0 += g
    return value, [gx0]


def _w1_torchlike(lib, dtype, compiled=False):
    def loss(x0, n_ops):
        return _w1_chain(x0, n_ops, lib.sin, lib.tanh).sum()

    f = _maybe_compiled(lib, loss, compiled)

    def run(inp):
        x0 = lib.tensor(inp["x0"], dtype=dtype, requires_grad=True)
        s = f(x0, inp["n_ops"])
        s.backward()
        return float(s.detach()), [x0.grad.detach().numpy().astype(np.float64)]

    run.compiled = f  # tests read its explain()
    return run


def w1_autograd(inp):
    ag, anp = importlib.import_module("autograd"), importlib.import_module("autograd.numpy")
    f = lambda x0: _w1_chain(x0, inp["n_ops"], anp.sin, anp.tanh).sum()  # noqa: E731
    g = ag.value_and_grad(f)(inp["x0"])
    return float(g[0]), [np.asarray(g[1])]


def w1_mygrad(inp):
    mg = importlib.import_module("mygrad")
    x0 = mg.tensor(inp["x0"])
    s = _w1_chain(x0, inp["n_ops"], mg.sin, mg.tanh).sum()
    s.backward()
    return float(s.item()), [np.asarray(x0.grad)]


def w1_jax(inp):
    jax, jnp = _jax()
    f = lambda x0: _w1_chain(x0, inp["n_ops"], jnp.sin, jnp.tanh).sum()  # noqa: E731
    v, g = jax.value_and_grad(f)(jnp.asarray(inp["x0"]))
    return float(v), [np.asarray(g)]


# -- W2 mlp-step: 784-512-512-10 ReLU MLP, softmax cross-entropy, batch 128 ---------------


def w2_make(seed=0, batch=128, sizes=(784, 512, 512, 10), dtype=np.float32):
    rng = np.random.default_rng(seed)
    inp = {
        "x": rng.standard_normal((batch, sizes[0])).astype(dtype),
        "y": rng.integers(0, sizes[-1], batch),
    }
    for i in range(3):
        bound = 1 / math.sqrt(sizes[i])
        inp[f"W{i}"] = rng.uniform(-bound, bound, (sizes[i], sizes[i + 1])).astype(dtype)
        inp[f"b{i}"] = rng.uniform(-bound, bound, sizes[i + 1]).astype(dtype)
    return inp


W2_PARAMS = ["W0", "b0", "W1", "b1", "W2", "b2"]


def w2_numpy(inp):
    x, y = inp["x"], inp["y"]
    W0, b0, W1, b1, W2, b2 = (inp[k] for k in W2_PARAMS)
    h0 = x @ W0 + b0
    a0 = np.maximum(h0, 0)
    h1 = a0 @ W1 + b1
    a1 = np.maximum(h1, 0)
    z = a1 @ W2 + b2
    zmax = z.max(axis=1, keepdims=True)
    e = np.exp(z - zmax)
    se = e.sum(axis=1, keepdims=True)
    logp = z - zmax - np.log(se)
    n = x.shape[0]
    loss = -logp[np.arange(n), y].mean()
    gz = e / se
    gz[np.arange(n), y] -= 1
    gz /= n
    gW2 = a1.T @ gz
    gb2 = gz.sum(0)
    ga1 = gz @ W2.T
    ga1 *= h1 > 0
    gW1 = a0.T @ ga1
    gb1 = ga1.sum(0)
    ga0 = ga1 @ W1.T
    ga0 *= h0 > 0
    gW0 = x.T @ ga0
    gb0 = ga0.sum(0)
    return float(loss), [gW0, gb0, gW1, gb1, gW2, gb2]


def _w2_torchlike(lib, compiled=False):
    def loss_fn(x, y, W0, b0, W1, b1, W2, b2):
        a0 = (x @ W0 + b0).relu()
        a1 = (a0 @ W1 + b1).relu()
        z = a1 @ W2 + b2
        logp = z.log_softmax(1)
        return -logp[lib.arange(x.shape[0]), y].mean()

    f = _maybe_compiled(lib, loss_fn, compiled)

    def run(inp):
        # from_numpy shares memory: no input copies, as in the NumPy floor.
        ps = [lib.from_numpy(inp[k]).requires_grad_() for k in W2_PARAMS]
        x = lib.from_numpy(inp["x"])
        y = lib.from_numpy(inp["y"])
        loss = f(x, y, *ps)
        loss.backward()
        return float(loss.detach()), [p.grad.detach().numpy() for p in ps]

    run.compiled = f  # tests read its explain()
    return run


def w2_autograd(inp):
    ag, anp = importlib.import_module("autograd"), importlib.import_module("autograd.numpy")
    x, y = inp["x"], inp["y"]

    def loss(W0, b0, W1, b1, W2, b2):
        a0 = anp.maximum(anp.dot(x, W0) + b0, 0)
        a1 = anp.maximum(anp.dot(a0, W1) + b1, 0)
        z = anp.dot(a1, W2) + b2
        zmax = anp.max(z, axis=1, keepdims=True)
        logp = z - zmax - anp.log(anp.sum(anp.exp(z - zmax), axis=1, keepdims=True))
        return -anp.mean(logp[anp.arange(x.shape[0]), y])

    v, g = ag.value_and_grad(loss, argnum=list(range(6)))(*(inp[k] for k in W2_PARAMS))
    return float(v), [np.asarray(t) for t in g]


def w2_mygrad(inp):
    mg = importlib.import_module("mygrad")
    ps = [mg.tensor(inp[k]) for k in W2_PARAMS]
    x, y = inp["x"], inp["y"]
    W0, b0, W1, b1, W2, b2 = ps
    a0 = mg.maximum(mg.matmul(x, W0) + b0, 0)
    a1 = mg.maximum(mg.matmul(a0, W1) + b1, 0)
    z = mg.matmul(a1, W2) + b2
    zmax = mg.max(z, axis=1, keepdims=True)
    logp = z - zmax - mg.log(mg.sum(mg.exp(z - zmax), axis=1, keepdims=True))
    loss = -mg.mean(logp[np.arange(x.shape[0]), y])
    loss.backward()
    return float(loss.item()), [np.asarray(p.grad) for p in ps]


def _w2_jax_loss():
    jax, jnp = _jax()

    def loss(params, x, y):
        W0, b0, W1, b1, W2, b2 = params
        a0 = jnp.maximum(x @ W0 + b0, 0)
        a1 = jnp.maximum(a0 @ W1 + b1, 0)
        logp = jax.nn.log_softmax(a1 @ W2 + b2, axis=1)
        return -jnp.mean(logp[jnp.arange(x.shape[0]), y])

    return jax, loss


def w2_jax(inp):
    jax, loss = _w2_jax_loss()
    v, g = jax.value_and_grad(loss)([inp[k] for k in W2_PARAMS], inp["x"], inp["y"])
    return float(v), [np.asarray(t) for t in g]


# -- W3 big-elementwise: 4M float32, (tanh(x*w+b) * sigmoid(x)).sum() ---------------------


def w3_make(seed=0, n=4_000_000, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(n).astype(dtype) for k in ("x", "w", "b")}


def w3_numpy(inp):
    x, w, b = inp["x"], inp["w"], inp["b"]
    t = np.tanh(x * w + b)
    s = 1 / (1 + np.exp(-x))
    value = np.dot(t, s)
    gu = s * (1 - t * t)
    return float(value), [gu * x, gu]


def _w3_torchlike(lib, compiled=False):
    f = _maybe_compiled(lib, lambda x, w, b: ((x * w + b).tanh() * x.sigmoid()).sum(), compiled)

    def run(inp):
        x = lib.from_numpy(inp["x"])
        w = lib.from_numpy(inp["w"]).requires_grad_()
        b = lib.from_numpy(inp["b"]).requires_grad_()
        out = f(x, w, b)
        out.backward()
        return float(out.detach()), [w.grad.numpy(), b.grad.numpy()]

    run.compiled = f  # tests read its explain()
    return run


def w3_autograd(inp):
    ag, anp = importlib.import_module("autograd"), importlib.import_module("autograd.numpy")
    x = inp["x"]
    f = lambda w, b: anp.sum(anp.tanh(x * w + b) / (1 + anp.exp(-x)))  # noqa: E731
    v, g = ag.value_and_grad(f, argnum=[0, 1])(inp["w"], inp["b"])
    return float(v), [np.asarray(t) for t in g]


def w3_mygrad(inp):
    mg = importlib.import_module("mygrad")
    x = inp["x"]
    w, b = mg.tensor(inp["w"]), mg.tensor(inp["b"])
    out = mg.sum(mg.tanh(x * w + b) / (1 + mg.exp(-x)))
    out.backward()
    return float(out.item()), [np.asarray(w.grad), np.asarray(b.grad)]


def w3_jax(inp):
    jax, jnp = _jax()
    x = inp["x"]
    f = lambda w, b: jnp.sum(jnp.tanh(x * w + b) * jax.nn.sigmoid(x))  # noqa: E731
    v, g = jax.value_and_grad(f, argnums=(0, 1))(inp["w"], inp["b"])
    return float(v), [np.asarray(t) for t in g]


# -- W5 scalar-graph: 200 0-d leaves, 5000 random + * tanh nodes ----------------------------


def w5_make(seed=0, n_leaves=200, n_nodes=5000):
    rng = np.random.default_rng(seed)
    leaves = rng.uniform(-1, 1, n_leaves)
    ops = []
    for i in range(n_nodes):
        kind = int(rng.integers(0, 3))
        a = int(rng.integers(0, n_leaves + i))
        b = int(rng.integers(0, n_leaves + i))
        ops.append((kind, a, b))
    return {"leaves": leaves, "ops": ops}


def _w5_build(values, ops, tanh):
    vals = list(values)
    for kind, a, b in ops:
        if kind == 0:
            vals.append(vals[a] + vals[b])
        elif kind == 1:
            vals.append(vals[a] * vals[b] * 0.5)
        else:
            vals.append(tanh(vals[a]))
    return vals[-1]


def w5_numpy(inp):
    leaves, ops = inp["leaves"], inp["ops"]
    vals = [float(v) for v in leaves]
    for kind, a, b in ops:
        if kind == 0:
            vals.append(vals[a] + vals[b])
        elif kind == 1:
            vals.append(vals[a] * vals[b] * 0.5)
        else:
            vals.append(math.tanh(vals[a]))
    grads = [0.0] * len(vals)
    grads[-1] = 1.0
    n0 = len(leaves)
    for i in range(len(ops) - 1, -1, -1):
        kind, a, b = ops[i]
        g = grads[n0 + i]
        if g == 0.0:
            continue
        if kind == 0:
            grads[a] += g
            grads[b] += g
        elif kind == 1:
            grads[a] += g * vals[b] * 0.5
            grads[b] += g * vals[a] * 0.5
        else:
            t = vals[n0 + i]
            grads[a] += g * (1 - t * t)
    return vals[-1], [np.array(grads[:n0])]


def _w5_torchlike(lib):
    def run(inp):
        leaves = [
            lib.tensor(float(v), dtype=lib.float64, requires_grad=True) for v in inp["leaves"]
        ]
        out = _w5_build(leaves, inp["ops"], lib.tanh)
        out.backward()
        grads = [0.0 if t.grad is None else float(t.grad) for t in leaves]
        return float(out.detach()), [np.array(grads)]

    return run


def w5_autograd(inp):
    ag, anp = importlib.import_module("autograd"), importlib.import_module("autograd.numpy")
    f = lambda leaves: _w5_build(
        [leaves[i] for i in range(len(inp["leaves"]))],  # noqa: E731
        inp["ops"],
        anp.tanh,
    )
    v, g = ag.value_and_grad(f)(inp["leaves"])
    return float(v), [np.asarray(g)]


def w5_mygrad(inp):
    mg = importlib.import_module("mygrad")
    leaves = [mg.tensor(float(v)) for v in inp["leaves"]]
    out = _w5_build(leaves, inp["ops"], mg.tanh)
    out.backward()
    return float(out.item()), [np.array([0.0 if t.grad is None else float(t.grad) for t in leaves])]


def w5_jax(inp):
    jax, jnp = _jax()
    leaves = [jnp.asarray(v) for v in inp["leaves"]]
    f = lambda *ls: _w5_build(list(ls), inp["ops"], jnp.tanh)  # noqa: E731
    v, g = jax.value_and_grad(f, argnums=tuple(range(len(leaves))))(*leaves)
    return float(v), [np.array([float(t) for t in g])]


# -- W4 hvp: Hessian-vector product of sum(tanh(A @ x) ** 2) by double backward ----------


def w4_make(seed=0, n=1000):
    rng = np.random.default_rng(seed)
    return {
        "A": rng.standard_normal((n, n)) / math.sqrt(n),
        "x": rng.standard_normal(n),
        "v": rng.standard_normal(n),
    }


def w4_numpy(inp):
    """Closed-form H v: with t = tanh(Ax), grad = A^T (2 t (1 - t^2)),
    H v = A^T (d/du[2 t (1 - t^2)] * (A v)) and d/du = 2 (1 - t^2)(1 - 3 t^2)."""
    a, x, v = inp["A"], inp["x"], inp["v"]
    t = np.tanh(a @ x)
    s = 1 - t * t
    hv = a.T @ (2 * s * (1 - 3 * t * t) * (a @ v))
    return float(np.sum(t * t)), [hv]


def _w4_torchlike(lib, compiled=False):
    def hvp(a, v, x):
        y = (lib.tanh(a @ x) ** 2).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (hv,) = lib.autograd.grad(g @ v, x)
        return y.detach(), hv

    f = _maybe_compiled(lib, hvp, compiled)

    def run(inp):
        a = lib.from_numpy(inp["A"])
        v = lib.from_numpy(inp["v"])
        x = lib.from_numpy(inp["x"]).requires_grad_()
        y, hv = f(a, v, x)
        return float(y.detach()), [hv.detach().numpy()]

    run.compiled = f  # tests read its explain()
    return run


def w4_autograd(inp):
    ag, anp = importlib.import_module("autograd"), importlib.import_module("autograd.numpy")
    a = inp["A"]
    f = lambda x: anp.sum(anp.tanh(anp.dot(a, x)) ** 2)  # noqa: E731
    hv = ag.hessian_vector_product(f)(inp["x"], inp["v"])
    return float(f(inp["x"])), [np.asarray(hv)]


def w4_jax(inp):
    jax, jnp = _jax()
    a = jnp.asarray(inp["A"])
    f = lambda x: jnp.sum(jnp.tanh(a @ x) ** 2)  # noqa: E731
    hv = jax.jvp(jax.grad(f), (jnp.asarray(inp["x"]),), (jnp.asarray(inp["v"]),))[1]
    return float(f(inp["x"])), [np.asarray(hv)]


# -- W7 conv-step: conv(1->16, 3x3, pad 1)-ReLU-maxpool 2-linear(256->10), batch 64 8x8 ----


def w7_make(seed=0, batch=64, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((batch, 1, 8, 8)).astype(dtype),
        "y": rng.integers(0, 10, batch),
        "K": (rng.standard_normal((16, 1, 3, 3)) / 3).astype(dtype),
        "kb": (rng.standard_normal(16) * 0.1).astype(dtype),
        "W": (rng.standard_normal((10, 256)) / 16).astype(dtype),
        "wb": (rng.standard_normal(10) * 0.1).astype(dtype),
    }


W7_PARAMS = ["K", "kb", "W", "wb"]


def w7_numpy(inp):
    """Hand-written conv net step: im2col by sliding windows, col2im by kernel offsets."""
    x, y, K, kb, W, wb = inp["x"], inp["y"], inp["K"], inp["kb"], inp["W"], inp["wb"]
    n = x.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # n,1,8,8,3,3
    h = np.einsum("ncijkl,ockl->noij", cols, K, optimize=True) + kb[:, None, None]
    a = np.maximum(h, 0)
    blocks = a.reshape(n, 16, 4, 2, 4, 2)
    p = blocks.max(axis=(3, 5))
    flat = p.reshape(n, 256)
    z = flat @ W.T + wb
    zmax = z.max(axis=1, keepdims=True)
    e = np.exp(z - zmax)
    se = e.sum(axis=1, keepdims=True)
    loss = -(z - zmax - np.log(se))[np.arange(n), y].mean()
    gz = e / se
    gz[np.arange(n), y] -= 1
    gz /= n
    gW = gz.T @ flat
    gwb = gz.sum(0)
    gp = (gz @ W).reshape(n, 16, 4, 1, 4, 1)
    mask = blocks == p.reshape(n, 16, 4, 1, 4, 1)
    ga = (mask * gp).reshape(n, 16, 8, 8)
    gh = ga * (h > 0)
    gK = np.einsum("noij,ncijkl->ockl", gh, cols, optimize=True)
    gkb = gh.sum(axis=(0, 2, 3))
    return float(loss), [gK, gkb, gW, gwb]


def _w7_torchlike(lib, compiled=False):
    F = lib.nn.functional

    def loss_fn(x, y, K, kb, W, wb):
        a = F.relu(F.conv2d(x, K, kb, padding=1))
        z = F.linear(F.max_pool2d(a, 2).flatten(1), W, wb)
        return F.cross_entropy(z, y)

    f = _maybe_compiled(lib, loss_fn, compiled)

    def run(inp):
        K, kb, W, wb = (lib.from_numpy(inp[k]).requires_grad_() for k in W7_PARAMS)
        x, y = lib.from_numpy(inp["x"]), lib.from_numpy(inp["y"])
        loss = f(x, y, K, kb, W, wb)
        loss.backward()
        return float(loss.detach()), [t.grad.numpy() for t in (K, kb, W, wb)]

    run.compiled = f  # tests read its explain()
    return run


# -- registry ------------------------------------------------------------------------------


def _maybe_compiled(lib, fn, compiled: bool):
    """``lib.compile(fn)`` for the compiled rows (compiled once, reused by every run)."""
    return lib.compile(fn) if compiled else fn


def implementations(workload: str) -> dict:
    """name -> callable for one workload; peers are imported lazily when called."""
    import ember

    def torch_impl(factory, *args):
        def run(inp):
            torch = importlib.import_module("torch")
            return factory(torch, *args)(inp)

        return run

    def torch_compiled(factory, *args):
        made = []  # one compiled function for all runs (compiling is the first call's cost)

        def run(inp):
            if not made:
                made.append(factory(importlib.import_module("torch"), *args, compiled=True))
            return made[0](inp)

        return run

    table = {
        "W1": {
            "numpy": w1_numpy,
            "ember": _w1_torchlike(ember, ember.float64),
            "ember-compiled": _w1_torchlike(ember, ember.float64, compiled=True),
            "torch": torch_impl(lambda t: _w1_torchlike(t, t.float64)),
            "autograd": w1_autograd,
            "mygrad": w1_mygrad,
            "jax": w1_jax,
        },
        "W2": {
            "numpy": w2_numpy,
            "ember": _w2_torchlike(ember),
            "ember-compiled": _w2_torchlike(ember, compiled=True),
            "torch": torch_impl(_w2_torchlike),
            "torch-compiled": torch_compiled(_w2_torchlike),
            "autograd": w2_autograd,
            "mygrad": w2_mygrad,
            "jax": w2_jax,
        },
        "W3": {
            "numpy": w3_numpy,
            "ember": _w3_torchlike(ember),
            "ember-compiled": _w3_torchlike(ember, compiled=True),
            "torch": torch_impl(_w3_torchlike),
            "torch-compiled": torch_compiled(_w3_torchlike),
            "autograd": w3_autograd,
            "mygrad": w3_mygrad,
            "jax": w3_jax,
        },
        "W4": {
            "numpy": w4_numpy,
            "ember": _w4_torchlike(ember),
            "ember-compiled": _w4_torchlike(ember, compiled=True),
            "torch": torch_impl(_w4_torchlike),
            "torch-compiled": torch_compiled(_w4_torchlike),
            "autograd": w4_autograd,
            "jax": w4_jax,
        },
        "W7": {
            "numpy": w7_numpy,
            "ember": _w7_torchlike(ember),
            "ember-compiled": _w7_torchlike(ember, compiled=True),
            "torch": torch_impl(_w7_torchlike),
            "torch-compiled": torch_compiled(_w7_torchlike),
        },
        "W5": {
            "numpy": w5_numpy,
            "ember": _w5_torchlike(ember),
            "torch": torch_impl(_w5_torchlike),
            "autograd": w5_autograd,
            "mygrad": w5_mygrad,
            "jax": w5_jax,
        },
    }
    return table[workload]


MAKERS = {
    "W1": w1_make,
    "W2": w2_make,
    "W3": w3_make,
    "W4": w4_make,
    "W5": w5_make,
    "W7": w7_make,
}


def reference(workload: str, inp: dict):
    """The float64 hand-written NumPy result every implementation is checked against."""
    as64 = {
        k: (v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)
        for k, v in inp.items()
    }
    return implementations(workload)["numpy"](as64)


def blas_threads() -> int:
    """How many threads NumPy's BLAS uses (threadpoolctl, else the usual environment
    variables): the scripts give torch as many, so the matmuls compare fairly."""
    try:
        from threadpoolctl import threadpool_info

        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        if blas:
            return blas[0]
    except ImportError:
        pass
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var):
            return int(os.environ[var])
    return os.cpu_count() or 1


def timings_in_own_processes(script: str, argv: list) -> dict:
    """A script's timings with each library in its own Python process (the script run with
    ``--only ember`` and ``--only torch``, each printing its timings as a JSON line last):
    neither library's thread pools, spinning after their work, nor its allocator settings
    then touch the other's, as for a program using one of them."""
    import json
    import subprocess
    import sys

    results = {}
    for lib in ("ember", "torch"):
        out = subprocess.run(
            [sys.executable, script, "--only", lib, *argv],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        results.update(json.loads(out.strip().splitlines()[-1]))
    return results


def add_process_options(parser) -> None:
    """``--separate`` (each library timed in its own process) and ``--only LIB`` (what
    ``--separate`` runs: one library's timings, as JSON)."""
    parser.add_argument(
        "--separate", action="store_true", help="time each library in its own process"
    )
    parser.add_argument("--only", choices=("ember", "torch"), help=argparse.SUPPRESS)


def step_script_args(description: str, repeats: int, argv):
    """The options of the W9 and W10 scripts: ``--repeats``, ``--profile``, ``--no-compile``
    and the process options (``add_process_options``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-compile", action="store_true", help="skip both compilers")
    add_process_options(parser)
    args = parser.parse_args(argv)
    # what a --separate run passes on to each library's process
    args.forwarded = [f"--repeats={args.repeats}"] + (["--no-compile"] if args.no_compile else [])
    return args


def print_profile(step, repeats: int, top: int = 15, sort: str = "tottime") -> None:
    """cProfile's ``top`` functions (by ``sort``) over ``repeats`` calls of ``step()``: the
    profile each script's ``--profile`` prints for BENCHMARKS.md."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeats):
        step()
    prof.disable()
    pstats.Stats(prof).sort_stats(sort).print_stats(top)
