"""Lazy modules: parameters whose shapes are inferred from the first input.

``UninitializedParameter`` / ``UninitializedBuffer`` (``nn.parameter``) hold no data until
``materialize``;
``LazyModuleMixin`` infers them in a forward pre-hook (or from a loaded ``state_dict``),
then the module turns into its ``cls_to_become`` (``LazyLinear`` becomes ``Linear``).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.graph import RemovableHandle
from ..parameter import UninitializedBuffer, UninitializedParameter, _UninitializedMixin
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase

__all__ = [
    "UninitializedParameter",
    "UninitializedBuffer",
    "LazyModuleMixin",
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialised parameter or buffer."""
    return isinstance(param, _UninitializedMixin)


class LazyModuleMixin:
    """Infers the shapes of a module's uninitialised parameters and buffers from its first
    input (``initialize_parameters``), then turns the module into ``cls_to_become``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> from ember.nn import LazyLinear
        >>> m = LazyLinear(3)
        >>> m.has_uninitialized_params()
        True
        >>> m(ember.ones(2, 5)).shape
        torch.Size([2, 3])
        >>> m
        Linear(in_features=5, out_features=3, bias=True)
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = _register_load_pre_hook(self, self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                if not (is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def _lazy_load_hook(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, errors
    ) -> None:
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialise the parameters from the first input (each lazy module's own)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer still has no data."""
        params = self._parameters.values()
        buffers = self._buffers.values()
        return any(is_lazy(p) for p in itertools.chain(params, buffers))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
            "dummy forward pass to correctly initialize the modules"
        )


def _register_load_pre_hook(module, hook):
    """``hook(state_dict, prefix, ...)`` run before ``module`` loads a state dict."""
    handle = RemovableHandle(module._load_state_dict_pre_hooks)
    module._load_state_dict_pre_hooks[handle.id] = hook
    return handle


