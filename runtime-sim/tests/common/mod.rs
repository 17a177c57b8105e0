//! Hand-built images for the simulator tests: a tiny assembler and image builders.
#![allow(dead_code)]

use csl_arch::fabric::Arch;
use csl_arch::image::{
    ClassInfo, ExportKind, ExportName, FORMAT_VERSION, FuncInfo, Image, Meta, ProgramClass,
    SymbolExport, SymbolTarget, TaskBinding, TaskKind,
};
use csl_arch::isa::{BinOp, NumTy, Op, Reg, Width};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Builds one program class.
#[derive(Default)]
pub struct Asm {
    pub code: Vec<Op>,
    pub info: ClassInfo,
    pub data: Vec<u8>,
}

impl Asm {
    pub fn new(name: &str) -> Asm {
        Asm {
            info: ClassInfo {
                name: name.into(),
                ..ClassInfo::default()
            },
            ..Asm::default()
        }
    }

    /// Starts a function at the current position; returns its index.
    pub fn func(&mut self, name: &str, nregs: u16, nparams: u8, frame_bytes: u16) -> u32 {
        self.info.functions.push(FuncInfo {
            name: name.into(),
            entry: self.code.len() as u32,
            nregs,
            nparams,
            frame_bytes,
        });
        self.info.functions.len() as u32 - 1
    }

    /// Binds task id `id` to function `func` (local task).
    pub fn task(&mut self, id: u8, func: u32, active: bool, blocked: bool) {
        self.info.tasks.push(TaskBinding {
            id,
            kind: TaskKind::Local,
            func,
            args: csl_arch::image::WaveletArgs::None,
        });
        if active {
            self.info.initially_active |= 1 << id;
        }
        if blocked {
            self.info.initially_blocked |= 1 << id;
        }
    }

    pub fn export_func(&mut self, name: &str, func: u32) {
        self.info.symbols.push(SymbolExport {
            name: name.into(),
            target: SymbolTarget::Func { func },
        });
    }

    /// Exports a tensor whose pointer variable lives at `ptr_addr` and points to `addr`.
    pub fn export_tensor(&mut self, name: &str, ptr_addr: u32, addr: u16) {
        self.poke(ptr_addr as usize, &addr.to_le_bytes());
        self.info.symbols.push(SymbolExport {
            name: name.into(),
            target: SymbolTarget::Tensor { ptr_addr },
        });
    }

    /// Sets initial memory bytes.
    pub fn poke(&mut self, at: usize, bytes: &[u8]) {
        if self.data.len() < at + bytes.len() {
            self.data.resize(at + bytes.len(), 0);
        }
        self.data[at..at + bytes.len()].copy_from_slice(bytes);
    }

    pub fn here(&self) -> u32 {
        self.code.len() as u32
    }

    pub fn op(&mut self, op: Op) -> u32 {
        self.code.push(op);
        self.code.len() as u32 - 1
    }

    /// Points the jump or branch at `at` to `target`.
    pub fn patch(&mut self, at: u32, to: u32) {
        match &mut self.code[at as usize] {
            Op::Jump { target } | Op::BrTrue { target, .. } | Op::BrFalse { target, .. } => {
                *target = to
            }
            other => panic!("not a branch: {other}"),
        }
    }

    pub fn imm(&mut self, dst: u16, imm: u32) -> u32 {
        self.op(Op::Imm { dst: Reg(dst), imm })
    }
    pub fn bin(&mut self, op: BinOp, ty: NumTy, dst: u16, a: u16, b: u16) -> u32 {
        self.op(Op::Bin {
            op,
            ty,
            dst: Reg(dst),
            a: Reg(a),
            b: Reg(b),
        })
    }
    pub fn load(&mut self, w: Width, dst: u16, addr: u16) -> u32 {
        self.op(Op::Load {
            w,
            dst: Reg(dst),
            addr: Reg(addr),
        })
    }
    pub fn store(&mut self, w: Width, addr: u16, src: u16) -> u32 {
        self.op(Op::Store {
            w,
            addr: Reg(addr),
            src: Reg(src),
        })
    }
    /// `mem32[addr] = reg src` using scratch register `tmp` for the address.
    pub fn store_at(&mut self, w: Width, addr: u32, src: u16, tmp: u16) {
        self.imm(tmp, addr);
        self.store(w, tmp, src);
    }
    /// Stores to `HOST_CMD_UNBLOCK` (what `unblock_cmd_stream()` does), using `tmp`.
    pub fn unblock_cmd_stream(&mut self, tmp: u16) {
        self.imm(tmp, csl_arch::fabric::mmio::HOST_CMD_UNBLOCK);
        self.store(Width::W16, tmp, tmp);
    }
    pub fn ret_void(&mut self) -> u32 {
        self.op(Op::RetVoid {})
    }

    pub fn build(self) -> ProgramClass {
        ProgramClass {
            code: self.code,
            data: self.data,
            info: self.info,
        }
    }
}

/// An image of a `width` x `height` rectangle at fabric offset (4, 1).
pub fn image(
    width: u32,
    height: u32,
    classes: Vec<ProgramClass>,
    placement: Vec<u32>,
    exports: Vec<ExportName>,
) -> Image {
    let img = Image {
        meta: Meta {
            format_version: FORMAT_VERSION,
            arch: Arch::Wse2,
            fabric_width: width + 7,
            fabric_height: height + 2,
            offset_x: 4,
            offset_y: 1,
            width,
            height,
            memcpy: true,
            channels: 1,
            params: BTreeMap::new(),
        },
        placement,
        routes: vec![],
        exports,
        classes,
    };
    // Everything goes through the ELF encoding, as a compiled image would.
    Image::from_elf(&img.to_elf().expect("encode")).expect("decode")
}

/// A 1x1 image with one class.
pub fn single(class: ProgramClass) -> Image {
    image(1, 1, vec![class], vec![0], vec![])
}

pub fn export_func(name: &str, params: Vec<NumTy>) -> ExportName {
    ExportName {
        name: name.into(),
        kind: ExportKind::Func { params },
    }
}

pub fn export_tensor(name: &str, elem: NumTy, mutable: bool) -> ExportName {
    ExportName {
        name: name.into(),
        kind: ExportKind::Tensor { elem, mutable },
    }
}

/// Writes `bytes` to a fresh file in the temp directory.
pub fn temp_file(bytes: &[u8]) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("cslsim-test-{}-{n}.elf", std::process::id()));
    std::fs::write(&path, bytes).expect("write temp file");
    path
}

/// Reads a little-endian u32 of PE memory.
pub fn read32(mem: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(mem[at..at + 4].try_into().expect("in bounds"))
}

/// Reads a little-endian u16 of PE memory.
pub fn read16(mem: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(mem[at..at + 2].try_into().expect("in bounds"))
}
