"""ember.utils.data against torch.utils.data: batching, collation, samplers, splits, errors."""

import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata


def _to_np(x):
    """Nested structure of tensors -> same structure with NumPy arrays (for comparisons)."""
    if isinstance(x, ember.Tensor):
        return ("T", str(x.dtype), x._data.tolist())
    if isinstance(x, torch.Tensor):
        return ("T", str(x.dtype), x.numpy().tolist())
    if isinstance(x, dict):
        return {k: _to_np(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *[_to_np(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_to_np(v) for v in x])
    return x


def _both_tensor_datasets(n=10):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n, dtype=np.int64) % 3
    return (
        edata.TensorDataset(ember.tensor(x), ember.tensor(y)),
        tdata.TensorDataset(torch.tensor(x), torch.tensor(y)),
    )


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, True)])
def test_sequential_batches_match_torch(batch_size, drop_last):
    eds, tds = _both_tensor_datasets()
    el = edata.DataLoader(eds, batch_size=batch_size, drop_last=drop_last)
    tl = tdata.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(el) == len(tl)
    eb, tb = list(el), list(tl)
    assert len(eb) == len(tb)
    assert [_to_np(b) for b in eb] == [_to_np(b) for b in tb]
    assert isinstance(eb[0], list) and eb[0][0].shape == ember.Size([batch_size, 3])
    assert eb[0][0].dtype == ember.float32 and eb[0][1].dtype == ember.int64


def test_batch_owns_its_memory():
    eds, _ = _both_tensor_datasets()
    (x, _y) = next(iter(edata.DataLoader(eds, batch_size=4)))
    x._data[...] = -1
    assert eds.tensors[0]._data.min() >= 0


SAMPLES = {
    "tensors": [ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]), ember.tensor([5.0, 6.0])],
    "ints": [1, 2, 3],
    "floats": [0.5, 1.5, 2.5],
    "bools": [True, False, True],
    "strings": ["a", "b", "c"],
    "numpy": [np.arange(3, dtype=np.int32) + i for i in range(3)],
    "numpy_scalars": [np.float32(1.5), np.float32(2.5), np.float32(0.0)],
    "tuples": [(i, float(i), "s") for i in range(3)],
    "lists": [[i, i + 1] for i in range(3)],
    "dicts": [{"x": np.ones(2) * i, "label": i, "name": f"n{i}"} for i in range(3)],
    "nested": [{"a": (i, [i * 1.0, {"b": np.int64(i)}])} for i in range(3)],
}
Point = collections.namedtuple("Point", ["x", "y"])
SAMPLES["namedtuple"] = [Point(i, float(i)) for i in range(3)]


