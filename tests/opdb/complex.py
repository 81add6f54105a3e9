"""Complex numbers: parts, conjugates, phase, and complex tensors built from real ones.

Inputs are real; complex operands are built inside ``fn`` (``complex``/``polar``) and complex
results are seen through ``view_as_real``, so every check runs on real tensors. Double
backward through complex intermediates is off where the path needs a complex product's rule
(ember's elementwise ``mul`` does not conjugate its rules yet)."""

from . import Op, P, S


def _z(m, x, y):
    return m.complex(x, y)


OPS = [
    Op("view_as_real", lambda m, x, y: m.view_as_real(_z(m, x, y)), (S(3, 4), S(3, 4))),
    Op("view_as_complex", lambda m, x: m.view_as_real(m.view_as_complex(x) * 2), (S(3, 2),)),
    Op("complex", lambda m, x, y: m.view_as_real(m.complex(x, y)), (S(3, 4), S(4))),
    Op("real", lambda m, x, y: _z(m, x, y).real * 1, (S(3, 4), S(3, 4))),
    Op("imag", lambda m, x, y: _z(m, x, y).imag * 1, (S(3, 4), S(3, 4))),
    # (torch's conj is a lazy view that view_as_real refuses: "* 1" materializes it)
    Op("conj", lambda m, x, y: m.view_as_real(_z(m, x, y).conj() * 1), (S(5), S(5))),
    Op("conj_physical", lambda m, x, y: m.view_as_real(m.conj_physical(_z(m, x, y))), (S(5), S(5))),
    Op("angle", lambda m, x, y: _z(m, x, y).angle(), (S(5), S(5)), double=False),
    Op("angle_real", lambda m, x: m.angle(x), (S(5),)),
    Op("polar", lambda m, r, t: m.view_as_real(m.polar(r, t)), (P(4), S(4)), double=False),
    # forward mode off: elementwise abs's tangent rule is not complex-aware yet
    Op("abs_complex", lambda m, x, y: _z(m, x, y).abs(), (S(5), S(5)), forward=False, double=False),
]
