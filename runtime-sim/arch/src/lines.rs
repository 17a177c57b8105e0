//! Line tables: the source line each instruction of a program class was compiled from, so
//! the simulator's traces and fault reports can name `file:line` rather than only a pc.
//!
//! # Encoding (section [`crate::image::section_lines`] of the image, one per class)
//!
//! All numbers are little-endian `u32`s:
//!
//! * the number of file names, then for each its byte length and its UTF-8 bytes, padded
//!   with zeros to a multiple of 4;
//! * the number of rows, then for each row `pc`, `file` (an index into the names) and
//!   `line` (1-based).
//!
//! Rows are sorted by strictly increasing `pc`; a row covers every instruction from its
//! `pc` up to the next row's (or the end of the code). Instructions before the first row
//! have no line. A class without a table has no section; [`LineTable::decode`] rejects
//! anything else that does not follow this layout with a [`LineTableError`], never a panic.

use std::fmt;

/// One row: the instructions from `pc` on come from `line` of file `file`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRow {
    /// First instruction index the row covers.
    pub pc: u32,
    /// Index into [`LineTable::files`].
    pub file: u32,
    /// 1-based line number.
    pub line: u32,
}

/// The line table of one program class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineTable {
    /// File names as the compiler shows them in diagnostics.
    pub files: Vec<String>,
    /// Rows by increasing `pc`.
    pub rows: Vec<LineRow>,
}

/// A source position found by [`LineTable::lookup`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLine<'a> {
    /// File name.
    pub file: &'a str,
    /// 1-based line.
    pub line: u32,
}

impl fmt::Display for SourceLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Why an encoded line table is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineTableError {
    /// The data ends inside a count, a name or a row.
    Truncated,
    /// Bytes follow the last row.
    TrailingBytes,
    /// A file name is not UTF-8.
    BadFileName {
        /// Index of the name.
        file: u32,
    },
    /// A row names a file index past the names.
    NoSuchFile {
        /// The row's pc.
        pc: u32,
        /// The index.
        file: u32,
    },
    /// A row's pc is not above the previous row's.
    Unsorted {
        /// The row's pc.
        pc: u32,
    },
    /// A row's line is 0.
    LineZero {
        /// The row's pc.
        pc: u32,
    },
    /// A row's pc is past the class's code ([`LineTable::check`]).
    PcPastCode {
        /// The row's pc.
        pc: u32,
        /// Instructions in the class.
        len: usize,
    },
}

impl fmt::Display for LineTableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineTableError::Truncated => f.write_str("the table is truncated"),
            LineTableError::TrailingBytes => f.write_str("bytes follow the last row"),
            LineTableError::BadFileName { file } => write!(f, "file name {file} is not UTF-8"),
            LineTableError::NoSuchFile { pc, file } => {
                write!(
                    f,
                    "the row for pc {pc} names file {file}, which does not exist"
                )
            }
            LineTableError::Unsorted { pc } => {
                write!(f, "the row for pc {pc} is not after the previous row")
            }
            LineTableError::LineZero { pc } => write!(f, "the row for pc {pc} names line 0"),
            LineTableError::PcPastCode { pc, len } => {
                write!(f, "a row names pc {pc}, past the {len} instructions")
            }
        }
    }
}

impl std::error::Error for LineTableError {}

/// Reads little-endian words from the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn word(&mut self) -> Result<u32, LineTableError> {
        let (head, rest) = self
            .0
            .split_first_chunk::<4>()
            .ok_or(LineTableError::Truncated)?;
        self.0 = rest;
        Ok(u32::from_le_bytes(*head))
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], LineTableError> {
        let padded = n
            .checked_next_multiple_of(4)
            .ok_or(LineTableError::Truncated)?;
        let bytes = self.0.get(..n).ok_or(LineTableError::Truncated)?;
        self.0 = self.0.get(padded..).ok_or(LineTableError::Truncated)?;
        Ok(bytes)
    }
}

