"""``SdkLayout``: the vendor's Python layout API (code regions, routes, ports, connections,
host streams), as a thin wrapper over cslc.

The classes only record what the script asks for. ``SdkLayout.compile`` writes the
description as JSON (``<out_prefix>/sdklayout.json``) and runs ``cslc --sdklayout`` on it;
the compiler (``cslc::sdklayout`` in Rust) places the regions, chooses colours, finds the
routes and compiles the program into ``<out_prefix>/out.elf``, which ``SdkRuntime`` runs.
cslc is found through the ``CSLC`` environment variable, else ``PATH``.
"""

import json
import numbers
import os
import shutil
import subprocess

import numpy as np

from .enums import Edge, Route, SdkTarget
from .errors import CslsimError

__all__ = [
    "SdkLayout",
    "CodeRegion",
    "Color",
    "RoutingPosition",
    "EdgeRouting",
    "InputPort",
    "OutputPort",
    "Stream",
    "LayoutError",
    "get_edge_routing",
]


class LayoutError(CslsimError, ValueError):
    """A layout call was given something it cannot use, or the layout did not compile."""


_ROUTE_NAMES = {
    Route.RAMP: "ramp",
    Route.EAST: "east",
    Route.WEST: "west",
    Route.NORTH: "north",
    Route.SOUTH: "south",
}
_EDGE_NAMES = {Edge.TOP: "top", Edge.BOTTOM: "bottom", Edge.LEFT: "left", Edge.RIGHT: "right"}


def _route(r):
    try:
        return _ROUTE_NAMES[Route(r)]
    except (ValueError, KeyError):
        raise LayoutError(f"{r!r} is not a Route (RAMP, EAST, WEST, NORTH or SOUTH)") from None


def _edge(e):
    try:
        return _EDGE_NAMES[Edge(e)]
    except (ValueError, KeyError):
        raise LayoutError(f"{e!r} is not an Edge (TOP, BOTTOM, LEFT or RIGHT)") from None


def _count(what, v, low=0):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < low:
        raise LayoutError(f"{what} must be an integer >= {low}, got {v!r}")
    return int(v)


def _xy(what, coord):
    """(x, y) of an ``IntVector`` or a pair."""
    if hasattr(coord, "x") and hasattr(coord, "y"):
        x, y = coord.x, coord.y
    else:
        try:
            x, y = coord
        except (TypeError, ValueError):
            raise LayoutError(f"{what} must be an IntVector or an (x, y) pair, got {coord!r}") from None
    return _count(f"{what}.x", x), _count(f"{what}.y", y)


class Color:
    """A symbolic colour; the compiler gives it a physical value. Colours with the same
    name are the same colour (``CodeRegion.color`` makes names unique per region)."""

    __slots__ = ("name", "_id")

    def __init__(self, name):
        if not isinstance(name, str) or not name.isidentifier():
            raise LayoutError(f"a color's name must be an identifier, got {name!r}")
        self.name = name
        self._id = name

    def __eq__(self, other):
        return isinstance(other, Color) and other._id == self._id

    def __hash__(self):
        return hash(self._id)

    def __repr__(self):
        return f"Color({self._id!r})"


class RoutingPosition:
    """One router switch position: its inputs and outputs (``Route`` values)."""

    __slots__ = ("_rx", "_tx")

    def __init__(self):
        self._rx = []
        self._tx = []

    def set_input(self, routes):
        self._rx = [_route(r) for r in routes]
        return self

    def set_output(self, routes):
        self._tx = [_route(r) for r in routes]
        return self

    def _json(self):
        return {"rx": list(self._rx), "tx": list(self._tx)}

    def __repr__(self):
        return f"RoutingPosition(rx={self._rx}, tx={self._tx})"


