//! Regions: sets of tiles, kept as a union of rectangles so that large floorplans cost
//! little until their tiles are walked.
//!
//! Coordinates are tile columns (`x`, east) and rows (`y`, the router's south); row 0 is
//! the northern edge. A [`Side`] names a neighbour the way Paint's routes do.

use csl_arch::fabric::Direction;

/// The largest width or height of a rectangle (and of the layout).
pub const MAX_SIDE: u32 = 2048;

/// An axis-aligned rectangle of tiles: columns `x..x+w`, rows `y..y+h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rect {
    /// First column.
    pub x: u32,
    /// First row.
    pub y: u32,
    /// Columns.
    pub w: u32,
    /// Rows.
    pub h: u32,
}

impl Rect {
    /// Whether the tile lies inside.
    pub fn contains(&self, x: u32, y: u32) -> bool {
        x >= self.x && y >= self.y && x - self.x < self.w && y - self.y < self.h
    }
}

/// A set of tiles: the union of its rectangles (which may overlap).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// The rectangles.
    pub rects: Vec<Rect>,
}

impl Region {
    /// One rectangle.
    pub fn rect(r: Rect) -> Region {
        Region { rects: vec![r] }
    }

    /// Whether the tile belongs to the region.
    pub fn contains(&self, x: u32, y: u32) -> bool {
        self.rects.iter().any(|r| r.contains(x, y))
    }

    /// The smallest rectangle holding every tile (`None` for an empty region).
    pub fn bbox(&self) -> Option<Rect> {
        let x0 = self.rects.iter().map(|r| r.x).min()?;
        let y0 = self.rects.iter().map(|r| r.y).min()?;
        let x1 = self.rects.iter().map(|r| r.x + r.w).max()?;
        let y1 = self.rects.iter().map(|r| r.y + r.h).max()?;
        Some(Rect {
            x: x0,
            y: y0,
            w: x1 - x0,
            h: y1 - y0,
        })
    }

    /// Every tile once, row by row (rows outermost), columns ascending.
    pub fn tiles(&self) -> Vec<(u32, u32)> {
        let Some(b) = self.bbox() else {
            return Vec::new();
        };
        if self.rects.len() == 1 {
            return (b.y..b.y + b.h)
                .flat_map(|y| (b.x..b.x + b.w).map(move |x| (x, y)))
                .collect();
        }
        let mut out: Vec<(u32, u32)> = self
            .rects
            .iter()
            .flat_map(|r| (r.y..r.y + r.h).flat_map(move |y| (r.x..r.x + r.w).map(move |x| (x, y))))
            .collect();
        out.sort_unstable_by_key(|&(x, y)| (y, x));
        out.dedup();
        out
    }
}