# -- LazyLinear --------------------------------------------------------------------------------


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of its first input.

    Example:
        >>> import ember
        >>> from ember.nn import LazyLinear
        >>> LazyLinear(4)
        LazyLinear(in_features=0, out_features=4, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


# -- lazy convolutions -------------------------------------------------------------------------


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize((*shape, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        spatial = self._get_num_spatial_dims()
        no_batch, batch = spatial + 1, spatial + 2
        if input.dim() not in (no_batch, batch):
            raise RuntimeError(
                f"Expected {no_batch}D (unbatched) or {batch}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == batch else input.shape[0]

    def _get_num_spatial_dims(self) -> int:
        raise NotImplementedError


_LAZY_CONV_DOC = """``{conv}`` whose ``in_channels`` is inferred from its first input.

    The first call materialises the parameters and turns the module into a ``{conv}``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> m = nn.Lazy{conv}(4, kernel_size=3)
        >>> m({input}).shape
        {shape}
        >>> m
        {repr}
    """


def _lazy_conv(conv_cls, nd: int, transposed: bool, example: tuple):
    """The lazy version of ``conv_cls``: in_channels 0 and uninitialised parameters.

    ``example`` is ``(input, output shape, module repr after the first call)`` for the
    docstring's example (the outputs as the example prints them)."""

    if transposed:

        def __init__(
            self,
            out_channels,
            kernel_size,
            stride=1,
            padding=0,
            output_padding=0,
            groups=1,
            bias=True,
            dilation=1,
            padding_mode="zeros",
            device=None,
            dtype=None,
        ):
            _LazyConvXdMixin.__init__(  # the mixin's hooks, then conv_cls's constructor
                self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                dilation, padding_mode, device, dtype,
            )  # fmt: skip
            _lazy_conv_params(self, out_channels, bias, device, dtype)

    else:

        def __init__(
            self,
            out_channels,
            kernel_size,
            stride=1,
            padding=0,
            dilation=1,
            groups=1,
            bias=True,
            padding_mode="zeros",
            device=None,
            dtype=None,
        ):
            _LazyConvXdMixin.__init__(  # the mixin's hooks, then conv_cls's constructor
                self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                padding_mode, device, dtype,
            )  # fmt: skip
            _lazy_conv_params(self, out_channels, bias, device, dtype)

    name = "Lazy" + conv_cls.__name__
    cls = type(
        name,
        (_LazyConvXdMixin, conv_cls),
        {
            "__init__": __init__,
            "__doc__": _LAZY_CONV_DOC.format(
                conv=conv_cls.__name__, input=example[0], shape=example[1], repr=example[2]
            ),
            "__module__": __name__,
            "cls_to_become": conv_cls,
            "_get_num_spatial_dims": lambda self: nd,
        },
    )
    cls.__qualname__ = name
    return cls


def _lazy_conv_params(module, out_channels, bias, device, dtype) -> None:
    module.weight = UninitializedParameter(device=device, dtype=dtype)
    module.out_channels = out_channels
    if bias:
        module.bias = UninitializedParameter(device=device, dtype=dtype)


# The classes are built by one function (their constructors differ only in the parent).
# Each row's example: the input of ``LazyConvXd(4, kernel_size=3)``, the output's shape and
# what the module prints once its first call has inferred in_channels.
LazyConv1d = _lazy_conv(
    Conv1d, 1, False,
    ("ember.ones(1, 3, 8)", "torch.Size([1, 4, 6])",
     "Conv1d(3, 4, kernel_size=(3,), stride=(1,))"),
)  # fmt: skip
LazyConv2d = _lazy_conv(
    Conv2d, 2, False,
    ("ember.ones(1, 3, 8, 8)", "torch.Size([1, 4, 6, 6])",
     "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1))"),
)  # fmt: skip
LazyConv3d = _lazy_conv(
    Conv3d, 3, False,
    ("ember.ones(1, 3, 4, 4, 4)", "torch.Size([1, 4, 2, 2, 2])",
     "Conv3d(3, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))"),
)  # fmt: skip
LazyConvTranspose1d = _lazy_conv(
    ConvTranspose1d, 1, True,
    ("ember.ones(1, 3, 8)", "torch.Size([1, 4, 10])",
     "ConvTranspose1d(3, 4, kernel_size=(3,), stride=(1,))"),
)  # fmt: skip
LazyConvTranspose2d = _lazy_conv(
    ConvTranspose2d, 2, True,
    ("ember.ones(1, 3, 8, 8)", "torch.Size([1, 4, 10, 10])",
     "ConvTranspose2d(3, 4, kernel_size=(3, 3), stride=(1, 1))"),
)  # fmt: skip
LazyConvTranspose3d = _lazy_conv(
    ConvTranspose3d, 3, True,
    ("ember.ones(1, 3, 4, 4, 4)", "torch.Size([1, 4, 6, 6, 6])",
     "ConvTranspose3d(3, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))"),
)  # fmt: skip


# -- lazy norms --------------------------------------------------------------------------------


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(
        self,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ) -> None:
        # affine, bias and track_running_stats off: no tensors made only to be replaced.
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = Tensor._wrap(np.zeros((), dtype=np.int64))

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """``BatchNorm1d`` whose ``num_features`` is inferred from the first input.

    Example:
        >>> import ember
        >>> from ember.nn import LazyBatchNorm1d
        >>> m = LazyBatchNorm1d()
        >>> m(ember.randn(4, 3)).shape
        torch.Size([4, 3])
        >>> m
        BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """``BatchNorm2d`` whose ``num_features`` is inferred from the first input.

    Example:
        >>> from ember.nn import LazyBatchNorm2d
        >>> LazyBatchNorm2d().has_uninitialized_params()
        True
    """

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """``BatchNorm3d`` whose ``num_features`` is inferred from the first input.

    Example:
        >>> import ember
        >>> from ember.nn import LazyBatchNorm3d
        >>> LazyBatchNorm3d()(ember.randn(2, 2, 2, 2, 2)).shape
        torch.Size([2, 2, 2, 2, 2])
    """

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """``InstanceNorm1d`` whose ``num_features`` is inferred from the first input.

    Example:
        >>> import ember
        >>> from ember.nn import LazyInstanceNorm1d
        >>> LazyInstanceNorm1d()(ember.randn(2, 3, 4)).shape
        torch.Size([2, 3, 4])
    """

    cls_to_become = InstanceNorm1d
    _check_input_dim = InstanceNorm1d._check_input_dim
    _get_no_batch_dim = InstanceNorm1d._get_no_batch_dim


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """``InstanceNorm2d`` whose ``num_features`` is inferred from the first input.

    Example:
        >>> import ember
        >>> from ember.nn import LazyInstanceNorm2d
        >>> LazyInstanceNorm2d()(ember.randn(2, 3, 4, 4)).shape
        torch.Size([2, 3, 4, 4])
    """

    cls_to_become = InstanceNorm2d
    _check_input_dim = InstanceNorm2d._check_input_dim
    _get_no_batch_dim = InstanceNorm2d._get_no_batch_dim


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """``InstanceNorm3d`` whose ``num_features`` is inferred from the first input.

    Example:
        >>> import ember
        >>> from ember.nn import LazyInstanceNorm3d
        >>> LazyInstanceNorm3d()(ember.randn(1, 2, 2, 2, 2)).shape
        torch.Size([1, 2, 2, 2, 2])
    """

    cls_to_become = InstanceNorm3d
    _check_input_dim = InstanceNorm3d._check_input_dim
    _get_no_batch_dim = InstanceNorm3d._get_no_batch_dim
