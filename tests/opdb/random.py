"""In-place random fills: the filled values do not depend on the old ones (zero gradient).

torch draws other numbers (another generator), so values are not compared with torch; each
fill uses a freshly seeded generator so that central differences see a fixed function.
"""

from . import Op, S, U


def _gen(m):
    return m.Generator().manual_seed(3)


OPS = [
    Op(
        "uniform_",
        lambda m, x: x * 1 + x.clone().uniform_(-1, 2, generator=_gen(m)),
        (S(3, 4),),
        torch=False,
    ),
    Op(
        "normal_",
        lambda m, x: x * 1 + x.clone().normal_(0, 0.5, generator=_gen(m)),
        (S(5),),
        torch=False,
    ),
    Op(
        "random_",
        lambda m, x: x * 1 + x.clone().random_(0, 4, generator=_gen(m)),
        (S(5),),
        torch=False,
    ),
    Op(
        "random_full",
        lambda m, x: x * 1 + x.clone().random_(generator=_gen(m)) * 0,
        (S(5),),
        torch=False,
    ),
    Op(
        "bernoulli_",
        lambda m, x: x * 1 + x.clone().bernoulli_(0.3, generator=_gen(m)),
        (S(5),),
        torch=False,
    ),
    Op(
        "bernoulli_tensor_p",
        lambda m, x, p: x * 1 + x.clone().bernoulli_(p.abs().detach(), generator=_gen(m)),
        (S(5), U(5)),
        torch=False,
    ),
    Op(
        "exponential_",
        lambda m, x: x * 1 + x.clone().exponential_(2.0, generator=_gen(m)),
        (S(5),),
        torch=False,
    ),
]

# torch.normal and torch.bernoulli of tensors: the samples' gradient to the parameters is
# zero (torch's NormalBackward1/2/3, BernoulliBackward0). The parameters are made constant
# (``* 0``) so that central differences see a fixed function too.
OPS += [
    Op(
        "normal_tensor_tensor",
        lambda m, x, y: x * 1 + m.normal(x * 0, y * 0 + 0.5, generator=_gen(m)),
        (S(3, 4), S(4)),
        torch=False,
    ),
    Op(
        "normal_tensor_float",
        lambda m, x: x * 1 + m.normal(x * 0 + 1, 2.0, generator=_gen(m)),
        (S(5),),
        torch=False,
    ),
    Op(
        "normal_float_tensor",
        lambda m, x: x * 1 + m.normal(1.0, x * 0 + 2, generator=_gen(m)),
        (S(5),),
        torch=False,
    ),
    Op(
        "bernoulli_tensor",
        lambda m, x: x * 1 + (x * 0 + 0.4).bernoulli(generator=_gen(m)),
        (S(5),),
        torch=False,
    ),
]