def _positions(what, positions):
    if isinstance(positions, RoutingPosition):
        positions = [positions]
    out = []
    for p in positions:
        if not isinstance(p, RoutingPosition):
            raise LayoutError(f"{what} must be RoutingPosition objects, got {p!r}")
        out.append(p._json())
    if not 1 <= len(out) <= 4:
        raise LayoutError(f"{what}: 1 to 4 routing positions, got {len(out)}")
    return out


class EdgeRouting:
    """Positions that replace a paint's positions on one edge of the region."""

    __slots__ = ("edge", "positions")

    def __init__(self, edge, positions):
        self.edge = _edge(edge)
        self.positions = _positions("edge routing", positions)


def get_edge_routing(edge, positions):
    """The routing positions used on the PEs of ``edge`` instead of a paint's own."""
    return EdgeRouting(edge, positions)


class _Port:
    __slots__ = ("_layout", "_index", "region", "color", "size")

    def __init__(self, layout, index, region, color, size):
        self._layout = layout
        self._index = index
        self.region = region
        self.color = color
        self.size = size

    def __repr__(self):
        return f"<{type(self).__name__} {self.color._id} of {self.region.name} ({self.size})>"


class InputPort(_Port):
    """Where wavelets enter a code region."""


class OutputPort(_Port):
    """Where wavelets leave a code region."""


class Stream:
    """A host stream bound to a port (``SdkRuntime.send``/``receive`` take it)."""

    __slots__ = ("_index", "port", "input")

    def __init__(self, index, port, is_input):
        self._index = index
        self.port = port
        self.input = is_input

    def __repr__(self):
        kind = "input" if self.input else "output"
        return f"<{kind} stream {self._index} on {self.port!r}>"


