//! The files a Tungsten or Paint document reads: the document itself (index 0), then the
//! files it imports or includes, each once; spans in them as editor locations and as
//! one-line text for hovers.

use crate::convert::{self, LineIndex};
use cslc::source::Span;
use lsp_types::{Location, Uri};
use std::path::{Path, PathBuf};

/// One file: where it is (the document may have no path) and its text.
pub struct File {
    pub path: Option<PathBuf>,
    pub text: String,
}

/// The document and the files it reads.
pub struct Files {
    list: Vec<File>,
}

impl Files {
    /// Just the document.
    pub fn new(path: Option<&Path>, text: &str) -> Files {
        Files {
            list: vec![File {
                path: path.map(Path::to_path_buf),
                text: text.to_string(),
            }],
        }
    }

    /// Adds a file that was read; its index.
    pub fn push(&mut self, path: PathBuf, text: String) -> usize {
        self.list.push(File {
            path: Some(path),
            text,
        });
        self.list.len() - 1
    }

    pub fn get(&self, file: usize) -> Option<&File> {
        self.list.get(file)
    }

    /// The index of the file at `path` (compared canonically), if it was read.
    pub fn index_of(&self, path: &Path) -> Option<usize> {
        let key = path.canonicalize().ok()?;
        self.list.iter().position(|f| {
            f.path
                .as_ref()
                .is_some_and(|p| p.canonicalize().is_ok_and(|c| c == key))
        })
    }

    /// The text of `span` in `file` on one line (whitespace collapsed), cut to at most
    /// `max` bytes at a character boundary.
    pub fn source(&self, file: usize, span: Span, max: usize) -> String {
        let text = self
            .list
            .get(file)
            .and_then(|f| f.text.get(span.start as usize..span.end as usize))
            .unwrap_or("");
        let mut s = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.len() > max {
            let mut cut = max;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s.push_str(" …");
        }
        s
    }

    /// Bytes `start..end` of `file` as a location (the document is `doc`).
    pub fn location(&self, file: usize, start: u32, end: u32, doc: &Uri) -> Option<Location> {
        let f = self.list.get(file)?;
        let uri = if file == 0 {
            doc.clone()
        } else {
            convert::path_to_uri(f.path.as_deref()?)?
        };
        let ix = LineIndex::new(&f.text);
        Some(Location::new(uri, ix.range(start as usize, end as usize)))
    }

    /// The file's path as a hover shows it.
    pub fn shown_path(&self, file: usize) -> String {
        self.list
            .get(file)
            .and_then(|f| f.path.as_ref())
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }
}
