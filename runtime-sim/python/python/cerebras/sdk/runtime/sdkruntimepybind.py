"""``cerebras.sdk.runtime.sdkruntimepybind`` as host scripts import it, implemented by
cslsim on its simulator (an independent implementation, not affiliated with Cerebras
Systems). See ``cslsim.runtime`` for the semantics and the differences, and
``cslsim.layout`` for the SdkLayout API (``SdkLayout``, ``Color``, ``RoutingPosition``,
``get_edge_routing``), which compiles with cslc.
"""

from cslsim import enums, layout, runtime
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

# The SdkLayout API as ``cslsim.layout`` exports it, but for cslsim's own error class.
__all__ = (
    runtime.__all__
    + enums.__all__
    + [name for name in layout.__all__ if name != "LayoutError"]
)