impl LineTable {
    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The source line of instruction `pc`: that of the last row at or before it.
    pub fn lookup(&self, pc: u32) -> Option<SourceLine<'_>> {
        let i = self.rows.partition_point(|r| r.pc <= pc).checked_sub(1)?;
        let row = self.rows.get(i)?;
        Some(SourceLine {
            file: self.files.get(row.file as usize)?,
            line: row.line,
        })
    }

    /// Encodes the table as its section holds it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let word = |out: &mut Vec<u8>, v: usize| out.extend_from_slice(&(v as u32).to_le_bytes());
        word(&mut out, self.files.len());
        for f in &self.files {
            word(&mut out, f.len());
            out.extend_from_slice(f.as_bytes());
            out.resize(out.len().next_multiple_of(4), 0);
        }
        word(&mut out, self.rows.len());
        for r in &self.rows {
            for v in [r.pc, r.file, r.line] {
                word(&mut out, v as usize);
            }
        }
        out
    }

    /// Decodes a section written by [`LineTable::encode`], checking every row.
    pub fn decode(data: &[u8]) -> Result<LineTable, LineTableError> {
        let mut r = Reader(data);
        let nfiles = r.word()?;
        let mut files = Vec::new();
        for file in 0..nfiles {
            let n = r.word()? as usize;
            let name = std::str::from_utf8(r.bytes(n)?)
                .map_err(|_| LineTableError::BadFileName { file })?;
            files.push(name.to_string());
        }
        let nrows = r.word()?;
        // Each row takes 12 bytes: a count larger than the rest cannot be honest.
        if u64::from(nrows) * 12 > r.0.len() as u64 {
            return Err(LineTableError::Truncated);
        }
        let mut rows = Vec::with_capacity(nrows as usize);
        for _ in 0..nrows {
            rows.push(LineRow {
                pc: r.word()?,
                file: r.word()?,
                line: r.word()?,
            });
        }
        if !r.0.is_empty() {
            return Err(LineTableError::TrailingBytes);
        }
        let table = LineTable { files, rows };
        table.check(usize::MAX)?;
        Ok(table)
    }

    /// Checks that every row names an instruction of a class of `len` instructions, and
    /// that the rows are sorted and name existing files and lines (as [`LineTable::decode`]
    /// does for encoded tables).
    pub fn check(&self, len: usize) -> Result<(), LineTableError> {
        let mut prev: Option<u32> = None;
        for row in &self.rows {
            if prev.is_some_and(|p| row.pc <= p) {
                return Err(LineTableError::Unsorted { pc: row.pc });
            }
            if row.file as usize >= self.files.len() {
                return Err(LineTableError::NoSuchFile {
                    pc: row.pc,
                    file: row.file,
                });
            }
            if row.line == 0 {
                return Err(LineTableError::LineZero { pc: row.pc });
            }
            if row.pc as usize >= len {
                return Err(LineTableError::PcPastCode { pc: row.pc, len });
            }
            prev = Some(row.pc);
        }
        Ok(())
    }
}

/// Builds a [`LineTable`] instruction by instruction (the compiler's code generator).
#[derive(Default)]
pub struct LineTableBuilder {
    table: LineTable,
    names: std::collections::HashMap<String, u32>,
}

impl LineTableBuilder {
    /// Records that the instructions from `pc` on come from `file:line`. A later call for
    /// the same `pc` replaces the earlier one; one repeating the previous row's position
    /// adds nothing; a `pc` below the last row's or a line 0 is ignored.
    pub fn mark(&mut self, pc: u32, file: &str, line: u32) {
        if line == 0 {
            return;
        }
        let file = match self.names.get(file) {
            Some(&i) => i,
            None => {
                let i = self.table.files.len() as u32;
                self.table.files.push(file.to_string());
                self.names.insert(file.to_string(), i);
                i
            }
        };
        let row = LineRow { pc, file, line };
        let rows = &mut self.table.rows;
        match rows.last() {
            Some(last) if last.pc > pc => return,
            Some(last) if last.pc == pc => {
                rows.pop();
            }
            _ => {}
        }
        if rows
            .last()
            .is_some_and(|l| (l.file, l.line) == (file, line))
        {
            return;
        }
        rows.push(row);
    }

