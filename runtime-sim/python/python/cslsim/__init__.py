"""cslsim: run programs compiled by cslc on a simulated fabric, from Python.

``cslsim.SdkRuntime`` follows the vendor host API (``load``/``run``/``memcpy_h2d``/
``launch``/``memcpy_d2h``/``stop``). The same classes are importable under the vendor's
module paths (``cerebras.sdk.runtime.sdkruntimepybind``, ``cerebras.sdk.sdk_utils``,
``cerebras.sdk.debug.debug_util``) so existing host scripts run unchanged.

This is an independent implementation; it is not affiliated with Cerebras Systems.
"""

from . import enums, errors, layout, runtime
from ._native import DEFAULT_MAX_CYCLES, __version__
from .debug import debug_util
from .enums import FP16TYPE, Edge, MemcpyDataType, MemcpyOrder, Route, SdkTarget
from .errors import *  # noqa: F401,F403
from .runtime import (
    SdkCompileArtifacts,
    SdkRuntime,
    SimfabConfig,
    Task,
    get_platform,
    get_simulator,
    get_system,
)
from .utils import calculate_cycles, input_array_to_u32, memcpy_view

__all__ = (
    runtime.__all__
    + enums.__all__
    + [
        "debug_util",
        "memcpy_view",
        "input_array_to_u32",
        "calculate_cycles",
        "errors",
        "DEFAULT_MAX_CYCLES",
        "__version__",
    ]
    + errors.__all__
)
