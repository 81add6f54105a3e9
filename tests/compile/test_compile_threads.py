"""ember.compile's first call (the capture) while other threads run eager ops.

The capture's hooks are process-wide; the ops of other threads must neither enter the
capture (making it fall back, or worse) nor be changed by it (the capture snapshots and
restores the tensors a side effect updates).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

import ember


def test_a_capture_ignores_and_leaves_alone_the_ops_of_other_threads():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: ops interleave with the capture
    try:
        stop = threading.Event()
        started = threading.Event()

        def f(x):
            for _ in range(200):
                x = x * 1.0001 + 0.1
            return x

        cf = ember.compile(f)
        bn = ember.nn.BatchNorm1d(3)
        batches = [ember.randn(5, 3) for _ in range(50)]
        seen = []

        def compiling():
            started.set()
            for i in range(4):
                cf(ember.ones(4 + i))
            stop.set()

        def training():
            started.wait()
            k = 0
            while not stop.is_set() or k < 20:
                bn(batches[k % 50])
                seen.append(k % 50)
                k += 1

        threads = [threading.Thread(target=compiling), threading.Thread(target=training)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert "eagerly" not in cf.explain(), cf.explain()
    # The batch norm's statistics are those of the batches it saw, in order.
    want = ember.nn.BatchNorm1d(3)
    for k in seen:
        want(batches[k])
    np.testing.assert_allclose(bn.running_mean.numpy(), want.running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), want.running_var.numpy(), rtol=1e-6)
    assert int(bn.num_batches_tracked) == len(seen)
