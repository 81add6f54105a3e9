"""The CPU-build surface: every torch 2.13 module path a CPU program may import exists in
ember and answers as torch's CPU-only build does (probes, flags, errors, warnings)."""

import importlib
import pkgutil
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

# Module paths of torch that ember does not have, by prefix, each with the reason.
NOT_IN_A_NUMPY_BUILD = {
    # Quantized kernels and their modules: ember computes in float/int NumPy arrays.
    "torch.ao": "quantization",
    "torch.quantization": "quantization",
    "torch.nn.quantized": "quantization",
    "torch.nn.quantizable": "quantization",
    "torch.nn.qat": "quantization",
    "torch.nn.intrinsic": "quantization",
    "torch.backends.quantized": "quantization",
    "torch.jit.quantized": "quantization",
    # Device runtimes and vendor libraries (ember has no device but the CPU).
    "torch.cuda.comm": "CUDA runtime",
    "torch.cuda.gds": "CUDA runtime",
    "torch.cuda.graphs": "CUDA runtime",
    "torch.cuda.green_contexts": "CUDA runtime",
    "torch.cuda.jiterator": "CUDA runtime",
    "torch.cuda.nccl": "CUDA runtime",
    "torch.cuda.nvtx": "CUDA runtime",
    "torch.cuda.profiler": "CUDA runtime",
    "torch.cuda.sparse": "CUDA runtime",
    "torch.cuda.tunable": "CUDA runtime",
    "torch.backends.cudnn.rnn": "cuDNN",
    "torch.backends.cusparselt": "CUDA library",
    "torch.backends.miopen": "ROCm library",
    "torch.utils.hipify": "ROCm source translation",
    "torch.mps": "Apple GPU runtime",
    "torch.mtia": "Meta accelerator runtime",
    "torch.xpu": "Intel GPU runtime",
    "torch.numa": "NUMA binding of torch's own thread pools",
    "torch.accelerator.graphs": "device graphs",
    # CPU kernel libraries torch links and ember does not (NumPy brings its own BLAS).
    "torch.backends.kleidiai": "Arm kernel library",
    "torch.backends.mha": "torch's fused attention kernels",
    "torch.backends.nnpack": "NNPACK",
    "torch.backends.xnnpack": "XNNPACK",
    "torch.backends.xeon": "Intel launcher for torch's thread pools",
    "torch.backends.python_native": "torch's native-kernel switches",
    "torch.utils.mkldnn": "oneDNN",
    # TorchScript, C++ and packaging internals: there is no TorchScript or C++ core.
    "torch.jit.annotations": "TorchScript compiler",
    "torch.jit.frontend": "TorchScript compiler",
    "torch.jit.generate_bytecode": "TorchScript compiler",
    "torch.jit.mobile": "TorchScript compiler",
    "torch.jit.supported_ops": "TorchScript compiler",
    "torch.jit.unsupported_tensor_ops": "TorchScript compiler",
    "torch.utils.jit": "TorchScript compiler",
    "torch.utils.mobile_optimizer": "TorchScript mobile",
    "torch.utils.bundled_inputs": "TorchScript mobile",
    "torch.utils.model_dump": "TorchScript archives",
    "torch.package": "torch.package archives run pickled code",
    "torch.nativert": "C++ runtime",
    "torch.nn.cpp": "C++ modules",
    "torch.utils.cpp_extension": "C++ extensions",
    "torch.utils.cpp_backtrace": "C++ core",
    "torch.utils.backend_registration": "C++ dispatcher",
    "torch.utils.show_pickle": "pickle inspection (ember never unpickles code)",
    "torch.utils.throughput_benchmark": "C++ benchmark harness",
    "torch.utils.file_baton": "C++ extension build lock",
    "torch.nn.backends": "legacy THNN backend",
    "torch.utils.backcompat": "legacy broadcast warnings",
    "torch.contrib": "empty legacy package",
    "torch.monitor": "C++ event monitor",
    "torch.utils.data.datapipes": "deprecated DataPipes",
    "torch.utils.data.backward_compatibility": "deprecated DataPipes",
    "torch.utils.data.graph": "deprecated DataPipes",
    "torch.utils.data.graph_settings": "deprecated DataPipes",
    "torch.onnx.symbolic_": "the TorchScript-based ONNX exporter's per-opset tables",
    "torch.futures": "TorchScript/RPC futures",
    "torch.library": "operator registration in torch's C++ dispatcher",
    "torch.utils.collect_env": "describes a torch installation (.ci/run describes ember's)",
    "torch.utils.debug_log": "torch's internal debug logging",
    "torch.utils.weak": "weak references to torch's C++ tensors",
}

