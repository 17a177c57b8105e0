//! Paint's region builders that place and cut regions: `hstack()` and `vstack()` (with
//! `rep()` for copies) and `split()`. They work on tile sets only, like `union()`:
//! actions apply to the region they are given when they run, so a stack is built first
//! and painted afterwards (`let row = hstack(rep(block 4))`, then `row : paint(...)`).
//! The semantics are ours (the public material names the keywords without defining
//! them); `README.md` in this directory states them.

use super::ast::{Expr, ExprKind, Ident};
use super::eval::*;
use super::region::{Rect, Region};
use crate::diag::{Diagnostic, codes};
use crate::source::Span;
use std::collections::HashSet;
use std::rc::Rc;

/// Which way a stack grows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Axis {
    /// `hstack`: west to east, north edges aligned.
    Columns,
    /// `vstack`: north to south, west edges aligned.
    Rows,
}

impl Eval<'_> {
    /// `hstack(a b ...)` / `vstack(a b ...)`: the first piece stays where it is, each
    /// next one is moved so that its bounding box starts where the previous piece's
    /// ends along `axis` and is aligned with the first piece's on the other axis. An
    /// argument `rep(r n)` stands for `n` copies of `r`.
    pub(super) fn stack(&mut self, f: &Ident, args: &[Expr], span: Span, axis: Axis) -> R<Value> {
        let name = f.name.as_str();
        if args.is_empty() {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_ARGS,
                    format!("`{name}()` needs at least one region"),
                    f.span,
                    "in this call",
                )
                .with_help(format!("write `{name}(r1 r2 ...)` or `{name}(rep(r n))`")),
            ));
        }
        let mut pieces: Vec<(Rc<Region>, Span)> = Vec::new();
        for a in args {
            match &a.kind {
                ExprKind::Call(g, rargs) if g.name == "rep" => {
                    self.arg_count(g, rargs, &[2], "`rep(r n)` (n copies of region r)")?;
                    let (Some(r), Some(n)) = (rargs.first(), rargs.get(1)) else {
                        return Err(Reported);
                    };
                    let rv = self.expr(r)?;
                    let region = self.region(&rv, r.span)?;
                    let nv = self.expr(n)?;
                    let count = self.int(&nv, n.span, "a rep() count")?;
                    if !(1..=i64::from(super::region::MAX_SIDE)).contains(&count) {
                        return Err(self.report(
                            Diagnostic::error(
                                codes::PAINT_BAD_REGION,
                                format!("`rep()` needs 1 to {} copies", super::region::MAX_SIDE),
                                n.span,
                                format!("this asks for {count}"),
                            )
                            .with_help("write `rep(r n)` with n >= 1"),
                        ));
                    }
                    for _ in 0..count {
                        pieces.push((region.clone(), a.span));
                    }
                }
                _ => {
                    let v = self.expr(a)?;
                    let r = self.region(&v, a.span)?;
                    pieces.push((r, a.span));
                }
            }
        }
        let mut placed = pieces.iter();
        let Some((first, _)) = placed.next() else {
            return Err(Reported);
        };
        let Some(b0) = first.bbox() else {
            return Err(Reported);
        };
        let mut rects: Vec<Rect> = first.rects.clone();
        let mut seen: HashSet<Rect> = rects.iter().copied().collect();
        let mut next = match axis {
            Axis::Columns => i64::from(b0.x) + i64::from(b0.w),
            Axis::Rows => i64::from(b0.y) + i64::from(b0.h),
        };
        for (r, at) in placed {
            let Some(b) = r.bbox() else {
                continue;
            };
            let (dx, dy) = match axis {
                Axis::Columns => (next - i64::from(b.x), i64::from(b0.y) - i64::from(b.y)),
                Axis::Rows => (i64::from(b0.x) - i64::from(b.x), next - i64::from(b.y)),
            };
            let Some(moved) = r.translated(dx, dy) else {
                return Err(self.report(
                    Diagnostic::error(
                        codes::PAINT_BAD_REGION,
                        "region too large",
                        span,
                        format!(
                            "this stack grows past {} tiles here",
                            super::region::MAX_SIDE
                        ),
                    )
                    .with_label(*at, "this piece does not fit"),
                ));
            };
            next += i64::from(match axis {
                Axis::Columns => b.w,
                Axis::Rows => b.h,
            });
            self.gather(
                &mut rects,
                &mut seen,
                &moved.rects,
                span,
                "stack",
                "stack larger pieces, or fewer of them",
            )?;
        }
        Ok(Value::Region(Rc::new(Region { rects })))
    }

    /// `rep()` outside a stack.
    pub(super) fn rep_alone(&mut self, f: &Ident) -> Reported {
        self.report(
            Diagnostic::error(
                codes::PAINT_ARGS,
                "`rep()` makes copies for a stack",
                f.span,
                "not an argument of hstack() or vstack()",
            )
            .with_help("write `hstack(rep(r n))` for n copies side by side, `vstack(rep(r n))` for a column of them"),
        )
    }

    /// `split(r 'h n i)` / `split(r 'v n i)`: the tiles of `r` in the `i`-th (from 0) of
    /// `n` strips its bounding box is cut into: strips of columns from the west with
    /// `'h` (what `hstack` puts side by side), of rows from the north with `'v`. Strip
    /// `i` of a box `w` wide covers columns `x + i*w/n .. x + (i+1)*w/n`.
    pub(super) fn split(&mut self, f: &Ident, args: &[Expr], span: Span) -> R<Value> {
        let usage = "`split(r 'h n i)` (columns) or `split(r 'v n i)` (rows)";
        self.arg_count(f, args, &[4], usage)?;
        let [r, axis, n, i] = args else {
            return Err(Reported);
        };
        let rv = self.expr(r)?;
        let region = self.region(&rv, r.span)?;
        let av = self.expr(axis)?;
        let axis_v = match &av {
            Value::Quote(q) if q == "h" => Axis::Columns,
            Value::Quote(q) if q == "v" => Axis::Rows,
            other => {
                return Err(self.report(
                    wrong_type("the axis of split() must be 'h or 'v", axis.span, other)
                        .with_help(format!("write {usage}")),
                ));
            }
        };
        let nv = self.expr(n)?;
        let pieces = self.int(&nv, n.span, "a split() count")?;
        let iv = self.expr(i)?;
        let index = self.int(&iv, i.span, "a split() index")?;
        let Some(b) = region.bbox() else {
            return Err(Reported);
        };
        let (start, len, what) = match axis_v {
            Axis::Columns => (b.x, b.w, "columns"),
            Axis::Rows => (b.y, b.h, "rows"),
        };
        if pieces < 1 || pieces > i64::from(len) {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_BAD_REGION,
                    format!("cannot cut {len} {what} into {pieces} pieces"),
                    n.span,
                    format!("the region's bounding box has {len} {what}"),
                )
                .with_help(format!("use 1 to {len} pieces")),
            ));
        }
        if index < 0 || index >= pieces {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_BAD_REGION,
                    format!("there is no piece {index} of {pieces}"),
                    i.span,
                    format!("pieces are numbered 0 to {}", pieces - 1),
                )
                .with_help("the first piece is 0"),
            ));
        }
        // 1 <= pieces <= len and 0 <= index < pieces, so these fit in u32.
        let cut = |k: i64| start + (k * i64::from(len) / pieces) as u32;
        let (a, z) = (cut(index), cut(index + 1));
        let strip = match axis_v {
            Axis::Columns => Rect {
                x: a,
                y: b.y,
                w: z - a,
                h: b.h,
            },
            Axis::Rows => Rect {
                x: b.x,
                y: a,
                w: b.w,
                h: z - a,
            },
        };
        let piece = region.clipped(strip);
        if piece.rects.is_empty() {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_BAD_REGION,
                    format!("piece {index} of {pieces} holds no tile of the region"),
                    span,
                    format!("{what} {a}..{z} fall in a hole of the region"),
                )
                .with_help("cut a region without holes there, or into other pieces"),
            ));
        }
        Ok(Value::Region(Rc::new(piece)))
    }
}
