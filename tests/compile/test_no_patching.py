"""ember.compile captures through hooks and a TorchFunctionMode: nothing public is replaced
while it runs (the capture once rewrote the namespace, which was neither thread-safe nor
visible to code that had imported the names)."""

from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F


def _public_attributes() -> dict:
    owners = {
        "ember": ember,
        "ember.Tensor": ember.Tensor,
        "ember.nn.functional": F,
        "ember.nn.Module": nn.Module,
        "ember.linalg": ember.linalg,
        "ember.special": ember.special,
    }
    return {
        (label, name): id(value)
        for label, owner in owners.items()
        for name, value in list(vars(owner).items())
    }


def test_nothing_public_changes_while_compiling():
    from ember import _tensor

    before = _public_attributes()
    seen = []

    def look(t) -> None:  # a tensor made while the capture runs: look around then
        if len(seen) < 3:
            seen.append(_public_attributes())

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.drop = nn.Dropout(0.1)

        def forward(self, x):
            y = F.relu(self.lin(x)) + ember.sigmoid(x).sum()
            return self.drop(y).argmax(dim=1), y

    model = Net()
    compiled = ember.compile(model)
    _tensor.WRAP_HOOKS.append(look)
    try:
        compiled(ember.randn(4, 3))
    finally:
        _tensor.WRAP_HOOKS.remove(look)
    assert "compiled" in compiled.explain()
    assert seen and all(s == before for s in seen)
    assert _public_attributes() == before

    f = ember.compile(lambda x: (x * 2).item())  # a graph break: eager, nothing left over
    f(ember.ones(1))
    assert _public_attributes() == before