    /// The table, with rows at or past `len` (marks after the last instruction) dropped.
    pub fn finish(mut self, len: usize) -> LineTable {
        self.table.rows.retain(|r| (r.pc as usize) < len);
        self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LineTable {
        let mut b = LineTableBuilder::default();
        b.mark(0, "pe.csl", 3);
        b.mark(0, "pe.csl", 4);
        b.mark(2, "pe.csl", 4);
        b.mark(3, "<lib>/util.csl", 10);
        b.mark(7, "pe.csl", 5);
        b.mark(9, "pe.csl", 6);
        b.finish(9)
    }

    #[test]
    fn builder_merges_and_lookup_covers_ranges() {
        let t = sample();
        assert_eq!(t.rows.len(), 3, "{t:?}");
        assert_eq!(
            t.lookup(0).map(|s| s.to_string()).as_deref(),
            Some("pe.csl:4")
        );
        assert_eq!(t.lookup(2).map(|s| s.line), Some(4));
        assert_eq!(
            t.lookup(6).map(|s| s.to_string()).as_deref(),
            Some("<lib>/util.csl:10")
        );
        assert_eq!(t.lookup(100).map(|s| s.line), Some(5));
        assert!(LineTable::default().lookup(0).is_none());
        assert!(t.check(9).is_ok());
        assert_eq!(
            t.check(7),
            Err(LineTableError::PcPastCode { pc: 7, len: 7 })
        );
    }

    #[test]
    fn round_trip() {
        let t = sample();
        assert_eq!(LineTable::decode(&t.encode()), Ok(t));
        let empty = LineTable::default();
        assert_eq!(LineTable::decode(&empty.encode()), Ok(empty));
    }

    #[test]
    fn malformed_tables_are_typed_errors() {
        let t = sample();
        let bytes = t.encode();
        for cut in 0..bytes.len() {
            assert!(LineTable::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.extend_from_slice(&[0; 4]);
        assert_eq!(
            LineTable::decode(&extra),
            Err(LineTableError::TrailingBytes)
        );
        let mut bad = t.clone();
        bad.rows[1].file = 9;
        assert!(matches!(
            LineTable::decode(&bad.encode()),
            Err(LineTableError::NoSuchFile { file: 9, .. })
        ));
        let mut bad = t.clone();
        bad.rows[1].pc = 0;
        assert_eq!(
            LineTable::decode(&bad.encode()),
            Err(LineTableError::Unsorted { pc: 0 })
        );
        let mut bad = t.clone();
        bad.rows[0].line = 0;
        assert_eq!(
            LineTable::decode(&bad.encode()),
            Err(LineTableError::LineZero { pc: 0 })
        );
        // No files and a huge row count: rejected before allocating.
        let bytes = [0u32, u32::MAX].map(u32::to_le_bytes).concat();
        assert_eq!(LineTable::decode(&bytes), Err(LineTableError::Truncated));
        let bad_utf8 = [1u32, 1].map(u32::to_le_bytes).concat();
        let mut bytes = bad_utf8;
        bytes.extend_from_slice(&[0xff, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            LineTable::decode(&bytes),
            Err(LineTableError::BadFileName { file: 0 })
        );
    }

    proptest::proptest! {
        #[test]
        fn corrupted_tables_never_panic(pos in 0usize..256, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = sample().encode();
            let n = bytes.len();
            bytes[pos % n] = byte;
            let _ = LineTable::decode(&bytes);
        }
    }
}
