"""``cerebras.sdk.runtime.sdkruntimepybind`` as host scripts import it, implemented by
cslsim on its simulator (an independent implementation, not affiliated with Cerebras
Systems). See ``cslsim.runtime`` for the semantics and the differences.

The SdkLayout API (``SdkLayout``, ``Color``, ``RoutingPosition``, ...) can be imported
but not used: constructing it raises ``cslsim.errors.UnsupportedError``.
"""

from cslsim import enums, runtime
from cslsim.enums import *  # noqa: F401,F403
from cslsim.errors import UnsupportedError
from cslsim.runtime import *  # noqa: F401,F403


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


__all__ = runtime.__all__ + enums.__all__ + [
    "SdkLayout",
    "Color",
    "RoutingPosition",
    "get_edge_routing",
]