class CodeRegion:
    """A CSL file running on a ``width`` x ``height`` rectangle of PEs."""

    def __init__(self, layout, path, name, width, height):
        self._layout = layout
        self.path = os.path.abspath(os.fspath(path))
        self.name = name
        self.width = width
        self.height = height
        self._place = None
        self._params = []
        self._paints = []
        self._symbols = []

    def __repr__(self):
        return f"<CodeRegion {self.name} {self.width}x{self.height}>"

    # ---- colours and params ---------------------------------------------------------

    def color(self, name):
        """A colour named ``name`` that is unique to this region (its param name is
        ``name``)."""
        c = Color(name)
        c._id = f"{self.name}.{name}"
        return c

    def _rect(self, rect):
        if rect is None:
            return [0, 0, self.width, self.height]
        if hasattr(rect, "ul") and hasattr(rect, "lr"):
            (x0, y0), (x1, y1) = _xy("rectangle corner", rect.ul), _xy("rectangle corner", rect.lr)
        else:
            try:
                a, b = rect
            except (TypeError, ValueError):
                raise LayoutError(f"expected an IntRectangle, got {rect!r}") from None
            (x0, y0), (x1, y1) = _xy("rectangle corner", a), _xy("rectangle corner", b)
        if not (x0 < x1 <= self.width and y0 < y1 <= self.height):
            raise LayoutError(
                f"rectangle ({x0}, {y0})-({x1}, {y1}) is empty or not inside code region "
                f"{self.name} ({self.width} x {self.height})"
            )
        return [x0, y0, x1, y1]

    def _point(self, coord):
        x, y = _xy("coordinates", coord)
        if x >= self.width or y >= self.height:
            raise LayoutError(
                f"PE ({x}, {y}) is outside code region {self.name} ({self.width} x {self.height})"
            )
        return [x, y, x + 1, y + 1]

    def _param(self, rect, args, what):
        if len(args) == 1 and isinstance(args[0], Color):
            name, value = args[0].name, args[0]
        elif len(args) == 2:
            name, value = args
        else:
            raise LayoutError(f"{what} takes a Color, or a name and a value")
        if not isinstance(name, str) or not name.isidentifier():
            raise LayoutError(f"{what}: a param name must be an identifier, got {name!r}")
        if isinstance(value, Color):
            v = {"kind": "color", "value": value._id}
        elif isinstance(value, (bool, np.bool_)):
            v = {"kind": "int", "value": int(bool(value))}
        elif isinstance(value, numbers.Integral):
            v = {"kind": "int", "value": int(value)}
        elif isinstance(value, numbers.Real):
            v = {"kind": "float", "value": float(value)}
        else:
            raise LayoutError(
                f"{what}: param {name!r} must be an int, a float or a Color, got {value!r}"
            )
        self._params.append({"rect": rect, "name": name, "value": v})

    def set_param_all(self, *args):
        """``set_param_all(color)`` or ``set_param_all(name, value)`` on every PE."""
        self._param(self._rect(None), args, "set_param_all")

    def set_param(self, coord, *args):
        """Sets a param on the PE at region-relative ``coord``."""
        self._param(self._point(coord), args, "set_param")

    def set_param_range(self, rect, *args):
        """Sets a param on the PEs of a region-relative ``IntRectangle`` (corner ``lr``
        excluded)."""
        self._param(self._rect(rect), args, "set_param_range")

    # ---- routes ---------------------------------------------------------------------

    def _paint(self, rect, color, positions, edges, what):
        if not isinstance(color, Color):
            raise LayoutError(f"{what}: expected a Color, got {color!r}")
        edge_list = []
        for e in edges or []:
            if not isinstance(e, EdgeRouting):
                raise LayoutError(f"{what}: edge routes come from get_edge_routing, got {e!r}")
            edge_list.append({"edge": e.edge, "positions": e.positions})
        self._paints.append({
            "rect": rect,
            "color": color._id,
            "positions": _positions(what, positions),
            "edges": edge_list,
        })

    def paint(self, coord, color, positions, edges=None):
        """Routes ``color`` on the PE at region-relative ``coord``."""
        self._paint(self._point(coord), color, positions, edges, "paint")

    def paint_all(self, color, positions, edges=None):
        """Routes ``color`` on every PE (``edges``: other positions on some edges)."""
        self._paint(self._rect(None), color, positions, edges, "paint_all")

    def paint_range(self, rect, color, positions, edges=None):
        """Routes ``color`` on the PEs of a region-relative rectangle."""
        self._paint(self._rect(rect), color, positions, edges, "paint_range")

    # ---- ports, placement, memory ---------------------------------------------------

    def _port(self, cls, color, edge, positions, size):
        if not isinstance(color, Color):
            raise LayoutError(f"a port needs a Color, got {color!r}")
        size = _count("port size", size, 1)
        index = len(self._layout._ports)
        port = cls(self._layout, index, self, color, size)
        self._layout._ports.append({
            "region": self._layout._regions.index(self),
            "color": color._id,
            "edge": _edge(edge),
            "input": cls is InputPort,
            "positions": _positions("port routes", positions),
            "size": size,
        })
        self._layout._port_objs.append(port)
        return port

    def create_input_port(self, color, edge, positions, size, prefix=None):
        """A port where ``size`` wavelets of ``color`` enter through the PEs of ``edge``;
        ``positions`` give the ports' outputs (the compiler picks the inputs)."""
        return self._port(InputPort, color, edge, positions, size)

    def create_output_port(self, color, edge, positions, size, prefix=None):
        """A port where ``size`` wavelets of ``color`` leave through the PEs of ``edge``;
        ``positions`` give the inputs (the compiler picks the outputs)."""
        return self._port(OutputPort, color, edge, positions, size)

    def place(self, x, y):
        """Puts the region's north-west PE at global ``(x, y)``."""
        self._place = (_count("x", x), _count("y", y))

    def set_symbol_all(self, name, data, width, height):
        """Initial value of array ``name`` on every PE: ``data`` is a ``height`` x
        ``width`` matrix (row-major) cut into equal blocks, one per PE."""
        arr = np.ascontiguousarray(np.asarray(data)).reshape(-1)
        width, height = _count("width", width, 1), _count("height", height, 1)
        if arr.size != width * height:
            raise LayoutError(
                f"set_symbol_all({name!r}): {arr.size} elements for a {height} x {width} matrix"
            )
        if arr.dtype.itemsize == 4:
            words = arr.view(np.uint32)
        elif arr.dtype.itemsize == 2:
            words = arr.view(np.uint16).astype(np.uint32)
        else:
            raise LayoutError(
                f"set_symbol_all({name!r}): elements of 2 or 4 bytes, not {arr.dtype}"
            )
        self._symbols.append({
            "name": str(name),
            "data": [int(w) for w in words],
            "elem_bytes": arr.dtype.itemsize,
            "width": width,
            "height": height,
        })

    def _json(self):
        return {
            "name": self.name,
            "file": self.path,
            "width": self.width,
            "height": self.height,
            "place": self._place,
            "params": self._params,
            "paints": self._paints,
            "symbols": self._symbols,
        }


