"""ember.linalg: inverses, determinants, solves, factorizations, norms, svd."""

OPS: list = []
