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

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
