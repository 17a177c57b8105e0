//! DSDs at comptime: [`DsdVal`], the compiler's view of a data structure descriptor, and
//! its encoding into the in-memory layout of [`csl_arch::dsd`].

use super::types::TypeId;
use crate::ir::GlobalId;
use csl_arch::dsd::{DESC_BYTES, DsdKind, field};

/// Where a memory descriptor's base points.
#[derive(Clone, Debug, PartialEq)]
pub enum DsdBase {
    /// Nothing (fabric DSDs).
    None,
    /// A global plus a byte offset.
    Global(GlobalId, i64),
    /// A fixed address.
    Abs(u32),
}

/// A descriptor known at comptime.
#[derive(Clone, Debug, PartialEq)]
pub struct DsdVal {
    /// The CSL type (`mem1d_dsd`, ...).
    pub ty: TypeId,
    /// What it describes.
    pub kind: DsdKind,
    /// [`csl_arch::dsd::flags`] bits.
    pub flags: u8,
    /// Fabric: queue id.
    pub queue: u8,
    /// Fabric: colour id.
    pub color: u8,
    /// Memory: base.
    pub base: DsdBase,
    /// Element size in bytes of the accessed array (2 or 4), for offsets.
    pub elem_bytes: u32,
    /// mem1d / fabric length; FIFO capacity.
    pub length: u16,
    /// mem1d stride in elements.
    pub stride: i16,
    /// mem4d extents, innermost first.
    pub extents: Vec<u16>,
    /// mem4d strides in elements, innermost first.
    pub strides: Vec<i16>,
    /// FIFO: task ids activated on push / pop (`0xff` none).
    pub fifo_tasks: (u8, u8),
}

impl DsdVal {
    /// The descriptor's bytes, plus (offset, global, addend) for a base that points into
    /// a global (patched at link time).
    pub fn encode(&self) -> (Vec<u8>, Option<(u32, GlobalId, u32)>) {
        let mut b = vec![0u8; DESC_BYTES as usize];
        let put16 = |b: &mut Vec<u8>, at: u32, v: u16| {
            let at = at as usize;
            b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        };
        b[field::KIND as usize] = self.kind as u8;
        b[field::FLAGS as usize] = self.flags;
        b[field::QUEUE as usize] = self.queue;
        b[field::COLOR as usize] = self.color;
        let mut reloc = None;
        match self.base {
            DsdBase::None => {}
            DsdBase::Abs(a) => put16(&mut b, field::BASE, a as u16),
            DsdBase::Global(g, off) => reloc = Some((field::BASE, g, off.max(0) as u32)),
        }
        put16(&mut b, field::LENGTH, self.length);
        put16(&mut b, field::STRIDE, self.stride as u16);
        b[field::NDIMS as usize] = self.extents.len() as u8;
        b[field::ELEM as usize] = self.elem_bytes as u8;
        for (i, e) in self.extents.iter().take(4).enumerate() {
            put16(&mut b, field::EXTENTS + 2 * i as u32, *e);
        }
        for (i, s) in self.strides.iter().take(4).enumerate() {
            put16(&mut b, field::STRIDES + 2 * i as u32, *s as u16);
        }
        if self.kind == DsdKind::Fifo {
            b[field::FIFO_ACTIVATE_PUSH as usize] = self.fifo_tasks.0;
            b[field::FIFO_ACTIVATE_POP as usize] = self.fifo_tasks.1;
        }
        (b, reloc)
    }
}

impl super::Sema {
    /// The address of a constant global holding descriptor `d` (one global per distinct
    /// descriptor of the program).
    pub fn dsd_const_addr(&mut self, env: &mut super::eval::Env, d: &DsdVal, span: crate::source::Span) -> super::R<crate::ir::VReg> {
        let key = format!("{d:?}");
        let g = match self.dsd_consts.get(&key) {
            Some(g) => *g,
            None => {
                let (bytes, reloc) = d.encode();
                let relocs = reloc.map(|(offset, target, addend)| crate::ir::Reloc { offset, target, addend }).into_iter().collect();
                let n = self.dsd_consts.len();
                let Some(p) = self.prog.as_mut() else {
                    return Err(self.not_comptime(span));
                };
                let g = p.globals.push(crate::ir::Global {
                    name: format!("<dsd{n}>"),
                    size: DESC_BYTES,
                    align: 2,
                    init: bytes,
                    relocs,
                    span,
                });
                self.global_types.insert(g, d.ty);
                self.dsd_consts.insert(key, g);
                g
            }
        };
        let dst = self.fb(env).reg();
        self.fb(env).emit(crate::ir::Inst::GlobalAddr { dst, global: g, offset: 0 });
        Ok(dst)
    }
}
