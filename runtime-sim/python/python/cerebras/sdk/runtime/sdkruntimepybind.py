"""``cerebras.sdk.runtime.sdkruntimepybind`` as host scripts import it, implemented by
cslsim on its simulator (an independent implementation, not affiliated with Cerebras
Systems). See ``cslsim.runtime`` for the semantics and the differences.

The SdkLayout API (``SdkLayout``, ``Color``, ``RoutingPosition``, ...) can be imported
but not used: constructing it raises ``cslsim.errors.UnsupportedError``.
"""

from cslsim.enums import FP16TYPE, Edge, MemcpyDataType, MemcpyOrder, Route, SdkTarget
from cslsim.errors import UnsupportedError
from cslsim.runtime import (
    SdkCompileArtifacts,
    SdkRuntime,
    SimfabConfig,
    Task,
    get_platform,
    get_simulator,
    get_system,
)


class _LayoutApi:
    """Placeholder of an SdkLayout class: importable, not usable."""

    def __init__(self, *args, **kwargs):
        raise UnsupportedError(
            f"{type(self).__name__}: the SdkLayout API is not supported by cslsim; write the "
            "layout in CSL (a `layout` block) and compile it with cslc"
        )


class SdkLayout(_LayoutApi):
    pass


class Color(_LayoutApi):
    pass


class RoutingPosition(_LayoutApi):
    pass


def get_edge_routing(*args, **kwargs):
    raise UnsupportedError("get_edge_routing: the SdkLayout API is not supported by cslsim")


__all__ = [
    "SdkRuntime",
    "MemcpyDataType",
    "MemcpyOrder",
    "SdkTarget",
    "Task",
    "Route",
    "Edge",
    "FP16TYPE",
    "SimfabConfig",
    "SdkCompileArtifacts",
    "get_platform",
    "get_simulator",
    "get_system",
    "SdkLayout",
    "Color",
    "RoutingPosition",
    "get_edge_routing",
]
