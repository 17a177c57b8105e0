//! Diagnostics as data.
//!
//! Every phase reports problems as [`Diagnostic`] values and keeps going where it can; only
//! [`render`] turns them into text (through ariadne). Codes are listed once in [`codes`].

pub mod codes;
mod render;

pub use render::{render, render_all};

use crate::source::Span;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Compilation fails.
    Error,
    /// Compilation continues.
    Warning,
}

/// A labelled span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What to say there.
    pub message: String,
}

/// One problem found in a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable code from [`codes`], e.g. `E0101`.
    pub code: &'static str,
    /// Short lower-case summary without a trailing period.
    pub message: String,
    /// The primary location, if the problem has one (command-line problems do not).
    pub primary: Option<Label>,
    /// Further locations ("first defined here").
    pub secondary: Vec<Label>,
    /// Extra facts.
    pub notes: Vec<String>,
    /// How to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A new error with a primary label.
    pub fn error(
        code: &'static str,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: Some(Label {
                span,
                message: label.into(),
            }),
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// The error for a name or item given a second time: "{what} is {verb} twice",
    /// labelled "{verb} again here" at `again` and "first {verb} here" at `first`.
    pub fn twice(
        code: &'static str,
        what: impl std::fmt::Display,
        verb: &str,
        again: Span,
        first: Span,
    ) -> Diagnostic {
        Diagnostic::error(
            code,
            format!("{what} is {verb} twice"),
            again,
            format!("{verb} again here"),
        )
        .with_label(first, format!("first {verb} here"))
    }

    /// A new error with no source location.
    pub fn global(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// Turns this error into a warning.
    pub fn warning(mut self) -> Diagnostic {
        self.severity = Severity::Warning;
        self
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Sets the help text.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Sets the help to `help(s)` when a candidate `s` is close to the misspelt `name`
    /// ([`did_you_mean`](crate::suggest::did_you_mean)).
    pub fn with_suggestion<'a>(
        self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
        help: impl FnOnce(&str) -> String,
    ) -> Diagnostic {
        match crate::suggest::did_you_mean(name, candidates) {
            Some(s) => self.with_help(help(&s)),
            None => self,
        }
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// `--deny-warnings` (of `cslc` and `paint`): if any diagnostic is a warning, makes every
/// diagnostic an error and returns `true` (the caller then writes nothing).
pub fn deny_warnings(diags: &mut [Diagnostic]) -> bool {
    if diags.iter().all(Diagnostic::is_error) {
        return false;
    }
    for d in diags {
        d.severity = Severity::Error;
    }
    true
}
