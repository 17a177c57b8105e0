"""``cerebras.sdk.sdk_utils`` as host scripts import it, implemented by cslsim (an
independent implementation, not affiliated with Cerebras Systems): the functions of
``cslsim.utils``."""

from cslsim.utils import *  # noqa: F401,F403
from cslsim.utils import __all__  # noqa: F401
