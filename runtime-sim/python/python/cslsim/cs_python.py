"""``cs_python``: the vendor's name for "the Python that can import the SDK".

``cs_python run.py --name out`` runs ``python run.py --name out`` with the interpreter
cslsim is installed in, so ``cerebras.sdk...`` and ``cslsim`` are importable.
"""

import os
import subprocess
import sys


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    exe = sys.executable
    if not exe:
        sys.stderr.write("cs_python: cannot determine the Python interpreter\n")
        return 1
    if os.name == "nt":
        return subprocess.call([exe, *args])
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [exe, *args])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
