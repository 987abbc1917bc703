"""CPU-only import shim for running SGLang's memory-sizing code without a GPU (0.5.11 reference).

Import this module before anything from sglang. Only *kernel / device* pieces
are replaced; nothing here touches SGLang's memory arithmetic.

* triton      -> the real triton 3.8.0 wheel is installed (imports fine on CPU,
                 never launched). If it is absent, SGLang's own mock
                 (sglang/_triton_stub.py) is installed instead, loaded by file
                 path so that sglang/__init__.py does not run first. (The mock is
                 not enough for torch.compile decorators run at import time.)
* torchvision -> the real pure-Python torchvision 0.28.0 (pip --no-deps). Its C
                 extension is a CUDA build (needs libc10_cuda.so) and fails to
                 load, which torchvision tolerates (_has_ops() == False) except
                 for two unguarded torch.library.register_fake() calls on
                 torchvision::nms / torchvision::qnms. We define those two op
                 *schemas* (no kernels) so the import succeeds.
* sgl_kernel, flashinfer -> inert import mocks (see MOCKED_CUDA_PACKAGES), plus
                 the op schema sgl_kernel::moe_fused_gate (no kernel).
* simulated CUDA device queries (see _FakeGPU below).
"""
import importlib.machinery  # _triton_stub uses importlib.machinery without importing it
import importlib.util
import os
import sys

import torch

_SITE = os.path.dirname(os.path.dirname(importlib.util.find_spec("torch").origin))
_SGL = os.path.join(_SITE, "sglang")
# SGLang's own mock helpers: sglang/_triton_stub.py (0.5.11 .. ), renamed _platform_stubs.py later
# (<= 0.5.9 ships neither: fall back to a verbatim copy of 0.5.10's file beside this shim)
_STUB_FILE = next((os.path.join(_SGL, f) for f in ("_triton_stub.py", "_platform_stubs.py")
                   if os.path.exists(os.path.join(_SGL, f))),
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "sglang_triton_stub_0_5_10.py"))


def _install_triton_stub():
    if "triton" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        "_sglang_triton_stub", _STUB_FILE
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses in the stub file look their module up
    spec.loader.exec_module(mod)
    if hasattr(mod, "install"):  # (0.5.11 stub) no-op if a real triton is importable
        mod.install()


_TV_LIB = None


def _define_torchvision_op_schemas():
    global _TV_LIB
    if "torchvision" in sys.modules or _TV_LIB is not None:
        return
    _TV_LIB = torch.library.Library("torchvision", "DEF")
    _TV_LIB.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _TV_LIB.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")


