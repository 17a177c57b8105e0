//! Reads and writes LAMMPS text dumps (`ITEM: TIMESTEP`, `ITEM: NUMBER OF ATOMS`,
//! `ITEM: BOX BOUNDS pp pp pp`, `ITEM: ATOMS id type x y z vx vy vz`).

use std::fmt;

/// One atom of a dump.
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    /// Atom id (1-based in LAMMPS files).
    pub id: u32,
    /// Atom type (1 or 2).
    pub typ: u32,
    /// Position.
    pub pos: [f64; 3],
    /// Velocity.
    pub vel: [f64; 3],
}

/// A whole dump frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Dump {
    /// The `ITEM: TIMESTEP` value.
    pub timestep: u64,
    /// Lower box bounds.
    pub lo: [f64; 3],
    /// Upper box bounds.
    pub hi: [f64; 3],
    /// Atoms in file order.
    pub atoms: Vec<Atom>,
}

/// A malformed dump: the 1-based line and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct DumpError {
    /// Line number (1-based; 0 for problems with the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for DumpError {}

fn err(line: usize, message: impl Into<String>) -> DumpError {
    DumpError {
        line,
        message: message.into(),
    }
}

impl Dump {
    /// Side lengths of the box.
    pub fn box_len(&self) -> [f64; 3] {
        [
            self.hi[0] - self.lo[0],
            self.hi[1] - self.lo[1],
            self.hi[2] - self.lo[2],
        ]
    }

    /// Parses the first frame of a dump.
    pub fn parse(text: &str) -> Result<Dump, DumpError> {
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        let mut timestep = None;
        let mut natoms: Option<usize> = None;
        let mut bounds: Option<([f64; 3], [f64; 3])> = None;
        let mut atoms = Vec::new();
        let mut ids = std::collections::HashSet::new();
        let mut natoms_line = 0;
        let next = |i: &mut usize| -> Result<(usize, &str), DumpError> {
            let l = lines
                .get(*i)
                .ok_or_else(|| err(*i, "unexpected end of file"))?;
            *i += 1;
            Ok((*i, l.trim()))
        };
        while i < lines.len() {
            let (ln, line) = next(&mut i)?;
            if line.is_empty() {
                continue;
            }
            let Some(item) = line.strip_prefix("ITEM:") else {
                return Err(err(ln, format!("expected an `ITEM:` line, found `{line}`")));
            };
            let item = item.trim();
            if item == "TIMESTEP" {
                let (ln, v) = next(&mut i)?;
                timestep = Some(
                    v.parse()
                        .map_err(|_| err(ln, format!("bad timestep `{v}`")))?,
                );
            } else if item == "NUMBER OF ATOMS" {
                let (ln, v) = next(&mut i)?;
                natoms_line = ln;
                natoms = Some(
                    v.parse()
                        .map_err(|_| err(ln, format!("bad atom count `{v}`")))?,
                );
            } else if let Some(b) = item.strip_prefix("BOX BOUNDS") {
                if b.split_whitespace().any(|f| f != "pp") {
                    return Err(err(
                        ln,
                        "only fully periodic boxes (`pp pp pp`) are supported",
                    ));
                }
                let mut lo = [0.0; 3];
                let mut hi = [0.0; 3];
                for k in 0..3 {
                    let (ln, v) = next(&mut i)?;
                    let nums: Vec<f64> = v
                        .split_whitespace()
                        .map(str::parse)
                        .collect::<Result<_, _>>()
                        .map_err(|_| err(ln, "bad box bounds"))?;
                    let [a, b] = nums[..] else {
                        return Err(err(ln, "box bounds need two numbers"));
                    };
                    if !a.is_finite() || !b.is_finite() {
                        return Err(err(
                            ln,
                            format!("box bounds must be finite numbers, found `{v}`"),
                        ));
                    }
                    if b <= a {
                        return Err(err(ln, "box upper bound must exceed the lower bound"));
                    }
                    lo[k] = a;
                    hi[k] = b;
                }
                bounds = Some((lo, hi));
            } else if let Some(cols) = item.strip_prefix("ATOMS") {
                let cols: Vec<&str> = cols.split_whitespace().collect();
                let want = ["id", "type", "x", "y", "z", "vx", "vy", "vz"];
                let idx: Vec<usize> = want
                    .iter()
                    .map(|w| {
                        cols.iter()
                            .position(|c| c == w)
                            .ok_or_else(|| err(ln, format!("the ATOMS line has no `{w}` column")))
                    })
                    .collect::<Result<_, _>>()?;
                let n = natoms.ok_or_else(|| err(ln, "ATOMS before NUMBER OF ATOMS"))?;
                let count_line = natoms_line;
                for k in 0..n {
                    let Ok((ln, v)) = next(&mut i) else {
                        return Err(err(
                            count_line,
                            format!(
                                "NUMBER OF ATOMS says {n}, but the file has only {k} atom rows"
                            ),
                        ));
                    };
                    let f: Vec<&str> = v.split_whitespace().collect();
                    if f.len() != cols.len() {
                        return Err(err(
                            ln,
                            format!("expected {} columns, found {}", cols.len(), f.len()),
                        ));
                    }
                    let num = |k: usize| -> Result<f64, DumpError> {
                        f[idx[k]]
                            .parse::<f64>()
                            .map_err(|_| err(ln, format!("bad number `{}`", f[idx[k]])))
                    };
                    let int = |k: usize| -> Result<u32, DumpError> {
                        f[idx[k]]
                            .parse::<u32>()
                            .map_err(|_| err(ln, format!("bad integer `{}`", f[idx[k]])))
                    };
                    let atom = Atom {
                        id: int(0)?,
                        typ: int(1)?,
                        pos: [num(2)?, num(3)?, num(4)?],
                        vel: [num(5)?, num(6)?, num(7)?],
                    };
                    if let Some(bad) = atom.pos.iter().chain(&atom.vel).find(|x| !x.is_finite()) {
                        return Err(err(
                            ln,
                            format!(
                                "atom {}: positions and velocities must be finite, found {bad}",
                                atom.id
                            ),
                        ));
                    }
                    if !ids.insert(atom.id) {
                        return Err(err(ln, format!("atom id {} appears twice", atom.id)));
                    }
                    atoms.push(atom);
                }
                // Another frame may follow; another atom row may not.
                if let Some((k, extra)) = lines
                    .iter()
                    .enumerate()
                    .skip(i)
                    .find(|(_, l)| !l.trim().is_empty())
                    && !extra.trim().starts_with("ITEM:")
                {
                    return Err(err(
                        k + 1,
                        format!(
                            "more atom rows than the {n} that NUMBER OF ATOMS (line {count_line}) declares"
                        ),
                    ));
                }
                break;
            } else {
                return Err(err(ln, format!("unknown item `{item}`")));
            }
        }
        let (lo, hi) = bounds.ok_or_else(|| err(0, "the dump has no BOX BOUNDS"))?;
        if atoms.is_empty() {
            return Err(err(0, "the dump has no atoms"));
        }
        Ok(Dump {
            timestep: timestep.unwrap_or(0),
            lo,
            hi,
            atoms,
        })
    }

