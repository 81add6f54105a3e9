"""Small programs that chain ops of several families."""

from . import Op, S

OPS = [
    # compositions
    Op(
        "mlp",
        lambda m, x, w, b: (m.tanh(x @ w + b) ** 2).sum(1).log_softmax(0),
        (S(4, 3), S(3, 5), S(5)),
    ),
]
