//! Paint actions (`R : paint(...)`, `colorpair()`, `code()`, `name()`, `mp()`,
//! `switch()`): their arguments checked and recorded as [`Action`]s on the region, with
//! route lists and side letters decoded. Turning them into router configuration is
//! [`super::plan`]'s job.

use super::ast::{Expr, Ident};
use super::eval::*;
use super::region::{Region, Route, Side, Sides};
use crate::diag::{Diagnostic, codes};
use crate::source::Span;
use crate::tungsten::ParamValue;
use std::rc::Rc;

impl Eval<'_> {
    /// The first of an action's arguments, which must be a quoted name, and its span;
    /// `message` and `help` explain another value.
    fn quoted_first(
        &mut self,
        vals: &[(Value, Span)],
        message: &str,
        help: &str,
    ) -> R<(String, Span)> {
        match vals.first() {
            Some((Value::Quote(q), qs)) => Ok((q.clone(), *qs)),
            Some((v, vs)) => Err(self.report(wrong_type(message, *vs, v).with_help(help))),
            None => Err(Reported),
        }
    }

    /// Records an action on `region`; `args` exclude the region.
    pub(super) fn action(
        &mut self,
        f: &Ident,
        args: &[Expr],
        region: Rc<Region>,
        span: Span,
    ) -> R<()> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push((self.expr(a)?, a.span));
        }
        let kind = match f.name.as_str() {
            "paint" => {
                self.arg_count(f, args, &[2], "`R : paint(c [ROUTES])`")?;
                let [(c, cs), (l, ls)] = vals.as_slice() else {
                    return Err(Reported);
                };
                let color = self.color(c, *cs)?;
                let Value::List(items) = l else {
                    return Err(self.report(
                        wrong_type("paint() takes its routes in brackets", *ls, l)
                            .with_help("write e.g. `paint(c [LXC])`"),
                    ));
                };
                let (routes, suppress) = self.routes(items, *ls)?;
                ActionKind::Paint {
                    color,
                    routes,
                    suppress,
                }
            }
            "colorpair" => {
                self.arg_count(f, args, &[2], "`R : colorpair(a b)`")?;
                let [(a, sa), (b, sb)] = vals.as_slice() else {
                    return Err(Reported);
                };
                let a = self.color(a, *sa)?;
                let b = self.color(b, *sb)?;
                if a ^ 1 != b {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::PAINT_COLORPAIR,
                            format!("colours {a} and {b} are not a hardware pair"),
                            span,
                            "in this colorpair()",
                        )
                        .with_note("the routers' colour swap exchanges colour c with c^1 only (0/1, 2/3, ..., 22/23)")
                        .with_help(format!("pair {a} with {}: allocate the two colours one after the other with color(), starting at an even one", a ^ 1)),
                    ));
                }
                ActionKind::ColorPair { a, b }
            }
            "code" => {
                self.arg_count(
                    f,
                    args,
                    &[1, 2],
                    "`R : code('prog [sock:colour PARAM:value ...])`",
                )?;
                let (prog, qs) = self.quoted_first(
                    &vals,
                    "code() takes a quoted program name",
                    "write e.g. `code('relay [...])` for relay.w",
                )?;
                let mut call = CodeCall {
                    prog,
                    prog_span: qs,
                    file: self.current,
                    sockets: Vec::new(),
                    params: Vec::new(),
                    span,
                };
                if let Some((l, ls)) = vals.get(1) {
                    self.bindings(l, *ls, &mut call)?;
                }
                self.out.codes.push(call);
                ActionKind::Code(self.out.codes.len() - 1)
            }
            "name" => {
                self.arg_count(f, args, &[1], "`R : name('g)`")?;
                let (n, _) = self.quoted_first(
                    &vals,
                    "name() takes a quoted name",
                    "write e.g. `name('core)`",
                )?;
                ActionKind::Name(n)
            }
            "mp" => {
                if !self.arch.has_message_passing() {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::PAINT_MP,
                            format!(
                                "mp() needs message passing, which {} routers lack",
                                self.arch
                            ),
                            span,
                            "message passing requested here",
                        )
                        .with_help("compile for arch=wse3 (or arch=sdr)"),
                    ));
                }
                if vals.is_empty() {
                    ActionKind::Mp(None)
                } else {
                    let mut cs = Vec::new();
                    for (v, s) in &vals {
                        cs.push(self.color(v, *s)?);
                    }
                    ActionKind::Mp(Some(cs))
                }
            }
            "switch" => self.switch(f, args, &vals, span)?,
            _ => return Err(Reported),
        };
        self.out.actions.push(Action { kind, region, span });
        Ok(())
    }

    /// `switch(c [POS1] ... [OPTIONS])`: each position is a bracket holding one route with
    /// one input side; an options bracket holds `ring`, a pop mode and `start:N`.
    pub(super) fn switch(
        &mut self,
        f: &Ident,
        args: &[Expr],
        vals: &[(Value, Span)],
        span: Span,
    ) -> R<ActionKind> {
        use csl_arch::image::PopMode;
        let usage = "`R : switch(c [LXR] [RXC] [ring pop_on_advance start:1])`";
        if !(2..=5).contains(&args.len()) {
            self.arg_count(f, args, &[2, 3, 4, 5], usage)?;
        }
        let Some(((c, cs), rest)) = vals.split_first() else {
            return Err(Reported);
        };
        let color = self.color(c, *cs)?;
        let mut positions = Vec::new();
        let (mut ring, mut pop, mut start) = (false, PopMode::NoPop, 0u8);
        let mut start_span = None;
        let bad = |msg: String, at: Span, label: &str| {
            Diagnostic::error(codes::PAINT_SWITCH, msg, at, label.to_string()).with_help(
                format!("a position is one route with one input, e.g. `[LXR]`; options go in their own bracket: {usage}"),
            )
        };
        for (v, vs) in rest {
            let Value::List(items) = v else {
                return Err(self.report(bad(
                    "switch() takes its positions and options in brackets".into(),
                    *vs,
                    &format!("this is {}", v.describe()),
                )));
            };
            let routes: Vec<_> = items
                .iter()
                .filter_map(|i| match i {
                    ListItem::Word(w, ws) if w.contains('X') => Some((w.clone(), *ws)),
                    _ => None,
                })
                .collect();
            if !routes.is_empty() {
                let [(w, ws)] = routes.as_slice() else {
                    return Err(self.report(bad(
                        "one switch position per bracket".into(),
                        *vs,
                        "several routes in one bracket",
                    )));
                };
                if items.len() != 1 {
                    return Err(self.report(bad(
                        "a switch position holds one route and nothing else".into(),
                        *vs,
                        "more than the route",
                    )));
                }
                let (ins, outs) = w.split_once('X').unwrap_or_default();
                let inputs = self.sides(ins, *ws, "inputs")?;
                let outputs = self.sides(outs, *ws, "outputs")?;
                let mut it = inputs.iter();
                let (Some(input), None) = (it.next(), it.next()) else {
                    return Err(self.report(bad(
                        format!("switch position `{w}` has more than one input"),
                        *ws,
                        "a position receives from one side",
                    )));
                };
                if positions.len() == 3 {
                    return Err(self.report(bad(
                        "a switch has at most 3 positions besides position 0".into(),
                        *vs,
                        "a fourth one",
                    )));
                }
                positions.push((input, outputs));
                continue;
            }
            for it in items.iter() {
                match it {
                    ListItem::Word(w, ws) => match w.as_str() {
                        "ring" => ring = true,
                        "no_pop" => pop = PopMode::NoPop,
                        "always_pop" => pop = PopMode::AlwaysPop,
                        "pop_on_advance" => pop = PopMode::PopOnAdvance,
                        "pop_on_advance_nop" => pop = PopMode::PopOnAdvanceNop,
                        _ => {
                            return Err(self.report(bad(
                                format!("`{w}` is not a switch option"),
                                *ws,
                                "the options are ring, no_pop, always_pop, pop_on_advance, pop_on_advance_nop and start:N",
                            )));
                        }
                    },
                    ListItem::Bind(k, val, ks) if k.name == "start" => match val {
                        Value::Int(n) if (0..=3).contains(n) => {
                            start = *n as u8;
                            start_span = Some(*ks);
                        }
                        _ => {
                            return Err(self.report(bad(
                                "`start:` takes a position, 0 to 3".into(),
                                *ks,
                                "not a position",
                            )));
                        }
                    },
                    ListItem::Bind(k, _, _) => {
                        return Err(self.report(bad(
                            format!("`{}:` is not a switch option", k.name),
                            k.span,
                            "unknown option",
                        )));
                    }
                    ListItem::Bar(b) => {
                        return Err(self.report(bad(
                            "edge suppression `|` is not available in switch()".into(),
                            *b,
                            "here",
                        )));
                    }
                }
            }
        }
        if positions.is_empty() {
            return Err(self.report(bad(
                "switch() without a position".into(),
                span,
                "no route in these brackets",
            )));
        }
        if let Some(ss) = start_span
            && usize::from(start) > positions.len()
        {
            return Err(self.report(bad(
                format!(
                    "`start:{start}` names a position this switch does not have (0 to {})",
                    positions.len()
                ),
                ss,
                "no such position",
            )));
        }
        Ok(ActionKind::Switch {
            color,
            positions,
            ring,
            pop,
            start,
        })
    }

    /// Parses the bracket of `paint()`: routes and edge suppressions.
    pub(super) fn routes(&mut self, items: &[ListItem], span: Span) -> R<(Vec<Route>, Sides)> {
        let has_bar = items.iter().any(|i| matches!(i, ListItem::Bar(_)));
        let mut routes = Vec::new();
        let mut suppress = Sides::default();
        for it in items {
            match it {
                ListItem::Bar(_) => {}
                ListItem::Bind(k, _, _) => {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::PAINT_ROUTE_SYNTAX,
                            "expected a route",
                            k.span,
                            "a binding, not a route",
                        )
                        .with_help(
                            "a route is INPUTS X OUTPUTS over the sides L R U D C, e.g. `LXC`",
                        ),
                    ));
                }
                ListItem::Word(w, ws) => match w.split_once('X') {
                    Some((ins, outs)) => {
                        let inputs = self.sides(ins, *ws, "inputs")?;
                        let outputs = self.sides(outs, *ws, "outputs")?;
                        routes.push(Route { inputs, outputs });
                    }
                    None => {
                        let side = match w.chars().collect::<Vec<_>>().as_slice() {
                            [c] => Side::from_letter(*c).filter(|s| *s != Side::C),
                            _ => None,
                        };
                        match side {
                            Some(s) if has_bar => suppress = suppress.with(s),
                            _ => {
                                let d = Diagnostic::error(
                                    codes::PAINT_ROUTE_SYNTAX,
                                    format!("`{w}` is not a route"),
                                    *ws,
                                    "a route needs `X` between its inputs and outputs",
                                )
                                .with_help("write INPUTS X OUTPUTS over the sides L R U D C (e.g. `LXC`); a lone side letter L, R, U or D after `|` drops the routes on the region's edge on that side (e.g. `[CXR|R]`)");
                                return Err(self.report(d));
                            }
                        }
                    }
                },
            }
        }
        if routes.is_empty() {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_ROUTE_SYNTAX,
                    "paint() without a route",
                    span,
                    "no route in these brackets",
                )
                .with_help("write at least one route, e.g. `[LXC]`"),
            ));
        }
        Ok((routes, suppress))
    }

    pub(super) fn sides(&mut self, letters: &str, span: Span, what: &str) -> R<Sides> {
        let mut s = Sides::default();
        if letters.is_empty() {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_ROUTE_SYNTAX,
                    format!("a route without {what}"),
                    span,
                    format!("no {what} on this side of `X`"),
                )
                .with_help("a route is INPUTS X OUTPUTS over the sides L R U D C, e.g. `LXC`"),
            ));
        }
        for c in letters.chars() {
            let Some(side) = Side::from_letter(c) else {
                return Err(self.report(
                    Diagnostic::error(
                        codes::PAINT_ROUTE_SYNTAX,
                        format!("`{c}` is not a side"),
                        span,
                        "in this route",
                    )
                    .with_help("the sides are L (west), R (east), U (+y, the router's south), D (-y, north) and C (the core); a route has one `X`"),
                ));
            };
            if s.has(side) {
                return Err(self.report(Diagnostic::error(
                    codes::PAINT_ROUTE_SYNTAX,
                    format!("side `{c}` is written twice"),
                    span,
                    "in this route",
                )));
            }
            s = s.with(side);
        }
        Ok(s)
    }

    pub(super) fn bindings(&mut self, l: &Value, span: Span, call: &mut CodeCall) -> R<()> {
        let Value::List(items) = l else {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_BINDING,
                    "code() takes its bindings in brackets",
                    span,
                    format!("this is {}", l.describe()),
                )
                .with_help("write e.g. `code('relay [a:a N:N])`"),
            ));
        };
        let mut seen: Vec<(String, Span)> = Vec::new();
        for it in items.iter() {
            let (k, v, vs) = match it {
                ListItem::Bind(k, v, vs) => (k, v, *vs),
                ListItem::Word(w, s) => {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::PAINT_BINDING,
                            format!("`{w}` is not a binding"),
                            *s,
                            "expected NAME:VALUE",
                        )
                        .with_help("bind a socket with `sock:colour` or override a param with `PARAM:value`"),
                    ));
                }
                ListItem::Bar(s) => {
                    return Err(self.report(Diagnostic::error(
                        codes::PAINT_BINDING,
                        "unexpected `|` in code()",
                        *s,
                        "expected NAME:VALUE",
                    )));
                }
            };
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == k.name) {
                return Err(self.report(Diagnostic::twice(
                    codes::PAINT_BINDING,
                    format!("`{}`", k.name),
                    "bound",
                    k.span,
                    *first,
                )));
            }
            seen.push((k.name.clone(), k.span));
            match v {
                Value::Color(c) => call.sockets.push((k.name.clone(), *c, k.span.to(vs))),
                Value::Int(i) => {
                    call.params
                        .push((k.name.clone(), ParamValue::Int(*i), k.span.to(vs)))
                }
                Value::Float(f) => {
                    call.params
                        .push((k.name.clone(), ParamValue::Float(*f), k.span.to(vs)))
                }
                other => {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::PAINT_BINDING,
                            format!("`{}` is bound to {}", k.name, other.describe()),
                            vs,
                            "expected a colour (socket) or a number (param)",
                        )
                        .with_note("a value made by color() binds a socket; an integer or float overrides a param"),
                    ));
                }
            }
        }
        Ok(())
    }
}
