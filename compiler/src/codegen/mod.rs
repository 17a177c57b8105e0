//! Back end: places a [`Program`]'s globals in PE memory and turns its IR into PE
//! instructions, producing one [`ProgramClass`] of the image.
//!
//! * Memory: globals are placed from address 0 upward in creation order, each at its
//!   alignment; the top [`STACK_BYTES`] are the stack. A program that does not fit is a
//!   diagnostic naming the largest globals.
//! * Code: blocks are laid out in order (empty unreachable blocks nothing names are left
//!   out); a branch whose `then` target is the next block becomes one `br_false`, one whose
//!   `otherwise` target is next one `br_true`. Call arguments are copied into consecutive
//!   scratch registers above the function's own, as the ISA passes them, unless they
//!   already are consecutive (the optimiser places them so).
//!
//! * Lines: every [`Inst::Loc`] marker and every function entry becomes a row of the
//!   class's line table ([`lines`]), so the simulator can name source lines.
//!
//! [`emit_class`] does three jobs, one function each: [`emit_function`] lays out a
//! function's blocks and patches branch targets, [`select`] picks the PE instructions for
//! one IR instruction, and [`class_summary`] builds the class's tables (functions, tasks,
//! symbols, globals).

use crate::diag::{Diagnostic, codes};
use crate::ir::{FuncId, GlobalPlace, ImmVal, Inst, Program, Term};
use cranelift_entity::{EntityRef, SecondaryMap};
use csl_arch::fabric::{PE_MEMORY_BYTES, STACK_BYTES, mmio};
use csl_arch::image::{
    ClassInfo, FuncInfo, GlobalInfo, ProgramClass, SymbolExport, SymbolTarget, TaskBinding,
};
use csl_arch::isa::{Op, Reg, TrapCode};

pub mod lines;

/// Compiles one program into an image class. `name` describes the class in messages;
/// `sources` resolves the spans of the program's line markers.
pub fn emit_class(
    prog: &Program,
    name: &str,
    sources: &crate::source::SourceMap,
) -> Result<ProgramClass, Box<Diagnostic>> {
    let (addrs, data) = place_globals(prog, name)?;
    let mut code = Vec::new();
    let mut functions = Vec::new();
    let mut lines = lines::Lines::new(sources);
    for f in prog.functions.values() {
        functions.push(emit_function(prog, &addrs, f, &mut code, &mut lines)?);
    }
    let mut class = class_summary(prog, name, &addrs, code, data, functions);
    class.lines = lines.finish(class.code.len());
    Ok(class)
}