impl Region {
    /// The region moved by `dx` columns and `dy` rows (`None` if a tile would leave
    /// `0..MAX_SIDE` on either axis).
    pub fn translated(&self, dx: i64, dy: i64) -> Option<Region> {
        let shift = |v: u32, d: i64, len: u32| -> Option<u32> {
            let n = i64::from(v).checked_add(d)?;
            let v = u32::try_from(n).ok()?;
            (u64::from(v) + u64::from(len) <= u64::from(MAX_SIDE)).then_some(v)
        };
        let rects = self
            .rects
            .iter()
            .map(|r| {
                Some(Rect {
                    x: shift(r.x, dx, r.w)?,
                    y: shift(r.y, dy, r.h)?,
                    w: r.w,
                    h: r.h,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Region { rects })
    }

    /// The tiles of the region that lie in `clip`.
    pub fn clipped(&self, clip: Rect) -> Region {
        let rects = self
            .rects
            .iter()
            .filter_map(|r| {
                let x0 = r.x.max(clip.x);
                let y0 = r.y.max(clip.y);
                let x1 = (r.x + r.w).min(clip.x + clip.w);
                let y1 = (r.y + r.h).min(clip.y + clip.h);
                (x0 < x1 && y0 < y1).then(|| Rect {
                    x: x0,
                    y: y0,
                    w: x1 - x0,
                    h: y1 - y0,
                })
            })
            .collect();
        Region { rects }
    }
}

/// A side of a tile as Paint's routes name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// `L`: west, column x-1.
    L,
    /// `R`: east, column x+1.
    R,
    /// `U`: +y, the router's south (row y+1).
    U,
    /// `D`: -y, the router's north (row y-1).
    D,
    /// `C`: the tile's own core (the router's RAMP).
    C,
}

impl Side {
    /// Every side, in bit order.
    pub const ALL: [Side; 5] = [Side::L, Side::R, Side::U, Side::D, Side::C];

    /// Parses a route letter.
    pub fn from_letter(c: char) -> Option<Side> {
        Some(match c {
            'L' => Side::L,
            'R' => Side::R,
            'U' => Side::U,
            'D' => Side::D,
            'C' => Side::C,
            _ => return None,
        })
    }

    /// What the side is, in words (editors show it).
    pub fn describe(self) -> &'static str {
        match self {
            Side::L => "the left neighbour (west, column x-1)",
            Side::R => "the right neighbour (east, column x+1)",
            Side::U => "the neighbour at y+1 (the router's south)",
            Side::D => "the neighbour at y-1 (the router's north)",
            Side::C => "the tile's own core (the router's RAMP)",
        }
    }

    /// The letter.
    pub fn letter(self) -> char {
        match self {
            Side::L => 'L',
            Side::R => 'R',
            Side::U => 'U',
            Side::D => 'D',
            Side::C => 'C',
        }
    }

    /// The side's bit in a [`Sides`] set.
    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The router port.
    pub fn direction(self) -> Direction {
        match self {
            Side::L => Direction::West,
            Side::R => Direction::East,
            Side::U => Direction::South,
            Side::D => Direction::North,
            Side::C => Direction::Ramp,
        }
    }

    /// The neighbouring tile on this side, if its coordinates are not negative (`C` is
    /// the tile itself).
    pub fn neighbour(self, x: u32, y: u32) -> Option<(u32, u32)> {
        match self {
            Side::L => x.checked_sub(1).map(|x| (x, y)),
            Side::R => x.checked_add(1).map(|x| (x, y)),
            Side::U => y.checked_add(1).map(|y| (x, y)),
            Side::D => y.checked_sub(1).map(|y| (x, y)),
            Side::C => Some((x, y)),
        }
    }

    /// Whether the side lies on the x axis (`L`, `R`), the y axis (`U`, `D`) or neither.
    pub fn axis(self) -> Option<Axis> {
        match self {
            Side::L | Side::R => Some(Axis::X),
            Side::U | Side::D => Some(Axis::Y),
            Side::C => None,
        }
    }
}

/// An axis of the fabric (for the colour swap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// East–west.
    X,
    /// North–south.
    Y,
}

/// A set of sides as bits ([`Side::bit`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sides(pub u8);

impl Sides {
    /// Whether `s` is in the set.
    pub fn has(self, s: Side) -> bool {
        self.0 & s.bit() != 0
    }

    /// The set with `s` added.
    pub fn with(self, s: Side) -> Sides {
        Sides(self.0 | s.bit())
    }

    /// The set without `s`.
    pub fn without(self, s: Side) -> Sides {
        Sides(self.0 & !s.bit())
    }

    /// Union.
    pub fn union(self, o: Sides) -> Sides {
        Sides(self.0 | o.0)
    }

    /// Whether empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The sides, in bit order.
    pub fn iter(self) -> impl Iterator<Item = Side> {
        Side::ALL.into_iter().filter(move |s| self.has(*s))
    }

    /// The letters, in bit order (`LC`).
    pub fn letters(self) -> String {
        self.iter().map(Side::letter).collect()
    }
}

/// One route: wavelets from any of `inputs` go to every one of `outputs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    /// Sides a wavelet may arrive from.
    pub inputs: Sides,
    /// Sides it is sent to.
    pub outputs: Sides,
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}X{}", self.inputs.letters(), self.outputs.letters())
    }
}
