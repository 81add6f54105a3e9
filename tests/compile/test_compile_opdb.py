"""Every op-database entry, compiled and eager: the same values and gradients (float64
1e-10, float32 1e-5). Never a silently wrong result; only the entries listed in ``EAGER``
may run eagerly, and those must say why."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from opdb import all_ops, as_tuple, case

OPS = all_ops()
PARAMS = [pytest.param(op, id=f"{op.family}:{op.name}") for op in OPS]

# Why an entry cannot be captured (explain() names the op or the line that breaks).
_VALUE_SHAPED = "the output's shape depends on the input's values"
_NO_FORWARD = "its op declares no forward the generated code could replay"
_RANDOM_FILL = "an in-place random fill, whose op declares no forward to replay"
_INDEX = "an integer index or mask that no tensor holds, computed outside the graph"
_INPLACE = "an in-place write inside the compiled region"
_INPLACE_VIEW = "an in-place op on a view (apply_inplace), not a declared op"
_BAGS = "embedding_bag's _Bags parameter, an object its forward may change"

# The entries allowed to run eagerly (both dtypes), with the reason; any other entry that
# falls back fails test_compiled_equals_eager, and so does a listed entry that now compiles
# (take it off the list): the list says exactly what ember.compile cannot capture.
_RANDOM_DRAW = "a random draw whose op declares no forward to replay (as _RANDOM_FILL)"
EAGER = {
    # sparse: index_select's indices and a layout conversion are not captured
    "sparse.index_select": "IndexSelectBackward0 takes an index computed outside the graph",
    "sparse.index_select_rows": "IndexSelectBackward0 takes an index computed outside the graph",
    "sparse.csr_to_coo": "ToSparseBackward0 takes a layout parameter",
    # value-dependent output shapes
    "unique": _VALUE_SHAPED,
    "unique_dim": _VALUE_SHAPED,
    "unique_consecutive": _VALUE_SHAPED,
    "unique_consecutive_dim": _VALUE_SHAPED,
    "masked_select": _VALUE_SHAPED,
    "masked_select_broadcast": _VALUE_SHAPED,
    # ops with no declared forward
    "median": _NO_FORWARD + " (MedianBackward0)",
    "scatter_reduce_arg": "scatter(reduce=) records a node without forward (torch has no "
    "derivative for it)",
    "normal_tensor_tensor": _RANDOM_DRAW,
    "normal_tensor_float": _RANDOM_DRAW,
    "normal_float_tensor": _RANDOM_DRAW,
    "bernoulli_tensor": _RANDOM_DRAW,
    "diff_n0": "torch's diff(n=0) is zeros_like(input).copy_(input): an in-place write into a "
    "tensor made in the compiled region",
    "linalg_lstsq": _NO_FORWARD + " (LinalgLstsqBackward0)",
    "linalg_lstsq_gelsd": _NO_FORWARD + " (LinalgLstsqBackward0)",
    "linalg_lu": _NO_FORWARD + " (LinalgLuBackward0)",
    "linalg_lu_wide": _NO_FORWARD + " (LinalgLuBackward0)",
    "linalg_lu_tall": _NO_FORWARD + " (LinalgLuBackward0)",
    "linalg_lu_factor": _NO_FORWARD + " (LinalgLuFactorExBackward0)",
    "linalg_lu_solve": _NO_FORWARD + " (LinalgLuFactorExBackward0)",
    "lu": _NO_FORWARD + " (LinalgLuFactorExBackward0)",
    "lu_solve": _NO_FORWARD + " (LinalgLuFactorExBackward0)",
    "lu_unpack": _NO_FORWARD + " (LinalgLuFactorExBackward0)",
    "lu_unpack_wide": _NO_FORWARD + " (LinalgLuFactorExBackward0)",
    "lu_unpack_tall": _NO_FORWARD + " (LinalgLuFactorExBackward0)",
    "linalg_eig": _NO_FORWARD + " (LinalgEigBackward0)",
    "linalg_eig_complex_pair": _NO_FORWARD + " (LinalgEigBackward0)",
    "linalg_eigvals": _NO_FORWARD + " (LinalgEigBackward0)",
    "uniform_": _RANDOM_FILL,
    "normal_": _RANDOM_FILL,
    "random_": _RANDOM_FILL,
    "random_full": _RANDOM_FILL,
    "bernoulli_": _RANDOM_FILL,
    "bernoulli_tensor_p": _RANDOM_FILL,
    "exponential_": _RANDOM_FILL,
    # a tensor made outside the declared ops
    "bessel_j0": "scipy.special.j0's result is made outside the declared ops (no gradient)",
    "logdet": "its NaN mask (sign < 0) is a comparison, not a declared op",
    "dropout_all": "dropout(p=1) multiplies by a zero made outside the declared ops",
    "max_pool1d_indices": "max_pool1d's indices are made outside the declared ops",
    "max_pool2d_indices": "max_pool2d's indices are made outside the declared ops",
    "max_pool3d": "max_pool3d's indices are made outside the declared ops",
    "adaptive_max_pool2d": "adaptive_max_pool2d's indices are made outside the declared ops",
    "adaptive_max_pool3d": "adaptive_max_pool3d's indices are made outside the declared ops",
    "max_unpool1d": "max_pool1d's indices are made outside the declared ops",
    "max_unpool2d": "max_pool2d's indices are made outside the declared ops",
    "max_unpool3d": "max_pool3d's indices are made outside the declared ops",
    "view_slice_imul": "an in-place multiply of a slice, not a declared op",
    # indices computed outside the graph (other values would give other indices)
    "repeat_interleave_tensor": _INDEX + " (repeats)",
    "index_fill": _INDEX,
    "index_fill_0d": _INDEX,
    "index_fill_tensor": _INDEX,
    "index_fill_": _INDEX,
    "getitem_adv_nonadjacent": _INDEX,
    "getitem_mask": _INDEX + " (a boolean mask's nonzero())",
    "getitem_row_mask": _INDEX + " (a boolean mask's nonzero())",
    "index_put_mask_broadcast": _INDEX + " (a boolean mask's nonzero())",
    "view_masked_setitem": _INDEX + " (a boolean mask's nonzero())",
    "multi_margin_loss": _INDEX + " (the targets)",
    "multi_margin_loss_p2_weight": _INDEX + " (the targets)",
    "multi_margin_loss_p2_ember_forward": _INDEX + " (the targets)",
    "pack_padded_sequence": _INDEX + " (from the lengths)",
    "pack_padded_sequence_batch_first": _INDEX + " (from the lengths)",
    "pad_packed_sequence": _INDEX + " (from the lengths)",
    "ctc_loss": _INDEX + " (the targets and lengths)",
    "ctc_loss_none": _INDEX + " (the targets and lengths)",
    "ctc_loss_sum_blank_last": _INDEX + " (the targets and lengths)",
    # Python reads a tensor's values
    "rrelu_eval": "rrelu reads a tensor's values in Python (outside the declared ops)",
    "rrelu_train": "rrelu reads a tensor's values in Python (outside the declared ops)",
    "rrelu_inplace": "rrelu reads a tensor's values in Python (outside the declared ops)",
    "rrelu_": "rrelu reads a tensor's values in Python (outside the declared ops)",
    # a mutable parameter
    "embedding_bag_mean": _BAGS,
    "embedding_bag_max": _BAGS,
    "embedding_bag_sum_weights": _BAGS,
    "embedding_bag_2d": _BAGS,
    # in-place writes
    "pad_circular_1d": _INPLACE + " (circular padding copies into its result)",
    "pad_circular_2d": _INPLACE + " (circular padding copies into its result)",
    "pad_circular_3d": _INPLACE + " (circular padding copies into its result)",
    "setitem": _INPLACE,
    "t_": _INPLACE,
    "squeeze_": _INPLACE,
    "squeeze__dim": _INPLACE,
    "squeeze__dims": _INPLACE,
    "unsqueeze_": _INPLACE,
    "transpose_": _INPLACE,
    "swapdims_": _INPLACE,
    "nanmedian": _INPLACE,
    "nanmedian_dim": _INPLACE,
    "put": "PutBackward0 takes an index computed outside the graph",
    "put_": "PutBackward0 takes an index computed outside the graph",
    "put_accumulate": "PutBackward0 takes an index computed outside the graph",
    "view_narrow_copy_": _INPLACE,
    "view_index_iadd": _INPLACE,
    "view_plain_base": _INPLACE,
    "view_select_exp_": _INPLACE_VIEW,
    "view_transposed_row_sigmoid_": _INPLACE_VIEW,
    "view_diagonal_div_": _INPLACE_VIEW,
    "view_flat_mul_": _INPLACE_VIEW,
    "view_unsqueezed_tanh_": _INPLACE_VIEW,
    "view_nested_pow_": _INPLACE_VIEW,
    "view_masked_fill_": _INPLACE_VIEW,
    "view_two_writes": _INPLACE_VIEW,
    "view_written_view": _INPLACE_VIEW,
    "view_views_after_write": _INPLACE_VIEW,
}


def _run(fn, op, arrays, dtype):
    """Values and first gradients of ``op`` (random ops: the same seed every run)."""
    ember.manual_seed(7)
    xs = [ember.tensor(a.astype(dtype), requires_grad=op.grad) for a in arrays]
    outs = as_tuple(fn(*xs))
    values = [o.detach().numpy().copy() for o in outs]
    diff = [o for o in outs if o.requires_grad and o.dtype.is_floating_point]
    grads = []
    if diff:
        rng = np.random.default_rng(3)
        ws = [ember.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype)) for o in diff]
        got = ember.autograd.grad(diff, xs, ws, allow_unused=True)
        grads = [None if g is None else g.numpy().copy() for g in got]
    return values, grads


def _close(a, b, tol):
    assert a.shape == b.shape and a.dtype == b.dtype
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("op", PARAMS)
def test_compiled_equals_eager(op, dtype, tol):
    arrays, _ = case(op)

    def fn(*xs):
        return op.fn(ember, *xs)

    compiled = ember.compile(fn)
    try:
        want = _run(fn, op, arrays, dtype)
    except Exception as exc:  # the eager op rejects this dtype: so must the compiled one
        with pytest.raises(type(exc)):
            _run(compiled, op, arrays, dtype)
        return
    for _ in range(2):  # the first call captures, the second runs the cached code
        got = _run(compiled, op, arrays, dtype)
        for a, b in zip(want[0], got[0]):
            _close(a, b, tol)
        assert len(want[1]) == len(got[1])
        for a, b in zip(want[1], got[1]):
            assert (a is None) == (b is None)
            if a is not None:
                _close(a, b, tol)
    report = compiled.explain()
    assert report.startswith("signature 0 (")
    eager = None
    if "runs eagerly" in report:
        eager = report.split("runs eagerly: ", 1)[1].split("\n")[0].strip()
        assert eager, "a fallback must say why"
    if op.name in EAGER:
        assert eager is not None, f"{op.name} compiles now: take it off EAGER"
    else:
        assert eager is None, (
            f"{op.name} runs eagerly ({eager}): make it compile, or add it to EAGER with the reason"
        )


def test_eager_lists_only_entries():
    """A renamed or removed entry leaves EAGER too."""
    assert not set(EAGER) - {op.name for op in OPS}
