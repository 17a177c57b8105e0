"""2-D integer grid coordinates for the SdkLayout API (``cerebras.geometry.geometry``):
``IntVector(x, y)`` and ``IntRectangle(ul, lr)``, the rectangle of the points from its
upper-left corner ``ul`` (included) to its lower-right corner ``lr`` (excluded)."""

import numbers

__all__ = ["IntVector", "IntRectangle"]


def _int(what, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {v!r}")
    return int(v)


class _Pair:
    """Equality, hashing and ``Name(a, b)`` repr from the two values a subclass iterates
    over."""

    __slots__ = ()

    def __eq__(self, other):
        return isinstance(other, type(self)) and tuple(self) == tuple(other)

    def __hash__(self):
        return hash(tuple(self))

    def __repr__(self):
        a, b = self
        return f"{type(self).__name__}({a!r}, {b!r})"


class IntVector(_Pair):
    """A point (or offset) of the PE grid: ``x`` grows east, ``y`` grows south."""

    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = _int("x", x)
        self.y = _int("y", y)

    def __iter__(self):
        return iter((self.x, self.y))

    def __add__(self, other):
        return IntVector(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return IntVector(self.x - other.x, self.y - other.y)


class IntRectangle(_Pair):
    """The points ``ul.x <= x < lr.x``, ``ul.y <= y < lr.y``."""

    __slots__ = ("ul", "lr")

    def __init__(self, ul, lr):
        if not isinstance(ul, IntVector) or not isinstance(lr, IntVector):
            raise TypeError("IntRectangle(ul, lr) takes two IntVector corners")
        self.ul = ul
        self.lr = lr

    @property
    def width(self):
        return self.lr.x - self.ul.x

    @property
    def height(self):
        return self.lr.y - self.ul.y

    def __iter__(self):
        return iter((self.ul, self.lr))