/// Block layout with fix-ups: appends function `f`'s code to `code`, block by block in
/// [`layout`] order, each block's instructions by [`select`] and its terminator as the
/// fewest jumps and branches; then patches branch targets to block starts.
fn emit_function(
    prog: &Program,
    addrs: &Addresses,
    f: &crate::ir::Function,
    code: &mut Vec<Op>,
    lines: &mut lines::Lines<'_>,
) -> Result<FuncInfo, Box<Diagnostic>> {
    let entry = code.len() as u32;
    lines.mark(entry, f.span);
    let max_args = f
        .blocks
        .values()
        .flat_map(|b| b.insts.iter())
        .map(|i| match i {
            Inst::Call { args, .. } | Inst::CallInd { args, .. } if !consecutive(args) => {
                args.len() as u32
            }
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let scratch = f.nregs;
    let nregs = f.nregs + max_args;
    if nregs > u32::from(u16::MAX) || f.frame_bytes > STACK_BYTES {
        return Err(Box::new(
            Diagnostic::error(
                codes::OUT_OF_MEMORY,
                format!("function `{}` is too large", f.name),
                f.span,
                "in this function",
            )
            .with_note(format!(
                "it needs {nregs} registers and {} bytes of stack",
                f.frame_bytes
            )),
        ));
    }
    let mut starts: SecondaryMap<crate::ir::BlockId, u32> = SecondaryMap::new();
    let mut fixups: Vec<(usize, crate::ir::BlockId)> = Vec::new();
    let order = layout(f);
    for (pos, &b) in order.iter().enumerate() {
        starts[b] = code.len() as u32;
        let block = &f.blocks[b];
        for inst in &block.insts {
            match inst {
                Inst::Loc { span } => lines.mark(code.len() as u32, *span),
                _ => select(prog, addrs, f, scratch, inst, code)?,
            }
        }
        let next = order.get(pos + 1).copied();
        match &block.term {
            Term::Jump(t) => {
                if Some(*t) != next {
                    fixups.push((code.len(), *t));
                    code.push(Op::Jump { target: 0 });
                }
            }
            Term::Branch {
                cond,
                then,
                otherwise,
            } if Some(*otherwise) == next && *then != *otherwise => {
                fixups.push((code.len(), *then));
                code.push(Op::BrTrue {
                    cond: reg(*cond),
                    target: 0,
                });
            }
            Term::Branch {
                cond,
                then,
                otherwise,
            } => {
                fixups.push((code.len(), *otherwise));
                code.push(Op::BrFalse {
                    cond: reg(*cond),
                    target: 0,
                });
                if Some(*then) != next {
                    fixups.push((code.len(), *then));
                    code.push(Op::Jump { target: 0 });
                }
            }
            Term::Ret(Some(r)) => code.push(Op::Ret { src: reg(*r) }),
            Term::Ret(None) => code.push(Op::RetVoid {}),
            Term::Unreachable | Term::Open => code.push(Op::Trap {
                code: TrapCode::Unreachable as u16,
            }),
        }
    }
    for (at, target) in fixups {
        let t = starts[target];
        match &mut code[at] {
            Op::Jump { target } | Op::BrFalse { target, .. } | Op::BrTrue { target, .. } => {
                *target = t
            }
            _ => {}
        }
    }
    Ok(FuncInfo {
        name: f.name.clone(),
        entry,
        nregs: nregs as u16,
        nparams: f.nparams as u8,
        frame_bytes: f.frame_bytes as u16,
    })
}

/// The register a virtual register is allocated to (one to one).
fn reg(v: crate::ir::VReg) -> Reg {
    Reg(v.index() as u16)
}

/// Instruction selection: appends the PE instructions for IR instruction `inst` of
/// function `f` to `code`. `scratch` is the first register above `f`'s own, where call
/// arguments are copied when they are not consecutive.
fn select(
    prog: &Program,
    addrs: &Addresses,
    f: &crate::ir::Function,
    scratch: u32,
    inst: &Inst,
    code: &mut Vec<Op>,
) -> Result<(), Box<Diagnostic>> {
    let imm = |v: ImmVal| match v {
        ImmVal::Const(c) => c,
        ImmVal::Global(g, off) => addrs[g].wrapping_add(off),
    };
    match inst {
        Inst::Imm { dst, imm } => code.push(Op::Imm {
            dst: reg(*dst),
            imm: *imm,
        }),
        Inst::Mov { dst, src } => code.push(Op::Mov {
            dst: reg(*dst),
            src: reg(*src),
        }),
        Inst::Bin { op, ty, dst, a, b } => code.push(Op::Bin {
            op: *op,
            ty: *ty,
            dst: reg(*dst),
            a: reg(*a),
            b: reg(*b),
        }),
        Inst::Cmp { op, ty, dst, a, b } => code.push(Op::Cmp {
            op: *op,
            ty: *ty,
            dst: reg(*dst),
            a: reg(*a),
            b: reg(*b),
        }),
        Inst::Un { op, ty, dst, a } => code.push(Op::Un {
            op: *op,
            ty: *ty,
            dst: reg(*dst),
            a: reg(*a),
        }),
        Inst::Conv { to, from, dst, src } => code.push(Op::Conv {
            to: *to,
            from: *from,
            dst: reg(*dst),
            src: reg(*src),
        }),
        Inst::ConvR {
            mode,
            to,
            from,
            dst,
            src,
        } => code.push(Op::ConvR {
            mode: *mode as u8,
            to: *to,
            from: *from,
            dst: reg(*dst),
            src: reg(*src),
        }),
        Inst::UtWait { mask } => code.push(Op::UtWait { mask: *mask }),
        Inst::BinImm {
            op,
            ty,
            dst,
            a,
            imm: i,
        } => code.push(Op::BinImm {
            op: *op,
            ty: *ty,
            dst: reg(*dst),
            a: reg(*a),
            imm: imm(*i),
        }),
        Inst::CmpImm {
            op,
            ty,
            dst,
            a,
            imm: i,
        } => code.push(Op::CmpImm {
            op: *op,
            ty: *ty,
            dst: reg(*dst),
            a: reg(*a),
            imm: imm(*i),
        }),
        Inst::LoadOff { w, dst, addr, off } => code.push(Op::LoadOff {
            w: *w,
            dst: reg(*dst),
            addr: reg(*addr),
            off: imm(*off) as u16,
        }),
        Inst::StoreOff { w, addr, off, src } => code.push(Op::StoreOff {
            w: *w,
            addr: reg(*addr),
            off: imm(*off) as u16,
            src: reg(*src),
        }),
        Inst::Load { w, dst, addr } => code.push(Op::Load {
            w: *w,
            dst: reg(*dst),
            addr: reg(*addr),
        }),
        Inst::Store { w, addr, src } => code.push(Op::Store {
            w: *w,
            addr: reg(*addr),
            src: reg(*src),
        }),
        Inst::FrameAddr { dst, off } => code.push(Op::FrameAddr {
            dst: reg(*dst),
            off: *off as u16,
        }),
        Inst::GlobalAddr {
            dst,
            global,
            offset,
        } => code.push(Op::Imm {
            dst: reg(*dst),
            imm: addrs[*global].wrapping_add(*offset),
        }),
        Inst::FuncAddr { dst, func } => code.push(Op::Imm {
            dst: reg(*dst),
            imm: func.index() as u32,
        }),
        Inst::Call { func, args, dst } => {
            let at = place_args(code, args, scratch);
            code.push(Op::Call {
                func: func.index() as u32,
                args: at,
                nargs: args.len() as u8,
                dst: dst.map_or(Reg(0), reg),
            });
        }
        Inst::CallInd { fptr, args, dst } => {
            let at = place_args(code, args, scratch);
            code.push(Op::CallInd {
                fptr: reg(*fptr),
                args: at,
                nargs: args.len() as u8,
                dst: dst.map_or(Reg(0), reg),
            });
        }
        Inst::Activate { id } => code.push(Op::Activate { id: reg(*id) }),
        Inst::Block { id } => code.push(Op::Block { id: reg(*id) }),
        Inst::Unblock { id } => code.push(Op::Unblock { id: reg(*id) }),
        Inst::Trap { code: c } => code.push(Op::Trap { code: *c as u16 }),
        Inst::Copy { dst, src, bytes } => code.push(Op::Copy {
            dst: reg(*dst),
            src: reg(*src),
            bytes: *bytes,
        }),
        Inst::DsdSet { field, desc, val } => code.push(Op::DsdSet {
            field: *field,
            desc: reg(*desc),
            val: reg(*val),
        }),
        // Markers become line-table rows in `emit_function`, not instructions.
        Inst::Loc { .. } => {}
        Inst::DsdOp {
            op,
            operands,
            cfg,
            done,
            done_task,
            ut,
            idx,
        } => {
            let done = match done_task {
                None => *done,
                Some(t) => match prog.tasks.iter().find(|b| b.func == *t) {
                    Some(b) => b.id,
                    None => {
                        return Err(Box::new(
                            Diagnostic::error(
                                codes::BAD_TASK,
                                format!("task `{}` is started by a DSD operation but never bound to a task id", prog.functions[*t].name),
                                f.span,
                                "in this function",
                            )
                            .with_help("bind it in a top-level comptime block, e.g. `@bind_local_task(task, id)`"),
                        ));
                    }
                },
            };
            let kinds = csl_arch::dsd::OperandKind::pack(operands.map(|(k, _)| k));
            let r = |i: usize| operands[i].1.map_or(Reg(0), reg);
            code.push(Op::DsdOp {
                op: *op,
                kinds,
                cfg: *cfg,
                done,
                ut: *ut,
                dst: r(0),
                a: r(1),
                b: r(2),
                c: r(3),
                idx: idx.map_or(Reg(0), reg),
            });
        }
    }
    Ok(())
}

/// The class summary: the image class of a program's code and data, with its tables of
/// functions, task bindings, exported symbols and globals.
fn class_summary(
    prog: &Program,
    name: &str,
    addrs: &Addresses,
    code: Vec<Op>,
    data: Vec<u8>,
    functions: Vec<FuncInfo>,
) -> ProgramClass {
    let tasks = prog
        .tasks
        .iter()
        .map(|t| TaskBinding {
            id: t.id,
            kind: t.kind,
            func: t.func.index() as u32,
            args: t.args,
        })
        .collect();
    let symbols = prog
        .symbols
        .iter()
        .map(|s| SymbolExport {
            name: s.name.clone(),
            target: match s.target {
                crate::ir::ExportTarget::Global(g) => SymbolTarget::Tensor { ptr_addr: addrs[g] },
                crate::ir::ExportTarget::Func(f) => SymbolTarget::Func {
                    func: func_index(f),
                },
            },
        })
        .collect();
    let globals = prog
        .globals
        .iter()
        .map(|(g, gl)| GlobalInfo {
            name: gl.name.clone(),
            addr: addrs[g],
            size: gl.size,
        })
        .collect();
    ProgramClass {
        code,
        data,
        info: ClassInfo {
            name: name.to_string(),
            functions,
            tasks,
            initially_active: prog.initially_active,
            initially_blocked: prog.initially_blocked,
            symbols,
            globals,
            input_queues: prog.input_queues.clone(),
            output_queues: prog.output_queues.clone(),
            blocked_queues: Vec::new(),
        },
        lines: Default::default(),
    }
}

/// The blocks in code order: all of them in order, except empty unreachable blocks that no
/// terminator names (the leftovers of optimisation and of code after a `return`).
fn layout(f: &crate::ir::Function) -> Vec<crate::ir::BlockId> {
    let mut named = vec![false; f.blocks.len()];
    for b in f.blocks.values() {
        for s in b.term.succs() {
            named[s.index()] = true;
        }
    }
    f.blocks
        .iter()
        .filter(|(id, b)| {
            id.index() == 0
                || named[id.index()]
                || !b.insts.iter().all(Inst::is_marker)
                || !matches!(b.term, Term::Unreachable)
        })
        .map(|(id, _)| id)
        .collect()
}

/// Whether call arguments already sit in consecutive registers, as the ISA passes them.
fn consecutive(args: &[crate::ir::VReg]) -> bool {
    args.iter()
        .enumerate()
        .all(|(i, a)| a.index() == args[0].index() + i)
}

/// The first register of a call's arguments: where they already are if consecutive, else
/// the scratch registers above the function's own, after copying them there.
fn place_args(code: &mut Vec<Op>, args: &[crate::ir::VReg], scratch: u32) -> Reg {
    match args.first() {
        Some(first) if consecutive(args) => Reg(first.index() as u16),
        _ => {
            for (i, a) in args.iter().enumerate() {
                code.push(Op::Mov {
                    dst: Reg((scratch + i as u32) as u16),
                    src: Reg(a.index() as u16),
                });
            }
            Reg(scratch as u16)
        }
    }
}

fn func_index(f: FuncId) -> u32 {
    f.index() as u32
}

/// The byte address of every global.
type Addresses = SecondaryMap<crate::ir::GlobalId, u32>;

/// Assigns addresses and builds the initial memory image. Fixed globals
/// ([`GlobalPlace::At`]) keep their address; the others are placed in creation order,
/// automatic ones clear of every fixed range, relative ones at their base plus offset.
fn place_globals(prog: &Program, name: &str) -> Result<(Addresses, Vec<u8>), Box<Diagnostic>> {
    let mut addrs = SecondaryMap::new();
    let in_sram = |a: u64| a < u64::from(mmio::BASE);
    // Byte ranges of SRAM that fixed globals occupy.
    let fixed: Vec<(u64, u64)> = prog
        .globals
        .values()
        .filter_map(|gl| match gl.place {
            GlobalPlace::At(a) if in_sram(u64::from(a)) => {
                Some((u64::from(a), u64::from(a) + u64::from(gl.size)))
            }
            _ => None,
        })
        .collect();
    let mut next: u64 = 0;
    let mut end: u64 = 0;
    for (g, gl) in &prog.globals {
        let size = u64::from(gl.size);
        let at = match gl.place {
            GlobalPlace::At(a) => u64::from(a),
            GlobalPlace::After { base, offset } => {
                u64::from(addrs.get(base).copied().unwrap_or(0)) + u64::from(offset)
            }
            GlobalPlace::Auto => {
                let a = u64::from(gl.align.max(1));
                let mut at = next.div_ceil(a) * a;
                // Skip past any fixed range the candidate overlaps.
                while let Some(&(_, e)) = fixed.iter().find(|&&(s, e)| at < e && s < at + size) {
                    at = e.div_ceil(a) * a;
                }
                at
            }
        };
        addrs[g] = at as u32;
        if in_sram(at) {
            if !matches!(gl.place, GlobalPlace::At(_)) {
                next = next.max(at + size);
            }
            end = end.max(at + size);
        }
    }
    let next = end;
    let limit = u64::from(PE_MEMORY_BYTES - STACK_BYTES);
    if next > limit {
        let mut by_size: Vec<_> = prog.globals.values().collect();
        by_size.sort_by(|a, b| b.size.cmp(&a.size).then(a.name.cmp(&b.name)));
        let Some(first) = by_size.first() else {
            return Err(Box::new(Diagnostic::global(
                codes::OUT_OF_MEMORY,
                "program does not fit in PE memory",
            )));
        };
        let mut d = Diagnostic::error(
            codes::OUT_OF_MEMORY,
            format!(
                "the program `{name}` needs {next} bytes of PE memory, but only {limit} are available"
            ),
            first.span,
            format!("`{}` takes {} bytes", first.name, first.size),
        );
        for g in by_size.iter().skip(1).take(2) {
            d = d.with_label(g.span, format!("`{}` takes {} bytes", g.name, g.size));
        }
        d = d
            .with_note(format!(
                "a PE has {PE_MEMORY_BYTES} bytes; {STACK_BYTES} are kept for the stack"
            ))
            .with_help("spread the data over more PEs or use smaller arrays");
        return Err(Box::new(d));
    }
    let mut data = vec![0u8; next as usize];
    for (g, gl) in &prog.globals {
        let base = addrs[g] as usize;
        if !in_sram(base as u64) {
            continue;
        }
        if let Some(dst) = data.get_mut(base..base + gl.init.len()) {
            dst.copy_from_slice(&gl.init);
        }
        for r in &gl.relocs {
            let v = (addrs[r.target] + r.addend) as u16;
            let at = base + r.offset as usize;
            if let Some(dst) = data.get_mut(at..at + 2) {
                dst.copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    Ok((addrs, data))
}
