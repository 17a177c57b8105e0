//! The generated CSL parser and the conversion of syntax errors into [`Diagnostic`]s.
//!
//! [`parse`] runs in three steps:
//! 1. [`tokenize`] lexes the whole file, turning malformed literals into stand-in tokens
//!    and lexical errors into diagnostics (lalrpop would stop at the first lexer error).
//! 2. A bracket pass drops closing brackets that close nothing (each is one `E0006`) and
//!    remembers, for every token, which brackets are open there.
//! 3. The lalrpop parser (grammar in `grammar/csl.lalrpop`) builds the AST and recovers at
//!    declaration and statement boundaries; its errors are turned into diagnostics here.
//!
//! The helpers above `parse` are used by the grammar's actions.

use super::ast::{Ast, Block, ExprId, Ident, Stmt, StmtKind};
use super::lexer::{Spanned, tokenize};
use super::token::{CHAR_LITERAL, LexError, LexErrorKind, Token};
use crate::diag::{Diagnostic, codes};
use crate::source::{FileId, Span};
use crate::symbol::Symbol;
use lalrpop_util::{ErrorRecovery, ParseError};

crate::lexing::generated_parser!(csl, "/csl.rs");

// ---- helpers for the grammar actions ----

/// The head of a loop statement; the grammar parses it before it knows whether the body is
/// an open or a closed statement.
pub(crate) enum LoopHead {
    /// `[label:] while (cond) [: (cont)]`
    While {
        label: Option<Ident>,
        cond: ExprId,
        cont: Option<Stmt>,
    },
    /// `[label:] for (iter) |capture[, index]|`
    For {
        label: Option<Ident>,
        iter: ExprId,
        capture: Ident,
        index: Option<Ident>,
    },
}

/// A span in `file`.
pub(crate) fn sp(file: FileId, start: usize, end: usize) -> Span {
    Span::new(file, start, end)
}

/// An identifier with its span.
pub(crate) fn ident(file: FileId, start: usize, name: &str, end: usize) -> Ident {
    Ident {
        name: Symbol::intern(name),
        span: sp(file, start, end),
    }
}

/// The body of an `if` branch or a loop as a block: an unlabelled block statement is used
/// as is, any other statement is wrapped in a block of its own.
pub(crate) fn block_of(stmt: Stmt) -> Block {
    match stmt.kind {
        StmtKind::Block(b) if b.label.is_none() => b,
        kind => {
            let span = stmt.span;
            Block {
                label: None,
                stmts: vec![Stmt { kind, span }],
                span,
            }
        }
    }
}

/// Builds a loop statement from its head and body.
pub(crate) fn loop_stmt(head: LoopHead, body: Stmt, span: Span) -> Stmt {
    let body = block_of(body);
    let kind = match head {
        LoopHead::While { label, cond, cont } => StmtKind::While {
            label,
            cond,
            cont: cont.map(Box::new),
            body,
        },
        LoopHead::For {
            label,
            iter,
            capture,
            index,
        } => StmtKind::For {
            label,
            iter,
            capture,
            index,
            body,
        },
    };
    Stmt { kind, span }
}

// ---- the entry point ----

