//! Source files and byte spans.
//!
//! Every AST node carries a [`Span`]: the file it came from and a half-open byte range.
//! Byte offsets (not characters) are used everywhere, from the lexer to the renderer.

use cranelift_entity::{PrimaryMap, entity_impl};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A source file loaded into a [`SourceMap`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(u32);
entity_impl!(FileId, "file");

/// A half-open byte range `start..end` in one file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// The file.
    pub file: FileId,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span from byte offsets.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One loaded file.
pub struct SourceFile {
    /// The path as the user gave it (or as resolved relative to the importing file);
    /// shown in diagnostics. Library files show as `<lib>/name.csl`.
    pub display: String,
    /// The real path on disk, if any (library files are embedded).
    pub path: Option<PathBuf>,
    /// The text.
    pub text: String,
}

/// Texts that stand in for files on disk, by canonical path (an editor's unsaved
/// buffers).
pub type Overlay = Arc<HashMap<PathBuf, String>>;

/// Every file the compiler has read.
#[derive(Default)]
pub struct SourceMap {
    files: PrimaryMap<FileId, SourceFile>,
    /// Read instead of the disk for the paths it holds (see [`SourceMap::read`]).
    overlay: Overlay,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// An empty map whose [`SourceMap::read`] prefers `overlay` to the disk.
    pub fn with_overlay(overlay: Overlay) -> SourceMap {
        SourceMap {
            files: PrimaryMap::new(),
            overlay,
        }
    }

    /// The text of the file at `path`: the overlay's, if it has the path (as given or
    /// canonical), else the disk's.
    pub fn read(&self, path: &Path) -> std::io::Result<String> {
        if !self.overlay.is_empty() {
            if let Some(t) = self.overlay.get(path) {
                return Ok(t.clone());
            }
            if let Some(t) = path.canonicalize().ok().and_then(|c| self.overlay.get(&c)) {
                return Ok(t.clone());
            }
        }
        std::fs::read_to_string(path)
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, display: String, path: Option<PathBuf>, text: String) -> FileId {
        self.files.push(SourceFile {
            display,
            path,
            text,
        })
    }

    /// Number of files loaded.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is loaded.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Looks up a file.
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id]
    }

    /// Finds an already loaded file by its real path.
    pub fn find_path(&self, path: &Path) -> Option<FileId> {
        self.files
            .iter()
            .find(|(_, f)| f.path.as_deref() == Some(path))
            .map(|(id, _)| id)
    }

    /// Finds an already loaded file by display name.
    pub fn find_display(&self, display: &str) -> Option<FileId> {
        self.files
            .iter()
            .find(|(_, f)| f.display == display)
            .map(|(id, _)| id)
    }

    /// 1-based line and column (in characters) of a byte offset, for plain-text output.
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let text = &self.files[file].text;
        let offset = (offset as usize).min(text.len());
        let before = text.get(..offset).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }
}
