//! The line table of a class as code generation writes it: each [`Inst::Loc`] marker and
//! each function entry becomes a row (`pc` → `file:line`) of a
//! [`csl_arch::lines::LineTable`], with file names as diagnostics show them.
//!
//! [`Inst::Loc`]: crate::ir::Inst::Loc

use crate::source::{FileId, SourceMap, Span};
use csl_arch::lines::{LineTable, LineTableBuilder};
use std::collections::HashMap;

/// Turns spans into rows; remembers where each file's lines start.
pub struct Lines<'a> {
    sources: &'a SourceMap,
    /// Byte offset of the start of each line, per file seen.
    starts: HashMap<FileId, Vec<u32>>,
    table: LineTableBuilder,
}

impl<'a> Lines<'a> {
    /// An empty table resolving spans in `sources`.
    pub fn new(sources: &'a SourceMap) -> Lines<'a> {
        Lines {
            sources,
            starts: HashMap::new(),
            table: LineTableBuilder::default(),
        }
    }

    /// Records that the instructions from `pc` on come from the line `span` starts on. A
    /// span of a file the map does not hold (the empty span of a synthetic function) is
    /// ignored.
    pub fn mark(&mut self, pc: u32, span: Span) {
        if span.file.as_u32() as usize >= self.sources.len() {
            return;
        }
        let file = self.sources.get(span.file);
        let starts = self.starts.entry(span.file).or_insert_with(|| {
            std::iter::once(0)
                .chain(
                    file.text
                        .bytes()
                        .enumerate()
                        .filter(|&(_, b)| b == b'\n')
                        .map(|(i, _)| i as u32 + 1),
                )
                .collect()
        });
        let line = starts.partition_point(|&s| s <= span.start) as u32;
        self.table.mark(pc, &file.display, line);
    }

    /// The table of a class of `len` instructions.
    pub fn finish(self, len: usize) -> LineTable {
        self.table.finish(len)
    }
}
