"""What every host script run by ``cs_python`` repeats: its command line (``--name``,
the ``cslc -o`` directory, and ``--cmaddr``), the compile-time facts cslc recorded in
``<name>/out.json``, a loaded and started runtime, and the keyword arguments of the
usual memcpy calls. The tutorials' ``run.py`` scripts use it, so that each states only
what is particular to its program::

    from cslsim.script import COPY, compiled_params, parse_args, start

    args = parse_args("GEMV on a single PE")
    n = int(compiled_params(args.name)["n"])
    runner = start(args)
    runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, 1, 1, n, **COPY)
"""

import argparse
import json

from .enums import MemcpyDataType, MemcpyOrder
from .runtime import SdkRuntime

__all__ = ["COPY", "STREAM", "arg_parser", "parse_args", "read_compile_data", "compiled_params", "start"]

#: Keyword arguments of a blocking copy-mode memcpy of 32-bit elements in row-major order.
COPY = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
#: The same in streaming mode: the destination (or source) is a colour id, not a symbol,
#: and every element travels as one 32-bit wavelet.
STREAM = dict(COPY, streaming=True)


def arg_parser(description):
    """An ``argparse`` parser with the two options of every host script, for a script
    that adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--name", default="out", help="directory written by cslc -o")
    parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
    return parser


def parse_args(description):
    """The command line of a host script that has only the usual options."""
    return arg_parser(description).parse_args()


def read_compile_data(name):
    """The contents of ``<name>/out.json``, which ``cslc -o <name>`` writes: the params
    given on its command line (as strings), the fabric offsets, ..."""
    with open(f"{name}/out.json", encoding="utf-8") as f:
        return json.load(f)


def compiled_params(name):
    """The params given to ``cslc --params`` (as strings). A param left at its default in
    the layout is not listed."""
    return read_compile_data(name)["params"]


def start(args):
    """An ``SdkRuntime`` for the program in ``args.name`` (on ``args.cmaddr`` if given),
    loaded and running, ready for memcpy and launch calls."""
    runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
    runner.load()
    runner.run()
    return runner
