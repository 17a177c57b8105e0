"""``cerebras.sdk.sdk_utils`` as host scripts import it, implemented by cslsim (an
independent implementation, not affiliated with Cerebras Systems)."""

from cslsim.utils import (
    calculate_cycles,
    float_to_hex,
    input_array_to_u32,
    make_u48,
    memcpy_view,
    sub_ts,
)

__all__ = [
    "memcpy_view",
    "input_array_to_u32",
    "calculate_cycles",
    "make_u48",
    "sub_ts",
    "float_to_hex",
]