# Paths other open issues deliver (numbers of the issue tracker).
NOT_YET = {
    "torch.fx": "explicit graphs and compiler (issue 14)",
    "torch.export": "explicit graphs and compiler (issue 14)",
    "torch.compiler": "explicit graphs and compiler (issue 14)",
    "torch.onnx.": "ONNX export (issue 14)",
    "torch.distributed.": "data-parallel training over MPI (issue 16)",
    "torch.nn.parallel.": "data-parallel training over MPI (issue 16)",
    "torch.utils.data.distributed": "data-parallel training over MPI (issue 16)",
    "torch.profiler": "profiler (issue 15)",
    "torch.autograd.profiler": "profiler (issue 15)",
    "torch.autograd.profiler_legacy": "profiler (issue 15)",
    "torch.autograd.profiler_util": "profiler (issue 15)",
    "torch.utils.flop_counter": "profiler (issue 15)",
    "torch.utils.module_tracker": "profiler (issue 15)",
    "torch.utils.viz": "pictures of the graph (issue 15)",
    "torch.utils.benchmark": "profiler (issue 15)",
    "torch.distributions": "distributions (issue 12)",
    "torch.fft": "fft (issue 12)",
    "torch.func": "torch.func (issue 12)",
    "torch.masked": "masked tensors (issue 12)",
    "torch.nested": "nested tensors (issue 12)",
    "torch.sparse": "sparse tensors (issue 12)",
    "torch.signal": "signal windows (issue 12)",
    "torch.nn.modules.": "the remaining layer families (issues 10 and 11)",
    "torch.nn.attention.": "attention variants (issue 10)",
    "torch.nn.utils.": "parametrizations, rnn packing, pruning (issues 10 and 11)",
    "torch.nn.grad": "convolution gradients as functions (issue 11)",
    "torch.nn.common_types": "type aliases (issue 11)",
    "torch.optim.": "the remaining optimizers (issue 11)",
    "torch.overrides": "__torch_function__ overrides (no issue yet)",
    "torch.storage": "storage objects (no issue yet; checkpoints handle storages themselves)",
    "torch.utils.serialization": "torch's checkpoint-writer settings (issue 13, part 2)",
}


def _excluded(path: str):
    for table in (NOT_IN_A_NUMPY_BUILD, NOT_YET):
        for prefix, reason in table.items():
            if path == prefix or path.startswith(
                prefix if prefix.endswith((".", "_")) else prefix + "."
            ):
                return reason
    return None


def _torch_paths() -> list:
    paths = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in pkgutil.walk_packages(torch.__path__, "torch.", onerror=lambda name: None):
            if not any(part.startswith("_") for part in info.name.split(".")):
                paths.append(info.name)
    return paths


def _importable(path: str) -> bool:
    try:
        importlib.import_module(path)
    except ImportError:
        return False
    return True


def test_every_public_torch_module_path_imports_from_ember():
    torch_paths = _torch_paths()
    assert len(torch_paths) > 500  # the walk saw torch's tree
    missing = [
        p for p in torch_paths if not _excluded(p) and not _importable("ember" + p[len("torch") :])
    ]
    assert missing == []
    # Every exclusion still names something torch has (the lists stay honest).
    for prefix in [*NOT_IN_A_NUMPY_BUILD, *NOT_YET]:
        assert any(p == prefix or p.startswith(prefix) for p in torch_paths), prefix


# -- probes answer as torch's CPU build -----------------------------------------------------------