/// Parses one file into an AST and diagnostics (see the module documentation).
pub fn parse(file: FileId, text: &str) -> (Ast, Vec<Diagnostic>) {
    let (tokens, lex_errors) = tokenize(text);
    let mut diags: Vec<Diagnostic> = lex_errors
        .iter()
        .map(|e| lex_diagnostic(file, text, e))
        .collect();
    let brackets = Brackets::new(text, tokens);
    for &(start, end) in &brackets.unmatched {
        let closer = text.get(start..end).unwrap_or("?");
        diags.push(Diagnostic::error(
            codes::UNBALANCED,
            format!("unmatched '{closer}'"),
            sp(file, start, end),
            format!("this '{closer}' closes nothing"),
        ));
    }
    if let Some((start, end)) = brackets.too_deep {
        diags.push(
            Diagnostic::error(
                codes::UNSUPPORTED,
                "nesting too deep",
                sp(file, start, end),
                format!("this is nested more than {MAX_NESTING} levels deep"),
            )
            .with_note("the rest of the file is not parsed"),
        );
    }
    for cut in &brackets.cut_off {
        let (start, end) = cut.opener;
        let opener = text.get(start..end).unwrap_or("?");
        diags.push(
            Diagnostic::error(
                codes::UNBALANCED,
                format!("unclosed '{opener}'"),
                sp(file, start, end),
                format!("this '{opener}' is not closed before the next declaration"),
            )
            .with_label(
                sp(file, cut.at.0, cut.at.1),
                "the next declaration starts here",
            ),
        );
    }

    let mut ast = Ast::default();
    let mut recovered: Vec<ErrorRecovery<usize, Token<'_>, LexError>> = Vec::new();
    let input = brackets.tokens.iter().cloned().map(Ok::<_, LexError>);
    let result = csl::FileParser::new().parse(file, &mut ast, &mut recovered, input);
    // Each error with the end of the input it consumed (its token and any dropped ones).
    let mut errors: Vec<(ParseError<usize, Token<'_>, LexError>, usize)> = recovered
        .into_iter()
        .map(|r| {
            let consumed = r
                .dropped_tokens
                .iter()
                .map(|t| t.2)
                .chain(error_span(&r.error).map(|s| s.1))
                .max();
            (r.error, consumed.unwrap_or(0))
        })
        .collect();
    match result {
        Ok(decls) => ast.decls = decls,
        Err(e) => {
            let end = error_span(&e).map_or(0, |s| s.1);
            errors.push((e, end));
        }
    }

    let ctx = Context {
        file,
        text,
        brackets: &brackets,
        lex_errors: &lex_errors,
    };
    let mut reported_unclosed = false;
    // Token start and consumed input of the previous error.
    let mut previous: Option<(usize, usize)> = None;
    for (error, consumed) in errors {
        let here = error_span(&error).map(|s| s.0);
        let cascade = match (&error, previous) {
            (ParseError::UnrecognizedToken { token, .. }, Some((prev_start, prev_end))) => {
                ctx.is_cascade(prev_start, prev_end, token.0)
            }
            _ => false,
        };
        if let Some(here) = here {
            previous = Some((here, consumed));
        }
        if cascade {
            continue;
        }
        let Some(d) = ctx.parse_diagnostic(error, &mut reported_unclosed) else {
            continue;
        };
        // Recovery can fail twice at the same place; report each place once.
        let start = d.primary.as_ref().map(|l| l.span.start);
        if diags
            .iter()
            .any(|old| old.primary.as_ref().map(|l| l.span.start) == start)
        {
            continue;
        }
        diags.push(d);
    }
    (ast, diags)
}

/// The span of the token a parse error is about, if it has one.
fn error_span(error: &ParseError<usize, Token<'_>, LexError>) -> Option<(usize, usize)> {
    match error {
        ParseError::UnrecognizedToken { token, .. } | ParseError::ExtraToken { token } => {
            Some((token.0, token.2))
        }
        ParseError::InvalidToken { location } | ParseError::UnrecognizedEof { location, .. } => {
            Some((*location, *location))
        }
        ParseError::User { error } => Some((error.start, error.end)),
    }
}

// ---- brackets ----

/// Brackets left open when a new top-level declaration starts.
struct CutOff {
    /// The innermost open bracket.
    opener: (usize, usize),
    /// The declaration keyword.
    at: (usize, usize),
}

/// The token stream after bracket repair, and what was repaired.
///
/// Two repairs keep one missing or extra bracket from derailing the rest of the file:
/// a closing bracket that closes nothing is dropped, and a declaration keyword at the start
/// of a line (`fn name`, `task`, `param`, `layout`, `export`, `extern`, `inline`,
/// `comptime {`) while brackets are open closes them with zero-width tokens, since such a
/// keyword can only start a new top-level declaration.
///
/// The pass also bounds nesting. Blocks and statements nest by value in the AST, so a
/// pathological file (ten thousand `{`, or a long brace-less `if (a) if (b) ...` chain)
/// would overflow the stack when the tree is walked or dropped. Nesting is measured as open
/// `{` plus, per bracket level, the `if`/`while`/`for` keywords since the last statement
/// end; past [`MAX_NESTING`] the input is cut off.
struct Brackets<'a> {
    /// Tokens for the parser.
    tokens: Vec<Spanned<'a>>,
    /// Spans of closing brackets that closed nothing (removed from `tokens`).
    unmatched: Vec<(usize, usize)>,
    /// Brackets closed by zero-width tokens before a declaration keyword.
    cut_off: Vec<CutOff>,
    /// Opening brackets still open at the end of the file, outermost first.
    open_at_eof: Vec<(usize, usize)>,
    /// The token where nesting exceeded [`MAX_NESTING`]; the input ends before it.
    too_deep: Option<(usize, usize)>,
}

