#!/usr/bin/env cs_python
"""Tutorial 02 host program: y = A·x + b on one PE, computed with memory DSDs.

Only the device code differs from tutorial 01: the host side (copy A, x and b to the PE,
launch `compute`, copy y back and check it against numpy) is tutorial 01's run.py, which
this script runs. Usage: cs_python run.py --name out   (out = the cslc -o directory)
"""

import pathlib
import runpy

runpy.run_path(str(pathlib.Path(__file__).resolve().parent.parent / "01-gemv" / "run.py"),
               run_name="__main__")
