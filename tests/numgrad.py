"""Central finite differences shared by the op tests (float64, any number of inputs/outputs)."""

import numpy as np

import ember


def _outputs(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def numgrad(fn, arrays, weights, eps=1e-6):
    """Gradient of ``sum_k <fn(*arrays)[k], weights[k]>`` w.r.t. each array, by central
    differences. ``arrays`` are float64 NumPy arrays (perturbed in place and restored)."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for j in range(flat.size):
            orig = flat[j]
            vals = []
            for d in (eps, -eps):
                flat[j] = orig + d
                with ember.no_grad():
                    outs = _outputs(fn(*[ember.tensor(x) for x in arrays]))
                vals.append(sum(float((o.numpy() * w).sum()) for o, w in zip(outs, weights)))
            flat[j] = orig
            gflat[j] = (vals[0] - vals[1]) / (2 * eps)
        grads.append(g)
    return grads
