"""Every torch name that at least two of the real PyTorch programs in the project's API
census use (copied into tests/data from ../shared/api-census.tsv, 706 names) exists in
ember, except the names below, each with the reason."""

import csv
import importlib
import pathlib

import pytest

import ember

CENSUS = pathlib.Path(__file__).parent / "data" / "api-census.tsv"

# What a CPU/NumPy build cannot have, and why.
CANNOT_EXIST = {
    "torch.jagged": "nested (jagged) tensors: ragged layouts NumPy arrays cannot hold",
    "torch.nested": "nested (jagged) tensors: ragged layouts NumPy arrays cannot hold",
    "torch.nested.nested_tensor": "nested (jagged) tensors",
}

# Not built yet: each belongs to an open issue.
_TAIL = "issue 26's long tail, not built yet"
NOT_YET = {
    "torch.ops.aten._foreach_maximum_.overloads": _TAIL + " (torch.ops for _foreach_*)",
}

# Instance attributes: checked on an instance, not on the class.
INSTANCE = {
    "torch.nn.Module.training": lambda: ember.nn.Linear(1, 1),
    "torch.optim.Optimizer.param_groups": lambda: ember.optim.SGD(
        [ember.nn.Parameter(ember.ones(1))], lr=0.1
    ),
}


def _rows():
    with CENSUS.open() as fh:
        return [(r["name"], int(r["programs"])) for r in csv.DictReader(fh, delimiter="\t")]


def _resolve(name: str) -> bool:
    if name in INSTANCE:
        return hasattr(INSTANCE[name](), name.rsplit(".", 1)[1])
    parts = name.split(".")
    if parts[0] == "Tensor":
        obj, rest = ember.Tensor, parts[1:]
    else:
        parts[0] = "ember"
        for i in range(len(parts), 0, -1):
            try:
                obj, rest = importlib.import_module(".".join(parts[:i])), parts[i:]
                break
            except ImportError:
                continue
        else:
            return False
    for attr in rest:
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def test_census_rows_are_there():
    assert len(_rows()) > 450


@pytest.mark.parametrize(
    "name", [n for n, _ in _rows() if n not in CANNOT_EXIST and n not in NOT_YET]
)
def test_census_name_exists(name):
    assert _resolve(name), f"{name} is used by real programs and missing from ember"


@pytest.mark.parametrize("name", sorted({**CANNOT_EXIST, **NOT_YET}))
def test_skipped_names_are_still_missing(name):
    # If one of these appears, it must leave the skip-list (and get tests of its own).
    assert not _resolve(name)
