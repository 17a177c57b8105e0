//! [`DsdVal`], the compiler's view of a descriptor known at comptime, and its encoding
//! (through [`csl_arch::dsd::Desc`], the layout the simulator reads) into the initial
//! contents of a global.

use crate::ir::GlobalId;
use crate::sema::ConstKey;
use crate::sema::types::TypeId;
use csl_arch::dsd::{DESC_BYTES, Desc, DsdKind, field};

/// Where a memory descriptor's base points.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DsdBase {
    /// Nothing (fabric DSDs).
    None,
    /// A global plus a byte offset.
    Global(GlobalId, i64),
    /// A fixed address.
    Abs(u32),
}

/// A descriptor known at comptime.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
    /// Fabout: [`csl_arch::dsd::fab_zero`] bits.
    pub zero: u8,
}

impl DsdVal {
    /// The descriptor's bytes, plus (offset, global, addend) for a base that points into
    /// a global (patched at link time).
    pub fn encode(&self) -> (Vec<u8>, Option<(u32, GlobalId, u32)>) {
        let (base, reloc) = match self.base {
            DsdBase::None => (0, None),
            DsdBase::Abs(a) => (a as u16, None),
            DsdBase::Global(g, off) => (0, Some((field::BASE, g, off.max(0) as u32))),
        };
        let mut extents = [0; 4];
        let mut strides = [0; 4];
        for (i, e) in self.extents.iter().take(4).enumerate() {
            extents[i] = *e;
        }
        for (i, s) in self.strides.iter().take(4).enumerate() {
            strides[i] = *s;
        }
        let desc = Desc {
            kind: self.kind,
            flags: self.flags,
            queue: self.queue,
            color: self.color,
            base,
            length: self.length,
            stride: self.stride,
            ndims: self.extents.len() as u8,
            elem: self.elem_bytes as u8,
            extents,
            strides,
            fifo_tasks: self.fifo_tasks,
            zero: self.zero,
        };
        (desc.encode().to_vec(), reloc)
    }
}

impl DsdVal {
    /// The initial contents of a global holding this descriptor, with the relocation of its
    /// base address if it points into a global.
    pub(super) fn encode_init(&self) -> (Vec<u8>, Vec<crate::ir::Reloc>) {
        let (bytes, reloc) = self.encode();
        let relocs = reloc
            .map(|(offset, target, addend)| crate::ir::Reloc {
                offset,
                target,
                addend,
            })
            .into_iter()
            .collect();
        (bytes, relocs)
    }
}

impl crate::sema::Sema {
    /// The address of a constant global holding descriptor `d` (one global per distinct
    /// descriptor of the program).
    pub fn dsd_const_addr(
        &mut self,
        env: &mut crate::sema::eval::Env,
        d: &DsdVal,
        span: crate::source::Span,
    ) -> crate::sema::R<crate::ir::VReg> {
        let g = self.dsd_global(d, span, true)?;
        let dst = self.fb(env).reg();
        self.fb(env).emit(crate::ir::Inst::GlobalAddr {
            dst,
            global: g,
            offset: 0,
        });
        Ok(dst)
    }

    /// A global initialised with descriptor `d`: with `shared`, the program's one constant
    /// copy of it; otherwise a new global of its own (a call site's private copy).
    pub(crate) fn dsd_global(
        &mut self,
        d: &DsdVal,
        span: crate::source::Span,
        shared: bool,
    ) -> crate::sema::R<crate::ir::GlobalId> {
        let key = ConstKey::Dsd(d.clone());
        if shared && let Some(g) = self.dsd_consts.get(&key) {
            return Ok(*g);
        }
        let (bytes, relocs) = d.encode_init();
        let n = self.dsd_consts.len() + self.dsd_site_copies;
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
            place: crate::ir::GlobalPlace::Auto,
        });
        self.global_types.insert(g, d.ty);
        if shared {
            self.dsd_consts.insert(key, g);
        } else {
            self.dsd_site_copies += 1;
        }
        Ok(g)
    }
}