/// The deepest nesting the parser accepts (see [`Brackets`]).
pub const MAX_NESTING: usize = 256;

/// An open bracket.
struct Open {
    /// The token that closes it.
    closer: Token<'static>,
    /// Span of the opening bracket.
    start: usize,
    end: usize,
    /// Nesting keywords seen inside it since the last statement end.
    chain: usize,
}

impl Open {
    /// What this bracket adds to the nesting depth.
    fn weight(&self) -> usize {
        self.chain + usize::from(self.closer == Token::RBrace)
    }
}

impl<'a> Brackets<'a> {
    fn new(text: &str, input: Vec<Spanned<'a>>) -> Brackets<'a> {
        let mut tokens = Vec::with_capacity(input.len());
        let mut unmatched = Vec::new();
        let mut cut_off = Vec::new();
        let mut too_deep = None;
        let mut stack: Vec<Open> = Vec::new();
        // Nesting keywords at the top level since the last statement end.
        let mut top_chain = 0usize;
        // `top_chain` plus the weights of everything on the stack, kept up to date.
        let mut depth = 0usize;
        let mut input = input.into_iter().peekable();
        while let Some((start, token, end)) = input.next() {
            let next = input.peek().map(|t| &t.1);
            if let Some(open) = stack.last()
                && starts_declaration(&token, next)
                && text
                    .get(..start)
                    .is_some_and(|before| before.is_empty() || before.ends_with('\n'))
            {
                cut_off.push(CutOff {
                    opener: (open.start, open.end),
                    at: (start, end),
                });
                for open in stack.drain(..).rev() {
                    tokens.push((start, open.closer, start));
                }
                top_chain = 0;
                depth = 0;
            }
            let chain = match stack.last_mut() {
                Some(open) => &mut open.chain,
                None => &mut top_chain,
            };
            match token {
                Token::If | Token::While | Token::For => {
                    *chain += 1;
                    depth += 1;
                }
                Token::Semi => {
                    depth = depth.saturating_sub(*chain);
                    *chain = 0;
                }
                _ => {}
            }
            let closer = match token {
                Token::LParen => Some(Token::RParen),
                Token::LBracket => Some(Token::RBracket),
                Token::LBrace => Some(Token::RBrace),
                _ => None,
            };
            let opens = closer.is_some();
            if let Some(closer) = closer {
                let open = Open {
                    closer,
                    start,
                    end,
                    chain: 0,
                };
                depth += open.weight();
                stack.push(open);
            }
            if depth > MAX_NESTING {
                too_deep = Some((start, end));
                break;
            }
            if opens || !matches!(token, Token::RParen | Token::RBracket | Token::RBrace) {
                tokens.push((start, token, end));
                continue;
            }
            match stack.iter().rposition(|o| o.closer == token) {
                // Matches an open bracket, perhaps skipping unclosed inner ones; the parser
                // reports what is missing there.
                Some(i) => {
                    depth =
                        depth.saturating_sub(stack.drain(i..).map(|o| o.weight()).sum::<usize>());
                    // A statement ends here unless an `else` continues it.
                    if token == Token::RBrace && !matches!(next, Some(Token::Else)) {
                        let chain = match stack.last_mut() {
                            Some(open) => &mut open.chain,
                            None => &mut top_chain,
                        };
                        depth = depth.saturating_sub(*chain);
                        *chain = 0;
                    }
                    tokens.push((start, token, end));
                }
                None => unmatched.push((start, end)),
            }
        }
        let open_at_eof = stack.into_iter().map(|o| (o.start, o.end)).collect();
        Brackets {
            tokens,
            unmatched,
            cut_off,
            open_at_eof,
            too_deep,
        }
    }
}

/// Whether `token` (followed by `next`) can only start a top-level declaration.
fn starts_declaration(token: &Token<'_>, next: Option<&Token<'_>>) -> bool {
    match token {
        Token::Task
        | Token::Param
        | Token::Layout
        | Token::Export
        | Token::Extern
        | Token::Inline => true,
        // `fn(...)` is a function type; `fn name` is a declaration.
        Token::Fn => matches!(next, Some(Token::Ident(_))),
        Token::Comptime => matches!(next, Some(Token::LBrace)),
        _ => false,
    }
}

// ---- diagnostics ----

/// Converts a lexical error.
fn lex_diagnostic(file: FileId, text: &str, e: &LexError) -> Diagnostic {
    let span = sp(file, e.start, e.end);
    let slice = text.get(e.start..e.end).unwrap_or("");
    match &e.kind {
        LexErrorKind::StrayChar => {
            let shown = printable(slice);
            let plural = if slice.chars().count() > 1 { "s" } else { "" };
            let d = Diagnostic::error(
                codes::STRAY_CHAR,
                format!("stray character{plural} '{shown}'"),
                span,
                "not part of any token",
            );
            if slice == "@" {
                d.with_help("builtins are written '@name(...)' with no space after '@'")
            } else {
                d
            }
        }
        LexErrorKind::Unterminated(what) => Diagnostic::error(
            codes::UNTERMINATED_STRING,
            format!("unterminated {what}"),
            span,
            if *what == CHAR_LITERAL {
                "this character literal has no closing quote"
            } else {
                "this string has no closing quote on its line"
            },
        ),
        LexErrorKind::BadChar => {
            let (message, label) = if slice == "''" {
                (
                    "empty character literal",
                    "a character literal holds exactly one character",
                )
            } else {
                (
                    "character literal holds more than one character",
                    "use a string literal for several characters",
                )
            };
            Diagnostic::error(codes::UNTERMINATED_STRING, message, span, label)
        }
        LexErrorKind::BadEscape { .. } => {
            let shown = printable(slice);
            let label = match slice.get(1..2) {
                Some("x") => "'\\x' takes exactly two hex digits",
                Some("u") => {
                    "'\\u' takes '{', 1 to 6 hex digits naming a valid code point, and '}'"
                }
                _ => "unknown escape",
            };
            Diagnostic::error(
                codes::BAD_ESCAPE,
                format!("invalid escape sequence '{shown}'"),
                span,
                label,
            )
            .with_help("valid escapes: \\n \\t \\r \\0 \\\\ \\\" \\' \\xNN \\u{N}")
        }
        LexErrorKind::BadNumber(reason) => {
            let shown: String = slice.chars().take(40).collect();
            Diagnostic::error(
                codes::BAD_NUMBER,
                format!("invalid number literal '{shown}'"),
                span,
                *reason,
            )
        }
    }
}

/// `text` as written, or escaped if it holds control characters.
fn printable(text: &str) -> String {
    if text.chars().any(char::is_control) {
        text.chars().flat_map(char::escape_debug).collect()
    } else {
        text.to_string()
    }
}

/// What the parse-error conversion needs to know about the file.
struct Context<'c, 'a> {
    file: FileId,
    text: &'c str,
    brackets: &'c Brackets<'a>,
    lex_errors: &'c [LexError],
}

impl Context<'_, '_> {
    /// Converts one parse error; `None` when it only repeats an earlier problem.
    fn parse_diagnostic(
        &self,
        error: ParseError<usize, Token<'_>, LexError>,
        reported_unclosed: &mut bool,
    ) -> Option<Diagnostic> {
        match error {
            ParseError::InvalidToken { location } => Some(Diagnostic::error(
                codes::STRAY_CHAR,
                "invalid token",
                sp(self.file, location, location),
                "not part of any token",
            )),
            ParseError::UnrecognizedEof { location, expected } => {
                // A file cut off for nesting too deep ends early; that is reported already.
                if self.brackets.too_deep.is_some() || self.follows_lex_error(location) {
                    return None;
                }
                if let Some(&(start, end)) = self.brackets.open_at_eof.last() {
                    // The innermost bracket open at the end explains the error best.
                    if std::mem::replace(reported_unclosed, true) {
                        return None;
                    }
                    let opener = self.text.get(start..end).unwrap_or("?");
                    return Some(Diagnostic::error(
                        codes::UNBALANCED,
                        format!("unclosed '{opener}'"),
                        sp(self.file, start, end),
                        format!("this '{opener}' is never closed"),
                    ));
                }
                let expected = describe_expected(&expected);
                let (span, label) = match self.token_before(location) {
                    Some((s, e)) => (sp(self.file, s, e), format!("{expected} after this")),
                    None => (sp(self.file, location, location), expected),
                };
                Some(Diagnostic::error(
                    codes::UNEXPECTED_EOF,
                    "unexpected end of file",
                    span,
                    label,
                ))
            }
            ParseError::UnrecognizedToken {
                token: (start, token, end),
                expected,
            } => {
                // Zero-width tokens are the closers inserted by the bracket repair, which
                // has already reported the problem.
                if start == end || self.follows_lex_error(start) {
                    return None;
                }
                let is_comparison = matches!(
                    token,
                    Token::EqEq | Token::NotEq | Token::Lt | Token::Le | Token::Gt | Token::Ge
                );
                if is_comparison && expected.iter().any(|e| e == "\"and\"") {
                    return Some(
                        Diagnostic::error(
                            codes::UNEXPECTED_TOKEN,
                            "comparison operators cannot be chained",
                            sp(self.file, start, end),
                            "a second comparison here",
                        )
                        .with_help("use 'and' between comparisons, or parentheses"),
                    );
                }
                let semicolon_expected = expected.iter().any(|e| e == "\";\"");
                let expected = describe_expected(&expected);
                if semicolon_expected
                    && let Some((ps, pe)) = self.token_before(start)
                    && self
                        .text
                        .get(pe..start)
                        .is_some_and(|gap| gap.contains('\n'))
                {
                    // The statement or declaration on the previous line is unfinished, most
                    // likely a missing `;`: point at the end of that line.
                    let at = sp(self.file, ps, pe);
                    let label = format!("{expected} after this");
                    return Some(if expected == "expected ';'" {
                        Diagnostic::error(codes::UNEXPECTED_TOKEN, "missing ';'", at, label)
                    } else {
                        Diagnostic::error(
                            codes::UNEXPECTED_TOKEN,
                            format!("unexpected {}", token.describe()),
                            at,
                            label,
                        )
                        .with_label(sp(self.file, start, end), "unexpected here")
                    });
                }
                Some(Diagnostic::error(
                    codes::UNEXPECTED_TOKEN,
                    format!("unexpected {}", token.describe()),
                    sp(self.file, start, end),
                    expected,
                ))
            }
            ParseError::ExtraToken {
                token: (start, token, end),
            } => Some(Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                format!("unexpected {}", token.describe()),
                sp(self.file, start, end),
                "expected the end of the file",
            )),
            ParseError::User { error } => Some(lex_diagnostic(self.file, self.text, &error)),
        }
    }