def _find_cslc():
    env = os.environ.get("CSLC")
    if env:
        return env
    found = shutil.which("cslc")
    if found:
        return found
    raise LayoutError("cslc not found: put it on PATH or set CSLC=/path/to/cslc")


class SdkLayout:
    """A program built from code regions (vendor ``SdkLayout``)."""

    def __init__(self, platform):
        target = getattr(platform, "target", None)
        if target is None:
            raise LayoutError("SdkLayout(platform): platform must come from get_platform()")
        self._arch = SdkTarget(target).name.lower()
        self._regions = []
        self._ports = []
        self._port_objs = []
        self._connections = []
        self._streams = []

    def create_code_region(self, path, name, width, height):
        """A region running the CSL file ``path`` on ``width`` x ``height`` PEs."""
        if not isinstance(name, str) or not name:
            raise LayoutError(f"a code region needs a name, got {name!r}")
        if any(r.name == name for r in self._regions):
            raise LayoutError(f"there is already a code region named {name!r}")
        if not os.path.isfile(os.fspath(path)):
            raise LayoutError(f"code region {name!r}: no such file {os.fspath(path)!r}")
        region = CodeRegion(
            self, path, name, _count("width", width, 1), _count("height", height, 1)
        )
        self._regions.append(region)
        return region

    def _own(self, port, cls, what):
        if not isinstance(port, cls) or port._layout is not self:
            raise LayoutError(f"{what} needs an {cls.__name__} of this layout, got {port!r}")
        return port._index

    def connect(self, out_port, in_port):
        """Routes the wavelets of an output port to an input port."""
        a = self._own(out_port, OutputPort, "connect(out_port, ...)")
        b = self._own(in_port, InputPort, "connect(..., in_port)")
        self._connections.append((a, b))

    def create_input_stream(self, port):
        """A host-to-device stream into an input port."""
        i = self._own(port, InputPort, "create_input_stream")
        s = Stream(len(self._streams), port, True)
        self._streams.append({"port": i})
        return s

    def create_output_stream(self, port):
        """A device-to-host stream out of an output port."""
        i = self._own(port, OutputPort, "create_output_stream")
        s = Stream(len(self._streams), port, False)
        self._streams.append({"port": i})
        return s

    def _json(self):
        return {
            "arch": self._arch,
            "regions": [r._json() for r in self._regions],
            "ports": self._ports,
            "connections": self._connections,
            "streams": self._streams,
        }

    def compile(self, out_prefix="out"):
        """Compiles the layout into the directory ``out_prefix``; returns the artifacts
        for ``SdkRuntime``."""
        from .runtime import SdkCompileArtifacts

        out = os.fspath(out_prefix)
        os.makedirs(out, exist_ok=True)
        desc = os.path.join(out, "sdklayout.json")
        with open(desc, "w") as f:
            json.dump(self._json(), f)
        proc = subprocess.run(
            [_find_cslc(), "--sdklayout", desc, "-o", out],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise LayoutError(f"compiling the layout failed:\n{proc.stderr.strip()}")
        return SdkCompileArtifacts(out)
