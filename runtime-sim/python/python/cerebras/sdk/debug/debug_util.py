"""``cerebras.sdk.debug.debug_util`` as host scripts import it, implemented by cslsim (an
independent implementation, not affiliated with Cerebras Systems).

``debug_util(bindir)`` reads the simulated fabric of a run made in the same Python
process (cslsim writes no core files).
"""

from cslsim.debug import debug_util

__all__ = ["debug_util"]