    /// Whether an error at the token starting at `start` is a consequence of the previous
    /// error (at `prev_start`, whose recovery consumed input up to `prev_end`): it is at the
    /// very next token, or no `;` or `}` lies between the two, so the parser never got back
    /// in step.
    fn is_cascade(&self, prev_start: usize, prev_end: usize, start: usize) -> bool {
        let tokens = &self.brackets.tokens;
        let next = tokens
            .get(tokens.partition_point(|t| t.0 < prev_end))
            .map(|t| t.0);
        let from = tokens.partition_point(|t| t.0 < prev_start);
        let to = tokens.partition_point(|t| t.0 < start);
        let synced = tokens.get(from..to).is_some_and(|between| {
            between
                .iter()
                .any(|t| matches!(t.1, Token::Semi | Token::RBrace))
        });
        next == Some(start) || !synced
    }

    /// The span of the last real token that ends at or before `offset`.
    fn token_before(&self, offset: usize) -> Option<(usize, usize)> {
        let tokens = &self.brackets.tokens;
        let i = tokens.partition_point(|(_, _, end)| *end <= offset);
        tokens
            .get(..i)?
            .iter()
            .rev()
            .find(|t| t.0 < t.2)
            .map(|t| (t.0, t.2))
    }

    /// Whether the token at `start` (or the end of input) comes right after a dropped stray
    /// character or an unterminated literal (which swallowed the rest of its line): the
    /// parse error there is a consequence of the lexical one.
    fn follows_lex_error(&self, start: usize) -> bool {
        let prev_start = self.token_before(start).map_or(0, |(s, _)| s);
        self.lex_errors.iter().any(|e| {
            matches!(
                e.kind,
                LexErrorKind::StrayChar | LexErrorKind::Unterminated(_)
            ) && e.start >= prev_start
                && e.end <= start
        })
    }
}