    /// Writes the frame as a LAMMPS text dump, atoms sorted by id.
    pub fn write(&self) -> String {
        let mut atoms = self.atoms.clone();
        atoms.sort_by_key(|a| a.id);
        let mut s = format!(
            "ITEM: TIMESTEP\n{}\nITEM: NUMBER OF ATOMS\n{}\nITEM: BOX BOUNDS pp pp pp\n",
            self.timestep,
            atoms.len()
        );
        for k in 0..3 {
            s.push_str(&format!("{:.16e} {:.16e}\n", self.lo[k], self.hi[k]));
        }
        s.push_str("ITEM: ATOMS id type x y z vx vy vz\n");
        for a in &atoms {
            s.push_str(&format!(
                "{} {} {} {} {} {} {} {}\n",
                a.id, a.typ, a.pos[0], a.pos[1], a.pos[2], a.vel[0], a.vel[1], a.vel[2]
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shipped_dump() {
        let d = Dump::parse(include_str!("data/lj108.dump")).unwrap();
        assert_eq!(d.atoms.len(), 108);
        assert!((d.box_len()[0] - 10.2599).abs() < 1e-12);
        assert_eq!(Dump::parse(&d.write()).unwrap().atoms.len(), 108);
    }

    /// Issue 11: non-finite bounds and coordinates, an atom count that disagrees with the
    /// rows, and duplicate ids are errors naming the line.
    #[test]
    fn inconsistent_dumps_are_rejected_with_the_line() {
        let frame = |bounds: &str, count: usize, rows: &str| {
            format!(
                "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n{count}\nITEM: BOX BOUNDS pp pp pp\n{bounds}\n0 1\n0 1\nITEM: ATOMS id type x y z vx vy vz\n{rows}"
            )
        };
        let two = "1 1 0.1 0.1 0.1 0 0 0\n2 1 0.5 0.5 0.5 0 0 0\n";
        assert!(Dump::parse(&frame("0 1", 2, two)).is_ok());
        let e = Dump::parse(&frame("0 nan", 2, two)).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        let e = Dump::parse(&frame("-inf 1", 2, two)).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        let e = Dump::parse(&frame("0 1", 2, "1 1 nan 0 0 0 0 0\n2 1 0 0 0 0 0 0\n")).unwrap_err();
        assert_eq!(e.line, 10, "{e}");
        let e = Dump::parse(&frame("0 1", 2, "1 1 0 0 0 inf 0 0\n2 1 0 0 0 0 0 0\n")).unwrap_err();
        assert_eq!(e.line, 10, "{e}");
        let e = Dump::parse(&frame("0 1", 1, two)).unwrap_err();
        assert_eq!(e.line, 11, "{e}");
        assert!(e.message.contains("more atom rows"), "{e}");
        let e = Dump::parse(&frame("0 1", 3, two)).unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.contains("only 2 atom rows"), "{e}");
        let e = Dump::parse(&frame("0 1", 2, "1 1 0 0 0 0 0 0\n1 1 0.5 0 0 0 0 0\n")).unwrap_err();
        assert_eq!(e.line, 11, "{e}");
        // A second frame after the first is fine.
        assert!(Dump::parse(&(frame("0 1", 2, two) + &frame("0 1", 2, two))).is_ok());
    }

    #[test]
    fn errors_name_the_line() {
        let e = Dump::parse("ITEM: TIMESTEP\nabc\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(Dump::parse("").is_err());
        assert!(Dump::parse("ITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS pp pp pp\n0 1\n0 1\n0 1\nITEM: ATOMS id type x y z vx vy vz\n1 1 0 0 0 0 0 0\n").is_err());
    }
}
