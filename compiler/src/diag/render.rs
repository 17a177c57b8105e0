//! The only place that calls ariadne: renders [`Diagnostic`]s as text.

use super::{Diagnostic, Severity};
use crate::source::{FileId, SourceMap};
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind, Source};

struct Cache<'a>(&'a SourceMap, Vec<(FileId, Source<String>)>);

impl ariadne::Cache<FileId> for Cache<'_> {
    type Storage = String;
    fn fetch(&mut self, id: &FileId) -> Result<&Source<String>, impl std::fmt::Debug> {
        if let Some(i) = self.1.iter().position(|(f, _)| f == id) {
            return Ok::<_, String>(&self.1[i].1);
        }
        self.1
            .push((*id, Source::from(self.0.get(*id).text.clone())));
        Ok(&self.1[self.1.len() - 1].1)
    }
    fn display<'b>(&self, id: &'b FileId) -> Option<impl std::fmt::Display + 'b> {
        Some(self.0.get(*id).display.clone())
    }
}

/// Renders one diagnostic. `color` turns on ANSI colours (callers decide: a terminal and no
/// `NO_COLOR`).
pub fn render(d: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let kind = match d.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let Some(primary) = &d.primary else {
        let mut s = format!(
            "{}[{}]: {}\n",
            if d.is_error() { "Error" } else { "Warning" },
            d.code,
            d.message
        );
        for n in &d.notes {
            s.push_str(&format!("  = note: {n}\n"));
        }
        if let Some(h) = &d.help {
            s.push_str(&format!("  = help: {h}\n"));
        }
        return s;
    };
    let span = (
        primary.span.file,
        primary.span.start as usize..primary.span.end as usize,
    );
    let config = Config::default()
        .with_color(color)
        .with_index_type(IndexType::Byte);
    let mut report = Report::build(kind, span.clone())
        .with_config(config)
        .with_code(d.code)
        .with_message(&d.message)
        .with_label(
            Label::new(span)
                .with_message(&primary.message)
                .with_color(Color::Red),
        );
    for l in &d.secondary {
        report = report.with_label(
            Label::new((l.span.file, l.span.start as usize..l.span.end as usize))
                .with_message(&l.message)
                .with_color(Color::Blue),
        );
    }
    for n in &d.notes {
        report = report.with_note(n);
    }
    if let Some(h) = &d.help {
        report = report.with_help(h);
    }
    let mut out = Vec::new();
    let mut cache = Cache(sources, Vec::new());
    if report.finish().write(&mut cache, &mut out).is_err() {
        let (line, col) = sources.line_col(primary.span.file, primary.span.start);
        return format!(
            "error[{}]: {} at {}:{line}:{col}\n",
            d.code,
            d.message,
            sources.get(primary.span.file).display
        );
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Renders diagnostics in source order (by file, then offset), errors and warnings mixed.
pub fn render_all(diags: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
    sorted.sort_by_key(|d| d.primary.as_ref().map(|l| (l.span.file, l.span.start)));
    sorted.iter().map(|d| render(d, sources, color)).collect()
}
