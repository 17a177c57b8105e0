"""``python -m cslsim SCRIPT ARGS...``: same as ``cs_python SCRIPT ARGS...``."""

import sys

from .cs_python import main

sys.exit(main())