def _torchify(x):
    if isinstance(x, ember.Tensor):
        return torch.tensor(x._data)
    if isinstance(x, dict):
        return {k: _torchify(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_torchify(v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_torchify(v) for v in x)
    return x


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_default_collate_matches_torch(kind):
    batch = SAMPLES[kind]
    e = edata.default_collate(batch)
    t = tdata.default_collate([_torchify(b) for b in batch])
    assert _to_np(e) == _to_np(t)


@pytest.mark.parametrize("kind", ["numpy", "dicts", "tuples", "ints"])
def test_default_convert_matches_torch(kind):
    sample = SAMPLES[kind][1]
    assert _to_np(edata.default_convert(sample)) == _to_np(tdata.default_convert(sample))


def test_dict_dataset_through_loader():
    class DictDS(edata.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"image": np.full((2, 2), i, dtype=np.float32), "label": i}

    batches = list(edata.DataLoader(DictDS(), batch_size=2))
    assert [b["label"].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0]["image"].shape == ember.Size([2, 2, 2])
    assert batches[0]["image"].dtype == ember.float32
    assert batches[0]["label"].dtype == ember.int64


def test_collate_errors_match_torch():
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError) as e_info:
            edata.default_collate(bad)
        with pytest.raises(TypeError) as t_info:
            tdata.default_collate(bad)
        assert str(e_info.value).replace("torch.", "ember.") == str(t_info.value).replace(
            "torch.", "ember."
        )
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        edata.default_collate([[1, 2], [1]])
    with pytest.raises(RuntimeError) as e_info:
        edata.default_collate([ember.zeros(3), ember.zeros(2)])
    with pytest.raises(RuntimeError) as t_info:
        tdata.default_collate([torch.zeros(3), torch.zeros(2)])
    assert str(e_info.value) == str(t_info.value)


def test_shuffle_with_seeded_generator_is_deterministic():
    eds, _ = _both_tensor_datasets(20)

    def epoch_orders(seed, epochs=3):
        g = ember.Generator().manual_seed(seed)
        loader = edata.DataLoader(eds, batch_size=6, shuffle=True, generator=g)
        return [[int(row[0]) // 3 for x, _ in loader for row in x.tolist()] for _ in range(epochs)]

    a, b = epoch_orders(5), epoch_orders(5)
    assert a == b
    assert a[0] != a[1]  # a new permutation every epoch
    for order in a:
        assert sorted(order) == list(range(20))
    assert epoch_orders(6) != a


def test_shuffle_uses_global_generator():
    eds, _ = _both_tensor_datasets(30)

    def order():
        loader = edata.DataLoader(eds, batch_size=30, shuffle=True)
        (x, _y) = next(iter(loader))
        return (x._data[:, 0] // 3).astype(int).tolist()

    ember.manual_seed(123)
    first = order()
    ember.manual_seed(123)
    assert order() == first
    assert sorted(first) == list(range(30)) and first != list(range(30))


def test_drop_last_and_len():
    ds = list(range(10))
    assert len(edata.DataLoader(ds, batch_size=4)) == 3
    assert len(edata.DataLoader(ds, batch_size=4, drop_last=True)) == 2
    batches = list(edata.DataLoader(ds, batch_size=4, drop_last=True))
    assert [b.tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    unbatched = list(edata.DataLoader(np.arange(3.0), batch_size=None))
    assert [type(b) for b in unbatched] == [ember.Tensor] * 3
    assert unbatched[1].dtype == ember.float64 and unbatched[1].item() == 1.0


def test_iterable_dataset():
    class Stream(edata.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    assert [b.tolist() for b in edata.DataLoader(Stream(), batch_size=3)] == [
        [0, 1, 2],
        [3, 4, 5],
        [6],
    ]
    assert len(edata.DataLoader(Stream(), batch_size=3)) == 3
    assert len(edata.DataLoader(Stream(), batch_size=3, drop_last=True)) == 2
    assert len(list(edata.DataLoader(Stream(), batch_size=3, drop_last=True))) == 2


def _loader_error(module, *args, **kwargs):
    try:
        module.DataLoader(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 0},
        {"batch_size": -2},
        {"batch_size": 2.5},
        {"batch_size": None, "drop_last": True},
        {"num_workers": -1},
        {"timeout": -1},
        {"prefetch_factor": 2},
        {"persistent_workers": True},
        {"shuffle": True, "sampler": [0, 1]},
        {"batch_sampler": [[0]], "batch_size": 2},
        {"batch_sampler": [[0]], "shuffle": True},
        {"drop_last": 1},
    ],
    ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()),
)
def test_loader_errors_match_torch(kwargs):
    t_err = _loader_error(tdata, list(range(4)), **kwargs)
    assert t_err is not None
    assert _loader_error(edata, list(range(4)), **kwargs) == t_err


def test_loader_attributes_frozen_after_init():
    loader = edata.DataLoader(list(range(4)), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after"):
        loader.batch_size = 3


def test_samplers():
    assert list(edata.SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = ember.Generator().manual_seed(0)
    perm = list(edata.RandomSampler(range(8), generator=g))
    assert sorted(perm) == list(range(8))
    draws = list(edata.RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(draws) == 70 and set(draws) <= {0, 1, 2}
    longer = list(edata.RandomSampler(range(3), num_samples=7, generator=g))
    assert len(longer) == 7 and sorted(longer[:3]) == [0, 1, 2]
    bs = edata.BatchSampler(edata.SequentialSampler(range(10)), batch_size=4, drop_last=False)
    assert list(bs) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(bs) == 3
    assert sorted(edata.SubsetRandomSampler([4, 2, 9])) == [2, 4, 9]
    assert set(edata.WeightedRandomSampler([0, 0, 5.0], 6)) == {2}
    loader = edata.DataLoader(list(range(10)), batch_sampler=bs)
    assert [b.tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.RandomSampler(range(3), replacement=1),
        lambda m: m.RandomSampler(range(3), num_samples=0),
        lambda m: m.RandomSampler([], generator=None),
        lambda m: m.BatchSampler(range(3), batch_size=True, drop_last=False),
        lambda m: m.BatchSampler(range(3), batch_size=2, drop_last=None),
        lambda m: m.WeightedRandomSampler([1.0], num_samples=-1),
    ],
)
def test_sampler_errors_match_torch(make):
    with pytest.raises(Exception) as t_info:
        make(tdata)
    with pytest.raises(t_info.type) as e_info:
        make(edata)
    assert str(e_info.value) == str(t_info.value)


def test_random_split_sizes_and_disjointness():
    ds = list(range(23))
    parts = edata.random_split(ds, [10, 8, 5], generator=ember.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [10, 8, 5]
    flat = [x for p in parts for x in p]
    assert sorted(flat) == ds
    again = edata.random_split(ds, [10, 8, 5], generator=ember.Generator().manual_seed(1))
    assert [list(p) for p in again] == [list(p) for p in parts]
    assert all(isinstance(p, edata.Subset) and p.dataset is ds for p in parts)


@pytest.mark.parametrize("fractions", [[0.3, 0.3, 0.4], [0.5, 0.5], [0.1, 0.2, 0.7], [1.0]])
def test_random_split_fraction_lengths_match_torch(fractions):
    e = edata.random_split(range(31), fractions)
    t = tdata.random_split(range(31), fractions)
    assert [len(p) for p in e] == [len(p) for p in t]
    assert sorted(x for p in e for x in p) == list(range(31))


def test_random_split_errors_and_warnings_match_torch():
    for lengths in ([3, 3], [0.5, 0.6], [-0.5, 1.5]):
        with pytest.raises(ValueError) as t_info:
            tdata.random_split(range(10), lengths)
        with pytest.raises(ValueError) as e_info:
            edata.random_split(range(10), lengths)
        assert str(e_info.value) == str(t_info.value)
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        edata.random_split(range(1), [0.5, 0.5])


def test_subset_and_concat():
    eds, _ = _both_tensor_datasets(6)
    sub = edata.Subset(eds, [5, 1])
    assert len(sub) == 2 and sub[0][1].item() == 5 % 3
    assert [b[1].tolist() for b in edata.DataLoader(sub, batch_size=2)] == [[2, 1]]
    cat = eds + eds
    assert isinstance(cat, edata.ConcatDataset) and len(cat) == 12
    assert cat[7][0].tolist() == eds[1][0].tolist()
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        edata.TensorDataset(ember.zeros(3), ember.zeros(4))


def test_tensor_dataset_item_and_shapes():
    eds, tds = _both_tensor_datasets(4)
    assert len(eds) == len(tds) == 4
    assert _to_np(eds[2]) == _to_np(tds[2])


def test_no_warnings_in_plain_use():
    eds, _ = _both_tensor_datasets()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(edata.DataLoader(eds, batch_size=3, shuffle=True))


def test_batches_of_tensors_that_require_grad_stay_in_the_graph():
    x = ember.tensor(np.arange(10.0).reshape(5, 2), requires_grad=True)
    ds = edata.TensorDataset(x, ember.arange(5))
    assert ds[1][0].requires_grad
    xb, yb = next(iter(edata.DataLoader(ds, batch_size=2, shuffle=False)))
    assert xb.requires_grad and xb.grad_fn is not None and not yb.requires_grad
    xb.backward(ember.ones(2, 2, dtype=ember.float64))
    np.testing.assert_array_equal(x.grad._data, [[1, 1], [1, 1], [0, 0], [0, 0], [0, 0]])