def _answer(fn, lib):
    """``fn(lib)``'s value (as a repr), or the exception type and message it raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("value", repr(fn(lib)))
        except Exception as e:  # noqa: BLE001  (the exception is the answer under test)
            return (type(e).__name__, str(e))


PROBES = {
    "cuda.is_available": lambda T: T.cuda.is_available(),
    "cuda.device_count": lambda T: T.cuda.device_count(),
    "cuda.is_initialized": lambda T: T.cuda.is_initialized(),
    "cuda.is_bf16_supported": lambda T: T.cuda.is_bf16_supported(),
    "cuda.memory_allocated": lambda T: T.cuda.memory_allocated(),
    "cuda.max_memory_allocated": lambda T: T.cuda.max_memory_allocated(),
    "cuda.memory_reserved": lambda T: T.cuda.memory_reserved(),
    "cuda.reset_peak_memory_stats": lambda T: T.cuda.reset_peak_memory_stats(),
    "cuda.empty_cache": lambda T: T.cuda.empty_cache(),
    "cuda.manual_seed": lambda T: T.cuda.manual_seed(0),
    "cuda.manual_seed_all": lambda T: T.cuda.manual_seed_all(0),
    "cuda.synchronize": lambda T: T.cuda.synchronize(),
    "cuda.current_device": lambda T: T.cuda.current_device(),
    "cuda.get_device_name": lambda T: T.cuda.get_device_name(),
    "cuda.set_device": lambda T: T.cuda.set_device(0),
    "cuda.Event": lambda T: T.cuda.Event(),
    "cuda.memory.memory_allocated": lambda T: T.cuda.memory.memory_allocated(),
    "tensor.cuda": lambda T: T.ones(1).cuda(),
    "accelerator.is_available": lambda T: T.accelerator.is_available(),
    "accelerator.current_accelerator": lambda T: T.accelerator.current_accelerator(),
    "accelerator.device_count": lambda T: T.accelerator.device_count(),
    "accelerator.synchronize": lambda T: T.accelerator.synchronize(),
    "accelerator.current_device_index": lambda T: T.accelerator.current_device_index(),
    "accelerator.memory_allocated": lambda T: T.accelerator.memory_allocated(),
    "backends.cuda.is_built": lambda T: T.backends.cuda.is_built(),
    "backends.cuda.matmul.allow_tf32": lambda T: T.backends.cuda.matmul.allow_tf32,
    "backends.cuda.matmul.fp16": (
        lambda T: T.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    ),
    "backends.cuda.flash_sdp_enabled": lambda T: T.backends.cuda.flash_sdp_enabled(),
    "backends.cuda.math_sdp_enabled": lambda T: T.backends.cuda.math_sdp_enabled(),
    "backends.cudnn.is_available": lambda T: T.backends.cudnn.is_available(),
    "backends.cudnn.version": lambda T: T.backends.cudnn.version(),
    "backends.cudnn.flags": lambda T: (
        T.backends.cudnn.enabled,
        T.backends.cudnn.benchmark,
        T.backends.cudnn.deterministic,
        T.backends.cudnn.allow_tf32,
    ),
    "backends.mps.is_available": lambda T: T.backends.mps.is_available(),
    "backends.mps.is_built": lambda T: T.backends.mps.is_built(),
    "backends.cpu.capability": lambda T: T.backends.cpu.get_cpu_capability(),
    "float32_matmul_precision": lambda T: T.get_float32_matmul_precision(),
    "default_device": lambda T: T.get_default_device(),
    "autocast.is_enabled": lambda T: (T.is_autocast_enabled(), T.is_autocast_enabled("cpu")),
    "amp.is_autocast_available": lambda T: [
        T.amp.is_autocast_available(d) for d in ("cpu", "cuda", "meta", "mps")
    ],
    "autocast bad device": lambda T: T.autocast("xyz"),
    "autocast unsupported device": lambda T: T.autocast("meta"),
    "distributed.is_initialized": lambda T: T.distributed.is_initialized(),
    "distributed.get_rank": lambda T: T.distributed.get_rank(),
    "distributed.get_world_size": lambda T: T.distributed.get_world_size(),
    "DistributedDataParallel": lambda T: T.nn.parallel.DistributedDataParallel(T.nn.Linear(1, 1)),
    "jit.is_scripting": lambda T: (T.jit.is_scripting(), T.jit.is_tracing()),
    "onnx.is_in_onnx_export": lambda T: T.onnx.is_in_onnx_export(),
    "hub.get_dir": lambda T: T.hub.get_dir(),
    "hub.load": lambda T: T.hub.load("owner/repo", "model"),
    "version.cuda": lambda T: (T.version.cuda, T.version.hip),
    "SDPBackend": lambda T: [(b.name, int(b)) for b in (T.nn.attention.SDPBackend.MATH,)],
    "sdpa_kernel bad arg": lambda T: T.nn.attention.sdpa_kernel("math").__enter__(),
    "broadcast_shapes": lambda T: T.broadcast_shapes((2, 1), (3,), 1),
    "broadcast_shapes error": lambda T: T.broadcast_shapes((2, 3), (4,)),
    "mp.spawn is callable": lambda T: callable(T.multiprocessing.spawn),
    "mp.cpu_count": lambda T: T.multiprocessing.cpu_count(),
    "random.initial_seed": lambda T: (T.random.manual_seed(3), T.random.initial_seed())[1],
    "utils.hooks.RemovableHandle": lambda T: T.utils.hooks.RemovableHandle.__name__,
}


@pytest.mark.parametrize("name", list(PROBES))
def test_probe_answers_as_torch_cpu_build(name):
    import torch.utils.hooks  # noqa: F401  (torch loads it lazily)

    if name == "backends.cpu.capability":  # ember answers from /proc/cpuinfo, torch from cpuid
        assert ember.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
        return
    assert _answer(PROBES[name], ember) == _answer(PROBES[name], torch)


def test_autocast_device_type_must_be_a_string():
    # torch's message names the argument's class (torch.device there, ember's device here).
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`, got: `<class"):
        ember.autocast(ember.device("cpu"))


def test_deprecated_spellings_warn_as_torch():
    def messages(lib, fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(lib)
        return [(w.category.__name__, str(w.message)) for w in caught]

    cases = [
        lambda T: T.cuda.amp.GradScaler(),
        lambda T: T.amp.GradScaler("cuda"),
        lambda T: T.cuda.amp.autocast(),
        lambda T: T.cpu.amp.autocast(enabled=False),
        lambda T: T.autocast("cuda").__enter__(),
        lambda T: T.jit.script(T.nn.Linear(1, 1)),
        lambda T: T.backends.cuda.sdp_kernel(enable_flash=False).__enter__(),
        lambda T: T.set_float32_matmul_precision("bad"),
    ]
    for fn in cases:
        got, want = messages(ember, fn), messages(torch, fn)
        assert [c for c, _ in got] == [c for c, _ in want]
        for (_, g), (_, w) in zip(got, want):
            # torch appends "(Triggered internally at <C++ file>)" to C++ warnings
            assert w.startswith(g), (g, w)


def test_disabled_cuda_scaler_and_autocast_pass_through():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = ember.cuda.amp.GradScaler()
        region = ember.autocast("cuda")
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.5)
    loss = (w * 2).sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and not scaler.is_enabled()
    with region:
        assert not ember.is_autocast_enabled("cuda")
        scaler.scale(loss).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [0.0, 0.0] and scaler.state_dict() == {}


def _scaler_run(lib, grads_by_step):
    """A CPU GradScaler over steps whose gradient is given (inf steps must be skipped)."""
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    trace = []
    for g in grads_by_step:
        opt.zero_grad()
        scaler.scale((w * lib.tensor(g)).sum()).backward()
        if len(trace) % 2:
            scaler.unscale_(opt)  # explicit unscale (for clipping) on odd steps
        scaler.step(opt)
        scaler.update()
        trace.append((w.detach().numpy().copy(), scaler.get_scale(), scaler.state_dict()))
    return trace


def test_cpu_grad_scaler_matches_torch():
    steps = [[1.0, 2.0], [0.5, 0.25], [np.inf, 1.0], [1.0, 1.0], [2.0, -1.0], [np.nan, 0.0]]
    for (we, se, de), (wt, st, dt) in zip(_scaler_run(ember, steps), _scaler_run(torch, steps)):
        np.testing.assert_array_equal(we, wt)
        assert se == st and de == dt


def test_grad_scaler_misuse_raises_as_torch():
    def twice(T):
        w = T.nn.Parameter(T.ones(1))
        opt = T.optim.SGD([w], lr=0.1)
        s = T.amp.GradScaler("cpu")
        s.scale(w.sum()).backward()
        s.unscale_(opt)
        s.unscale_(opt)

    def step_twice(T):
        w = T.nn.Parameter(T.ones(1))
        opt = T.optim.SGD([w], lr=0.1)
        s = T.amp.GradScaler("cpu")
        s.scale(w.sum()).backward()
        s.step(opt)
        s.step(opt)

    def no_scale(T):
        T.amp.GradScaler("cpu").update()

    for fn in (twice, step_twice, no_scale):
        assert _answer(fn, ember) == _answer(fn, torch)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_gives_the_same_gradients(reentrant):
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Dropout(0.5), ember.nn.Tanh())
    x = ember.randn(3, 4, requires_grad=True)

    def grads(use_checkpoint):
        ember.manual_seed(1)
        net.zero_grad()
        x.grad = None
        from ember.utils.checkpoint import checkpoint

        y = checkpoint(net, x, use_reentrant=reentrant) if use_checkpoint else net(x)
        (y * y).sum().backward()
        return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in net.parameters()]

    for a, b in zip(grads(True), grads(False)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    from ember.utils.checkpoint import checkpoint

    out = checkpoint(net, x, use_reentrant=reentrant)
    want = "CheckpointFunctionBackward" if reentrant else "TanhBackward0"
    assert type(out.grad_fn).__name__ == want


def test_checkpoint_without_use_reentrant_warns_as_torch():
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        ember.utils.checkpoint.checkpoint(ember.nn.Linear(2, 2), ember.ones(1, 2))


def test_data_parallel_runs_the_module_here():
    layer = ember.nn.Linear(3, 2)
    model = ember.nn.DataParallel(layer)
    x = ember.randn(4, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), layer(x).detach().numpy())
    tmodel = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(model.state_dict()) == list(tmodel.state_dict())
    assert model.device_ids == tmodel.device_ids == []


def test_jit_returns_what_it_was_given():
    layer = ember.nn.Linear(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.jit.script(layer) is layer
        assert ember.jit.trace(layer, ember.ones(1, 2)) is layer


def _square_into(i, path):
    with open(f"{path}/{i}", "w") as fh:
        fh.write(str(i * i))


def _fail(i):
    raise ValueError(f"rank {i} failed")


def test_multiprocessing_spawn_runs_and_reports(tmp_path):
    ember.multiprocessing.spawn(_square_into, args=(str(tmp_path),), nprocs=2, start_method="fork")
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0", "1"]
    with pytest.raises(ember.multiprocessing.ProcessRaisedException, match="rank 0 failed"):
        ember.multiprocessing.spawn(_fail, nprocs=1, start_method="fork")


def test_fork_rng_restores_the_generator():
    ember.manual_seed(5)
    with ember.random.fork_rng():
        ember.rand(3)
    a = ember.rand(2)
    ember.manual_seed(5)
    assert ember.equal(a, ember.rand(2))


def test_cpu_autocast_nests_and_casts_matmul_to_bfloat16():
    a, b = ember.randn(3, 3), ember.randn(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a CPU region is silent (torch's too)
        with ember.autocast("cpu"):
            assert ember.is_autocast_enabled("cpu")
            with ember.autocast("cpu", enabled=False):
                assert not ember.is_autocast_enabled("cpu")
                assert (a @ b).dtype == ember.float32
            assert ember.is_autocast_enabled("cpu")
            out = a @ b
        assert not ember.is_autocast_enabled("cpu")
        assert out.dtype == ember.bfloat16
        assert ember.equal(out, (a.bfloat16().float() @ b.bfloat16().float()).bfloat16())
        with ember.autocast("cpu", dtype=ember.float16):
            assert (a @ b).dtype == ember.float16

        @ember.autocast("cpu")
        def f(x):
            return ember.is_autocast_enabled("cpu")

        assert f(a) and not ember.is_autocast_enabled("cpu")
