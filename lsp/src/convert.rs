//! Conversions between the compiler's world (byte offsets, file paths, [`Diagnostic`]s)
//! and the protocol's (UTF-16 line/character positions, `file://` URIs, LSP diagnostics).
//!
//! Every conversion is total: an out-of-range position clamps to the end of the line or
//! text, and a URI that is not a local file has no path.

use cslc::diag::{Diagnostic, Severity};
use cslc::source::{FileId, SourceMap, Span};
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position, Range,
    Uri,
};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Line starts of a text, for offset ↔ position conversion.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The position of byte `offset` (clamped to the text, moved back to a character
    /// boundary), with the character counted in UTF-16 code units.
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0);
        let character: usize = self
            .text
            .get(start..offset)
            .unwrap_or("")
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of `pos`: past the last line is the end of the text, past the end
    /// of a line is the end of that line.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(self.text.len(), |&e| e.saturating_sub(1));
        let line = self.text.get(start..end).unwrap_or("");
        let mut units = 0usize;
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }

    /// The range of byte span `start..end`.
    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end.max(start)))
    }
}

/// The range of a compiler span in the file's own text.
pub fn span_range(sources: &SourceMap, span: Span) -> Range {
    let text = &sources.get(span.file).text;
    LineIndex::new(text).range(span.start as usize, span.end as usize)
}

/// The local path a `file://` URI names.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    // `file:///p` (empty authority) and `file://localhost/p`.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    Some(PathBuf::from(percent_decode(path)?))
}

/// The `file://` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut s = String::from("file://");
    for b in abs.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&s).ok()
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Where a compiler file is, for the client: its path's URI, or for an embedded library
/// file (`<memcpy/memcpy>`) a copy written to a temporary directory so the editor can
/// open it.
pub fn file_uri(sources: &SourceMap, file: FileId, main: Option<(FileId, &Uri)>) -> Option<Uri> {
    if let Some((m, uri)) = main
        && m == file
    {
        return Some(uri.clone());
    }
    let f = sources.get(file);
    if let Some(p) = &f.path {
        return path_to_uri(p);
    }
    let lib = f.display.strip_prefix('<')?.strip_suffix('>')?;
    let dir = std::env::temp_dir().join("csl-lsp-stdlib");
    let path = dir.join(format!("{lib}.csl"));
    if std::fs::read_to_string(&path).ok().as_deref() != Some(f.text.as_str()) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).ok()?;
        }
        std::fs::write(&path, &f.text).ok()?;
    }
    path_to_uri(&path)
}

/// The location of a span, if its file can be named by a URI.
pub fn location(sources: &SourceMap, span: Span, main: Option<(FileId, &Uri)>) -> Option<Location> {
    let uri = file_uri(sources, span.file, main)?;
    Some(Location::new(uri, span_range(sources, span)))
}

/// A compiler diagnostic as the protocol's, for the document `main` (the file whose
/// [`FileId`] is given): the message with notes and help appended as cslc prints them,
/// the code, the primary label's range, and the other labels as related information. A
/// diagnostic located in another file is placed at the start of the document, its
/// message naming the file, with its real location as related information.
pub fn diagnostic(
    sources: &SourceMap,
    d: &Diagnostic,
    main: FileId,
    uri: &Uri,
) -> lsp_types::Diagnostic {
    let main_ref = Some((main, uri));
    let mut message = d.message.clone();
    let mut related = Vec::new();
    let range = match &d.primary {
        Some(l) if l.span.file == main => {
            if !l.message.is_empty() {
                message = format!("{message}\n{}", l.message);
            }
            span_range(sources, l.span)
        }
        Some(l) => {
            let display = &sources.get(l.span.file).display;
            message = format!("in `{display}`: {message}");
            if let Some(loc) = location(sources, l.span, main_ref) {
                related.push(DiagnosticRelatedInformation {
                    location: loc,
                    message: if l.message.is_empty() {
                        d.message.clone()
                    } else {
                        l.message.clone()
                    },
                });
            }
            Range::default()
        }
        None => Range::default(),
    };
    for l in &d.secondary {
        if let Some(loc) = location(sources, l.span, main_ref) {
            related.push(DiagnosticRelatedInformation {
                location: loc,
                message: l.message.clone(),
            });
        }
    }
    for n in &d.notes {
        message.push_str(&format!("\nnote: {n}"));
    }
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("cslc".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_with_utf16() {
        let text = "ab\nxé𝄞z\n";
        let ix = LineIndex::new(text);
        let z = text.find('z').unwrap_or(0);
        let p = ix.position(z);
        assert_eq!(p, Position::new(1, 4));
        assert_eq!(ix.offset(p), z);
        assert_eq!(ix.offset(Position::new(9, 9)), text.len());
        assert_eq!(ix.offset(Position::new(0, 99)), 2);
        assert_eq!(ix.position(999), Position::new(2, 0));
    }

    #[test]
    fn uris_round_trip() {
        let p = Path::new("/tmp/a dir/x.csl");
        let uri = path_to_uri(p);
        assert!(uri.is_some());
        let back = uri.as_ref().and_then(uri_to_path);
        assert_eq!(back.as_deref(), Some(p));
        let u = Uri::from_str("untitled:Untitled-1").ok();
        assert_eq!(u.as_ref().and_then(uri_to_path), None);
    }
}
