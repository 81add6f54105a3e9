"""Optimizers and learning-rate schedulers with torch.optim's API and update rules.

Example:
    >>> import ember
    >>> w = ember.tensor([3.0], requires_grad=True)
    >>> opt = ember.optim.SGD([w], lr=0.25)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).backward(ember.ones(1))   # d(w^2)/dw = 2w
    ...     opt.step()
    >>> w
    tensor([0.3750], requires_grad=True)
"""

from . import lr_scheduler, swa_utils
from ._adafactor import Adafactor
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

Adafactor.__module__ = "ember.optim"  # as torch presents its Adafactor

__all__ = [
    "Adafactor",
    "Adadelta",
    "Adagrad",
    "Adam",
    "Adamax",
    "AdamW",
    "ASGD",
    "LBFGS",
    "lr_scheduler",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "SparseAdam",
    "swa_utils",
]
