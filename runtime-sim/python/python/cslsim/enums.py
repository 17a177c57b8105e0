"""Enumerations of the host API (values as in the vendor runtime where known)."""

from enum import IntEnum

__all__ = ["MemcpyDataType", "MemcpyOrder", "SdkTarget", "Route", "Edge", "FP16TYPE"]


class MemcpyDataType(IntEnum):
    """Device element size of a copy-mode memcpy."""

    #: 4 bytes per device element.
    MEMCPY_32BIT = 0
    #: 2 bytes per device element: the low 16 bits of each 32-bit host word.
    MEMCPY_16BIT = 1


class MemcpyOrder(IntEnum):
    """Layout of the host array of a memcpy (``A[h][w][l]`` flattened)."""

    #: C order: host index of PE (i, j), element k is ``(j*w + i)*l + k``.
    ROW_MAJOR = 0
    #: Fortran order: host index of PE (i, j), element k is ``j + i*h + k*h*w``.
    COL_MAJOR = 1


class SdkTarget(IntEnum):
    """Target architecture of a platform (the numeric values are cslsim's own)."""

    WSE2 = 0
    WSE3 = 1


class Route(IntEnum):
    """Router directions (SdkLayout API; not used by cslsim)."""

    RAMP = 0
    EAST = 1
    WEST = 2
    NORTH = 3
    SOUTH = 4


class Edge(IntEnum):
    """Edges of a code region (SdkLayout API; not used by cslsim)."""

    TOP = 0
    BOTTOM = 1
    LEFT = 2
    RIGHT = 3


class FP16TYPE(IntEnum):
    """16-bit float formats (SdkLayout API; not used by cslsim)."""

    F16 = 0
    BF16 = 1
    CB16 = 2