// ---- "expected ..." labels ----

/// Names of token classes; every other terminal name is a fixed spelling and is quoted.
const CLASSES: &[&str] = &[
    "identifier",
    "builtin",
    "integer literal",
    "float literal",
    "character literal",
    "string literal",
];

/// Tokens that can start an expression, besides every token class ([`CLASSES`]).
const EXPR_START: &[&str] = &[
    "true", "false", "(", ".", "[", "[*]", "*", "-", "!", "~", "&", "comptime", "fn", "task",
    "struct", "enum", "if", "switch", "{", "|",
];

/// Tokens that can start a statement but not an expression.
const STMT_START: &[&str] = &[
    "const", "var", "while", "for", "break", "continue", "return",
];

/// Tokens that can start a top-level declaration.
const DECL_START: &[&str] = &[
    "param", "const", "var", "fn", "task", "comptime", "layout", "export", "extern", "inline",
];

/// Tokens that can continue a complete operand: binary, assignment and suffix operators.
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", ">", "<=", ">=", "and",
    "or", "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "(", "[", ".", ".*",
    "{",
];

/// Suffix operators only (after a type, where no binary operator may follow).
const SUFFIX_OPERATORS: &[&str] = &["(", "[", ".", ".*"];

/// Turns lalrpop's expected-terminal list into a short label: long lists are summarised
/// ("expected an expression"), short ones are listed, sorted.
fn describe_expected(expected: &[String]) -> String {
    let mut names: Vec<&str> = expected.iter().map(|s| s.trim_matches('"')).collect();
    names.sort_unstable();
    names.dedup();
    let has = |n: &str| names.contains(&n);
    let mut summary: Vec<String> = Vec::new();
    let mut covered: Vec<&str> = Vec::new();
    if has("param") {
        summary.push("a declaration".to_string());
        covered.extend(DECL_START);
    } else if has("return") {
        summary.push("a statement".to_string());
        covered.extend(STMT_START);
        covered.extend(CLASSES);
        covered.extend(EXPR_START);
    } else if has("identifier") && has("integer literal") {
        summary.push("an expression".to_string());
        covered.extend(CLASSES);
        covered.extend(EXPR_START);
    }
    let operators = if has("+") {
        OPERATORS
    } else if has(".*") {
        SUFFIX_OPERATORS
    } else {
        &[]
    };
    covered.extend(operators);
    let rest: Vec<String> = names
        .iter()
        .filter(|n| !covered.contains(n))
        .map(|n| {
            if CLASSES.contains(n) {
                (*n).to_string()
            } else {
                format!("'{n}'")
            }
        })
        .collect();
    if !operators.is_empty() && rest.is_empty() && summary.is_empty() {
        summary.push("an operator".to_string());
    }
    let mut items = summary;
    if rest.len() > 6 {
        items.extend(rest.into_iter().take(5));
        items.push("...".to_string());
    } else {
        items.extend(rest);
    }
    match items.as_slice() {
        [] => "unexpected here".to_string(),
        [one] => format!("expected {one}"),
        [init @ .., last] => format!("expected {} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| format!("\"{s}\"")).collect()
    }

    #[test]
    fn expected_lists() {
        assert_eq!(
            describe_expected(&names(&[")", ","])),
            "expected ')' or ','"
        );
        assert_eq!(
            describe_expected(&names(&["identifier"])),
            "expected identifier"
        );
        let mut expr = names(CLASSES);
        expr.extend(names(EXPR_START));
        assert_eq!(describe_expected(&expr), "expected an expression");
        expr.push("\";\"".to_string());
        assert_eq!(describe_expected(&expr), "expected an expression or ';'");
        let mut ops = names(OPERATORS);
        ops.push("\";\"".to_string());
        assert_eq!(describe_expected(&ops), "expected ';'");
        assert_eq!(
            describe_expected(&names(&["(", ".", ".*", ";", "[", "{"])),
            "expected ';' or '{'"
        );
        let mut decl = names(DECL_START);
        decl.push("\"}\"".to_string());
        assert_eq!(describe_expected(&decl), "expected a declaration or '}'");
    }
}
