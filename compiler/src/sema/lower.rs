//! [`FnBuilder`]: emits IR for the function or task body being lowered.

use crate::ir::{Block, BlockId, Function, Inst, Term, VReg};
use crate::source::Span;
use cranelift_entity::{EntityRef, PrimaryMap};
use csl_arch::isa::{BinOp, CmpOp, NumTy};

/// Builds one [`Function`].
pub struct FnBuilder {
    /// The function under construction.
    pub func: Function,
    /// The block instructions go into.
    pub cur: BlockId,
    /// Number of jumps/branches targeting each block (the entry counts as targeted).
    targeted: Vec<u32>,
    /// Microthreads of the asynchronous DSD operations issued so far, with where and in
    /// which block.
    pub async_uts: Vec<(u8, Span, BlockId)>,
    /// Descriptor temporaries nobody else refers to: the register holding the address of
    /// a descriptor just built by a DSD builtin, with the frame offset of its slot, or
    /// `None` for a call site's own global copy of a constant descriptor (which only
    /// absolute field changes may touch in place). The next builtin that changes such a
    /// descriptor, or a declaration that names a frame slot, takes it over instead of
    /// copying it.
    pub fresh: std::collections::HashMap<VReg, Option<u32>>,
}

impl FnBuilder {
    /// A builder with an empty entry block and `nparams` parameter registers.
    pub fn new(name: String, nparams: u32, span: Span) -> FnBuilder {
        let mut blocks = PrimaryMap::new();
        let entry = blocks.push(Block {
            insts: Vec::new(),
            term: Term::Open,
        });
        FnBuilder {
            func: Function {
                name,
                nparams,
                nregs: nparams,
                frame_bytes: 0,
                blocks,
                span,
            },
            cur: entry,
            targeted: vec![1],
            async_uts: Vec::new(),
            fresh: std::collections::HashMap::new(),
        }
    }

    /// A builder whose output is discarded (used by comptime environments).
    pub fn sink() -> FnBuilder {
        let file = <crate::source::FileId as EntityRef>::new(0);
        FnBuilder::new("<comptime>".into(), 0, Span::new(file, 0, 0))
    }

    /// A fresh register.
    pub fn reg(&mut self) -> VReg {
        let r = VReg::new(self.func.nregs as usize);
        self.func.nregs += 1;
        r
    }

    /// A fresh register holding a copy of `src`.
    pub fn copy(&mut self, src: VReg) -> VReg {
        let dst = self.reg();
        self.emit(Inst::Mov { dst, src });
        dst
    }

    /// Parameter register `i`.
    pub fn param(&self, i: u32) -> VReg {
        VReg::new(i as usize)
    }

    /// Appends an instruction to the current block (dropped if the block is closed, which
    /// only happens in dead code after a terminator).
    pub fn emit(&mut self, inst: Inst) {
        let b = &mut self.func.blocks[self.cur];
        if matches!(b.term, Term::Open) {
            b.insts.push(inst);
        }
    }

    /// Marks the code that follows as coming from the statement at `span` (an
    /// [`Inst::Loc`]); a marker with nothing after it yet is replaced.
    pub fn mark(&mut self, span: Span) {
        let b = &mut self.func.blocks[self.cur];
        if !matches!(b.term, Term::Open) {
            return;
        }
        match b.insts.last_mut() {
            Some(Inst::Loc { span: last }) => *last = span,
            _ => b.insts.push(Inst::Loc { span }),
        }
    }

    /// Appends `dst = a op b` (an [`Inst::Bin`]).
    pub fn bin(&mut self, op: BinOp, ty: NumTy, dst: VReg, a: VReg, b: VReg) {
        self.emit(Inst::Bin { op, ty, dst, a, b });
    }

    /// Closes the current block with a branch on `cond` to `then` or `otherwise`.
    pub fn branch(&mut self, cond: VReg, then: BlockId, otherwise: BlockId) {
        self.terminate(Term::Branch {
            cond,
            then,
            otherwise,
        });
    }

    /// The head of a counting loop: closes the current block with a jump to `header`, in
    /// which `a op b` (compared as `ty`) branches to `body` or else to `exit`; continues in
    /// `body`.
    pub fn loop_header(
        &mut self,
        header: BlockId,
        body: BlockId,
        exit: BlockId,
        (op, ty, a, b): (CmpOp, NumTy, VReg, VReg),
    ) {
        self.jump_to(header);
        let cond = self.reg();
        self.emit(Inst::Cmp {
            op,
            ty,
            dst: cond,
            a,
            b,
        });
        self.branch(cond, body, exit);
        self.switch_to(body);
    }

    /// A new empty block.
    pub fn block(&mut self) -> BlockId {
        self.targeted.push(0);
        self.func.blocks.push(Block {
            insts: Vec::new(),
            term: Term::Open,
        })
    }

    /// Ends the current block (if still open).
    pub fn terminate(&mut self, term: Term) {
        let b = &mut self.func.blocks[self.cur];
        if !matches!(b.term, Term::Open) {
            return;
        }
        // A jump out of a block nobody reaches (code after a `return`) does not make its
        // target reachable.
        let live = self.targeted[self.cur.index()] > 0;
        match &term {
            Term::Jump(t) if live => self.targeted[t.index()] += 1,
            Term::Branch {
                then, otherwise, ..
            } if live => {
                self.targeted[then.index()] += 1;
                self.targeted[otherwise.index()] += 1;
            }
            _ => {}
        }
        b.term = term;
    }

    /// Makes `b` the current block.
    pub fn switch_to(&mut self, b: BlockId) {
        self.cur = b;
    }

    /// Falls through into `b`: ends the current block with a jump to it and continues there.
    pub fn jump_to(&mut self, b: BlockId) {
        self.terminate(Term::Jump(b));
        self.switch_to(b);
    }

    /// Closes a loop body: jumps back to `header` and continues after the loop, in `exit`.
    pub fn loop_back(&mut self, header: BlockId, exit: BlockId) {
        self.terminate(Term::Jump(header));
        self.switch_to(exit);
    }

    /// Ends the current block with `term` and continues in a fresh (unreachable) block.
    pub fn terminate_and_continue(&mut self, term: Term) {
        self.terminate(term);
        let next = self.block();
        self.switch_to(next);
    }

    /// Whether the current block can be reached (it is targeted and still open).
    pub fn cur_reachable(&self) -> bool {
        self.targeted[self.cur.index()] > 0 && matches!(self.func.blocks[self.cur].term, Term::Open)
    }

    /// Reserves `size` bytes (aligned to `align`) in the frame's stack area.
    pub fn frame_slot(&mut self, size: u32, align: u32) -> u32 {
        let align = align.max(1);
        let off = self.func.frame_bytes.div_ceil(align) * align;
        self.func.frame_bytes = off + size;
        off
    }

    /// Finishes: closes every open block (open unreachable blocks become `Unreachable`).
    pub fn finish(mut self) -> Function {
        for b in self.func.blocks.values_mut() {
            if matches!(b.term, Term::Open) {
                b.term = Term::Unreachable;
            }
        }
        self.func
    }
}
