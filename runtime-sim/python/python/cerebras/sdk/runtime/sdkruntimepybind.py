"""``cerebras.sdk.runtime.sdkruntimepybind`` as host scripts import it, implemented by
cslsim on its simulator (an independent implementation, not affiliated with Cerebras
Systems). See ``cslsim.runtime`` for the semantics and the differences, and
``cslsim.layout`` for the SdkLayout API (``SdkLayout``, ``Color``, ``RoutingPosition``,
``get_edge_routing``), which compiles with cslc.
"""

from cslsim import enums, runtime
from cslsim.enums import *  # noqa: F401,F403
from cslsim.layout import (
    CodeRegion,
    Color,
    EdgeRouting,
    InputPort,
    OutputPort,
    RoutingPosition,
    SdkLayout,
    Stream,
    get_edge_routing,
)
from cslsim.runtime import *  # noqa: F401,F403

__all__ = runtime.__all__ + enums.__all__ + [
    "SdkLayout",
    "CodeRegion",
    "Color",
    "RoutingPosition",
    "EdgeRouting",
    "InputPort",
    "OutputPort",
    "Stream",
    "get_edge_routing",
]