def _load_sglang_stub_helpers():
    spec = importlib.util.spec_from_file_location(
        "_sglang_triton_stub_helpers", _STUB_FILE
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses in the stub file look their module up
    spec.loader.exec_module(mod)
    return mod


# CUDA-only binary packages that SGLang imports at module level once it believes
# it runs on CUDA. On a real GPU box they are installed (sglang-kernel, flashinfer
# are hard requirements of the wheel); here every attribute is an inert mock
# (SGLang's own _MockModule: callables are pass-through decorators, class-like
# names are empty base classes). Nothing on the memory-sizing path calls them.
MOCKED_CUDA_PACKAGES = ("sgl_kernel", "flashinfer")
# Per-version extras (e.g. a binary dependency that a later SGLang imports at module level and
# that this CPU venv does not install): comma-separated in ORACLE_EXTRA_MOCKS, set by oracle.py
# from the version adapter's EXTRA_MOCKED_PACKAGES before this module is imported.
MOCKED_CUDA_PACKAGES += tuple(p for p in os.environ.get("ORACLE_EXTRA_MOCKS", "").split(",") if p)


_MOCK_CLS = None


def _make_cuda_pkg_mock_class(h):
    """SGLang's _MockModule, plus: class-like attributes are classes whose own
    attributes are again mocks (e.g. `ActivationType.Swiglu` used as a dict key
    at import time in modelopt_quant.py)."""
    global _MOCK_CLS
    if _MOCK_CLS is not None:
        return _MOCK_CLS

    class _AnyAttrMeta(type):
        def __getattr__(cls, name):
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            v = _AnyAttrMeta(name, (h._StubBase,), {"__module__": cls.__module__})
            setattr(cls, name, v)
            return v

    class _CudaPkgMock(h._MockModule):
        def __getattr__(self, name):
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            full = f"{self.__name__}.{name}"
            if full in sys.modules:
                return sys.modules[full]
            if name[0:1].isupper():
                v = _AnyAttrMeta(name, (h._StubBase,), {"__module__": self.__name__})
            else:
                v = _CudaPkgMock(full)
                sys.modules[full] = v
            setattr(self, name, v)
            return v

    _MOCK_CLS = _CudaPkgMock
    return _MOCK_CLS


class _CudaPkgFinder:
    def __init__(self, names, helpers):
        self.names = tuple(names)
        self.h = helpers

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.split(".")[0]
        if root not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    # importlib loader protocol: hand back the mock itself
    def create_module(self, spec):
        mod = _make_cuda_pkg_mock_class(self.h)(spec.name)
        mod.__version__ = "0.0.0+oracle-mock"
        mod.__spec__ = spec
        mod.__loader__ = self
        return mod

    def exec_module(self, module):
        pass


# sgl_kernel op *schemas* (no kernels) for the few ops that SGLang registers
# fake/meta implementations for unconditionally at import time once _is_cuda.
_SGL_KERNEL_SCHEMAS = [
    # sglang/srt/layers/moe/topk.py (module level, `if _is_cuda:`)
    "moe_fused_gate(Tensor input_tensor, Tensor bias, int num_expert_group, int topk_group, int topk, int num_fused_shared_experts=0, float routed_scaling_factor=0, bool apply_routed_scaling_factor_on_output=False) -> Tensor[]",
]
_SGL_LIB = None


def _install_cuda_pkg_mocks():
    global _SGL_LIB
    if os.environ.get("ORACLE_FAKE_CUDA", "1") == "0":
        return
    _SGL_LIB = torch.library.Library("sgl_kernel", "DEF")
    for sch in _SGL_KERNEL_SCHEMAS:
        _SGL_LIB.define(sch)
    sys.meta_path.insert(0, _CudaPkgFinder(MOCKED_CUDA_PACKAGES, _load_sglang_stub_helpers()))


_install_triton_stub()
_define_torchvision_op_schemas()
_install_cuda_pkg_mocks()


# ---------------------------------------------------------------------------
# Simulated CUDA device (device *queries* only).
#
# SGLang decides several memory-relevant settings from what the device reports:
#   - get_device_memory_capacity()  -> nvidia-smi memory.total (MiB)  [server_args]
#   - torch.cuda.get_device_capability() / torch.version.cuda -> is_sm90/100/120_supported()
#     (attention backend, page_size, ...)                              [server_args]
#   - torch.cuda.mem_get_info() -> get_available_gpu_memory() before/after weight load
#                                                                      [model_runner]
# The values are taken from environment variables that must be set *before* this
# module is imported, because SGLang caches them (lru_cache, module-level _is_cuda).
# The free-memory figure can be changed at run time through FAKE_GPU.free_bytes.
#
#   ORACLE_GPU_TOTAL_MIB   total memory as nvidia-smi reports it (MiB)      default 97887
#   ORACLE_GPU_SM          compute capability "major.minor"                  default 12.0
#   ORACLE_GPU_NAME        device name                                       default NVIDIA RTX PRO 6000 Blackwell
#   ORACLE_CUDA_VERSION    torch.version.cuda                                default 12.9
#   ORACLE_GPU_COUNT       torch.cuda.device_count()                         default 8
#   ORACLE_DRIVER_VERSION  nvidia-smi driver_version                         default 580.95.05
#   ORACLE_FAKE_CUDA=0     disables all of this (SGLang then sees a CPU box)
# Allocations are never made on "cuda": the CPU torch build cannot, and the
# oracle allocates pools on device="cpu"/"meta" itself.
# ---------------------------------------------------------------------------
import subprocess as _subprocess
import types as _types


class _FakeGPU:
    def __init__(self):
        self.total_mib = float(os.environ.get("ORACLE_GPU_TOTAL_MIB", "97887"))
        maj, _, mnr = os.environ.get("ORACLE_GPU_SM", "12.0").partition(".")
        self.capability = (int(maj), int(mnr or 0))
        self.name = os.environ.get("ORACLE_GPU_NAME", "NVIDIA RTX PRO 6000 Blackwell")
        self.cuda_version = os.environ.get("ORACLE_CUDA_VERSION", "12.9")
        self.count = int(os.environ.get("ORACLE_GPU_COUNT", "8"))
        self.driver = os.environ.get("ORACLE_DRIVER_VERSION", "580.95.05")
        self.total_bytes = int(self.total_mib * (1 << 20))
        self.free_bytes = self.total_bytes  # set by the oracle before each query
        self.queries = []  # log of mem_get_info calls (for the report)

    def props(self, device=None):
        return _types.SimpleNamespace(
            name=self.name,
            major=self.capability[0],
            minor=self.capability[1],
            total_memory=self.total_bytes,
            multi_processor_count=188,
            is_integrated=False,
            L2_cache_size=128 << 20,
            warp_size=32,
            gcnArchName="",
            uuid="GPU-00000000-0000-0000-0000-000000000000",
        )


FAKE_GPU = _FakeGPU()


def configure_gpu(total_mib=None, sm=None, name=None, cuda_version=None, free_bytes=None):
    """Change the simulated device between oracle cases (batch mode). SGLang's own
    lru caches over these queries must be cleared by the caller afterwards."""
    g = FAKE_GPU
    if total_mib is not None:
        g.total_mib = float(total_mib)
        g.total_bytes = int(g.total_mib * (1 << 20))
    if sm is not None:
        maj, _, mnr = str(sm).partition(".")
        g.capability = (int(maj), int(mnr or 0))
    if name is not None:
        g.name = name
    if cuda_version is not None:
        g.cuda_version = cuda_version
        if os.environ.get("ORACLE_FAKE_CUDA", "1") != "0" and os.environ.get("ORACLE_FAKE_HIP", "0") != "1":
            torch.version.cuda = cuda_version  # a ROCm device (_install_fake_hip) keeps torch.version.cuda None
    g.free_bytes = g.total_bytes if free_bytes is None else int(free_bytes)
    g.queries = []


def _install_fake_cuda():
    if os.environ.get("ORACLE_FAKE_CUDA", "1") == "0":
        return
    g = FAKE_GPU
    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: g.count
    cuda.current_device = lambda: 0
    cuda.set_device = lambda *a, **k: None
    cuda.get_device_capability = lambda device=None: g.capability
    cuda.get_device_name = lambda device=None: g.name
    cuda.get_device_properties = g.props
    cuda.empty_cache = lambda: None
    cuda.synchronize = lambda *a, **k: None

    def mem_get_info(device=None):
        g.queries.append(g.free_bytes)
        return (g.free_bytes, g.total_bytes)

    cuda.mem_get_info = mem_get_info
    torch.version.cuda = g.cuda_version

    # nvidia-smi is what get_nvgpu_memory_capacity()/get_nvidia_driver_version_str()
    # shell out to; answer those two queries, pass everything else through.
    _real_run = _subprocess.run

    def run(args, *a, **k):
        if isinstance(args, (list, tuple)) and args and args[0] == "nvidia-smi":
            q = " ".join(args)
            if "memory.total" in q:
                out = "\n".join([f"{int(g.total_mib)}"] * g.count) + "\n"
            elif "driver_version" in q:
                out = g.driver + "\n"
            else:
                return _real_run(args, *a, **k)
            text = k.get("text") or k.get("universal_newlines")
            return _subprocess.CompletedProcess(
                args, 0, out if text else out.encode(), "" if text else b""
            )
        return _real_run(args, *a, **k)

    _subprocess.run = run


_install_fake_cuda()


def _install_fake_hip():
    """ORACLE_FAKE_HIP=1 (off by default): present a ROCm device instead of a CUDA one, so SGLang's own is_hip()
    branches decide (docs/rocm.md, tests/golden/rocm/). is_hip() is ``torch.version.hip is not None``: set, with
    ``torch.version.cuda`` None; the device properties name a gfx arch (ORACLE_GCN_ARCH, default gfx942, the
    MI300X / MI325X; warp size 64); ``rocminfo`` (what get_amdgpu_memory_capacity shells out to) answers the
    total as its 'Pool 1' size in KB. The ROCm kernel packages (``aiter``; ORACLE_HIP_STUBS, comma separated)
    are import stand-ins whose every attribute is an inert callable: SGLang imports them on ROCm, and its sizing
    never calls them (the pools are built by the oracle on meta tensors, no kernel runs)."""
    if os.environ.get("ORACLE_FAKE_HIP", "0") != "1":
        return
    import importlib.abc as _abc
    import importlib.machinery as _machinery
    import sys as _sys

    g = FAKE_GPU
    torch.version.hip = os.environ.get("ORACLE_HIP_VERSION", "6.4.43484")
    torch.version.cuda = None
    arch = os.environ.get("ORACLE_GCN_ARCH", "gfx942:sramecc+:xnack-")
    base_props = g.props

    def props(device=None):
        p = base_props(device)
        p.gcnArchName = arch
        p.warp_size = 64
        return p

    torch.cuda.get_device_properties = props
    prev_run = _subprocess.run

    def run(args, *a, **k):
        if isinstance(args, (list, tuple)) and args and isinstance(args[0], str) and "rocminfo" in args[0]:
            out = "\n".join([f"{int(g.total_mib * 1024)}(0x0) KB"] * g.count) + "\n"
            return _subprocess.CompletedProcess(args, 0, out, "")
        return prev_run(args, *a, **k)

    _subprocess.run = run

    class _Inert:
        def __init__(self, *a, **k):
            pass

        def __call__(self, *a, **k):
            return _Inert()

        def __getattr__(self, name):
            return _Inert()

        def __mro_entries__(self, bases):
            return (object,)

        def __bool__(self):
            return False

        def __iter__(self):
            return iter(())

    class _StandIns(_abc.MetaPathFinder, _abc.Loader):
        roots = tuple(os.environ.get("ORACLE_HIP_STUBS", "aiter").split(","))

        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in self.roots:
                return _machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            m = _types.ModuleType(spec.name)
            m.__path__ = []
            m.__getattr__ = lambda n: _Inert()
            return m

        def exec_module(self, module):
            pass

    _sys.meta_path.insert(0, _StandIns())


_install_fake_hip()


# ---------------------------------------------------------------------------
# Device redirection for pool construction. SGLang's MambaPool allocates the
# speculative intermediate buffers with a hard-coded device="cuda"
# (memory_pool.py, MambaPool.__init__); the oracle redirects every tensor
# factory call's device to `target` ("cpu" for real small allocations, "meta"
# for exact full-size shapes without using RAM). Shapes/dtypes are untouched.
# ---------------------------------------------------------------------------
from torch.overrides import TorchFunctionMode as _TFM

_FACTORIES = {
    torch.zeros, torch.empty, torch.ones, torch.full, torch.arange, torch.tensor,
    torch.zeros_like, torch.empty_like, torch.ones_like, torch.full_like,
    torch.as_tensor, torch.randn, torch.rand,
}


class RedirectDevice(_TFM):
    def __init__(self, target):
        super().__init__()
        self.target = target
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _FACTORIES:
            kwargs["device"] = self.target
            self.calls += 1
        return func(*args, **kwargs)
