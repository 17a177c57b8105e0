//! Hand-built images for the simulator tests: a tiny assembler and image builders.
#![allow(dead_code)]

use csl_arch::fabric::Arch;
use csl_arch::image::{
    ClassInfo, ExportKind, ExportName, FuncInfo, Image, Meta, ProgramClass, SymbolExport,
    SymbolTarget, TaskBinding, TaskKind,
};
use csl_arch::isa::{BinOp, NumTy, Op, Reg, Width};
use std::path::PathBuf;
pub mod tools;

use std::sync::atomic::{AtomicU64, Ordering};

/// Builds one program class.
#[derive(Clone, Default)]
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
    /// Activates task `id`, through register `tmp`.
    pub fn activate(&mut self, id: u32, tmp: u16) {
        self.imm(tmp, id);
        self.op(Op::Activate { id: Reg(tmp) });
    }
    /// `dst = func(args..args+nargs)`.
    pub fn call(&mut self, func: u32, args: u16, nargs: u8, dst: u16) -> u32 {
        self.op(Op::Call {
            func,
            args: Reg(args),
            nargs,
            dst: Reg(dst),
        })
    }

    pub fn build(self) -> ProgramClass {
        ProgramClass {
            code: self.code,
            data: self.data,
            info: self.info,
            lines: Default::default(),
        }
    }
}

/// A local task id valid on both archs (the fabric and tools tests start their classes with it).
pub const MAIN: u8 = 10;

/// A class whose local task [`MAIN`] (active at start, 16 registers) runs `body`.
pub fn main_task(name: &str, body: impl FnOnce(&mut Asm)) -> Asm {
    let mut a = Asm::new(name);
    let f = a.func("main", 16, 0, 0);
    body(&mut a);
    a.ret_void();
    a.task(MAIN, f, true, false);
    a
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
            memcpy: true,
            ..Meta::rect(Arch::Wse2, width, height)
        },
        placement,
        routes: Default::default(),
        exports,
        classes,
        tile_memory: Vec::new(),
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

// ---------------------------------------------------------------------------------------
// Fabric helpers: descriptors, DSD operations, routes, tasks bound to wavelets.

use csl_arch::dsd::{self, Desc, DsdKind, DsdOpcode, OperandKind};
use csl_arch::fabric::Direction;
use csl_arch::image::{ColorConfig, QueueBinding, WaveletArgs};

/// The settings of [`Asm::dsd_with`] besides the operands. [`Asm::dsd`] takes the
/// defaults: no cfg flags, no completion task, microthread 0, no index, scratch registers
/// from r0. The constructors and methods set what differs: `Dsd::regs(4).index(3)`,
/// `Dsd::on_ut(1).activate(13)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dsd {
    cfg: u8,
    done: u8,
    ut: u8,
    index: Option<u32>,
    r: u16,
}

impl Dsd {
    /// Scratch registers from `r` (constants go to `r..r+4`, the index to `r + 4`).
    pub fn regs(r: u16) -> Dsd {
        Dsd {
            r,
            ..Dsd::default()
        }
    }

    /// Asynchronous on microthread `ut`.
    pub fn on_ut(ut: u8) -> Dsd {
        Dsd {
            cfg: dsd::cfg::ASYNC,
            ut,
            ..Dsd::default()
        }
    }

    /// Adds `cfg` flags (`dsd::cfg::*`); `HAS_INDEX` is added when an index is set.
    pub fn cfg(self, cfg: u8) -> Dsd {
        Dsd {
            cfg: self.cfg | cfg,
            ..self
        }
    }

    /// The microthread.
    pub fn ut(self, ut: u8) -> Dsd {
        Dsd { ut, ..self }
    }

    /// Activates task `done` on completion.
    pub fn activate(self, done: u8) -> Dsd {
        Dsd {
            done,
            ..self.cfg(dsd::cfg::ON_DONE_ACTIVATE)
        }
    }

    /// Unblocks task `done` on completion.
    pub fn unblock(self, done: u8) -> Dsd {
        Dsd {
            done,
            ..self.cfg(dsd::cfg::ON_DONE_UNBLOCK)
        }
    }

    /// A wavelet index (`wavelet_index_offset` DSDs).
    pub fn index(self, index: u32) -> Dsd {
        Dsd {
            index: Some(index),
            ..self
        }
    }
}

/// An operand of [`Asm::dsd`].
#[derive(Clone, Copy, Debug)]
pub enum X {
    /// A descriptor at this byte address.
    D(u32),
    /// A scalar constant.
    S(u32),
    /// A pointer to a scalar at this byte address.
    P(u32),
    /// A scalar held in this register.
    R(u16),
}

impl Asm {
    /// Binds task id `id` to `func` as a data task.
    pub fn data_task(&mut self, id: u8, func: u32, args: WaveletArgs) {
        self.info.tasks.push(TaskBinding {
            id,
            kind: TaskKind::Data,
            func,
            args,
        });
    }

    /// Binds task id `id` to `func` as a control task.
    pub fn control_task(&mut self, id: u8, func: u32, args: WaveletArgs) {
        self.info.tasks.push(TaskBinding {
            id,
            kind: TaskKind::Control,
            func,
            args,
        });
    }

    /// WSE-3: binds input queue `q` to colour `c` (WSE-2: nothing to do).
    pub fn bind_input(&mut self, arch: Arch, q: u8, c: u8) {
        if arch == Arch::Wse3 {
            self.info
                .input_queues
                .push(QueueBinding { queue: q, color: c });
        }
    }

    /// WSE-3: binds output queue `q` to colour `c` (WSE-2: nothing to do).
    pub fn bind_output(&mut self, arch: Arch, q: u8, c: u8) {
        if arch == Arch::Wse3 {
            self.info
                .output_queues
                .push(QueueBinding { queue: q, color: c });
        }
    }

    /// Writes descriptor `d` at byte address `at`.
    pub fn desc(&mut self, at: u32, d: Desc) {
        self.poke(at as usize, &d.encode());
    }

    /// A `mem1d` descriptor at `at`.
    pub fn mem1d(&mut self, at: u32, base: u16, len: u16, stride: i16) {
        self.mem1d_flags(at, base, len, stride, 0);
    }

    /// A `mem1d` descriptor with flags (e.g. `WAVELET_INDEX_OFFSET`).
    pub fn mem1d_flags(&mut self, at: u32, base: u16, len: u16, stride: i16, flags: u8) {
        self.desc(
            at,
            Desc {
                flags,
                base,
                length: len,
                stride,
                ..Desc::default()
            },
        );
    }

    /// A `mem4d` descriptor; extents and strides innermost first.
    pub fn mem4d(&mut self, at: u32, base: u16, extents: &[u16], strides: &[i16]) {
        let mut d = Desc {
            kind: DsdKind::Mem4d,
            base,
            ndims: extents.len() as u8,
            ..Desc::default()
        };
        for (i, (&e, &s)) in extents.iter().zip(strides).enumerate() {
            d.extents[i] = e;
            d.strides[i] = s;
        }
        self.desc(at, d);
    }

    /// A fabric descriptor (WSE-2 reads colour `color`, WSE-3 queue `queue`).
    fn fabric(&mut self, at: u32, kind: DsdKind, color: u8, queue: u8, len: u16, flags: u8) {
        self.desc(
            at,
            Desc {
                kind,
                flags,
                queue,
                color,
                length: len,
                ..Desc::default()
            },
        );
    }

    /// A `fabin` descriptor (WSE-2 reads colour `color`, WSE-3 input queue `queue`).
    pub fn fabin(&mut self, at: u32, color: u8, queue: u8, len: u16, flags: u8) {
        self.fabric(at, DsdKind::FabIn, color, queue, len, flags);
    }

    /// A `fabout` descriptor.
    pub fn fabout(&mut self, at: u32, color: u8, queue: u8, len: u16, flags: u8) {
        self.fabric(at, DsdKind::FabOut, color, queue, len, flags);
    }

    /// A FIFO descriptor over `cap` elements of `elem` bytes at `base`; `push`/`pop` are
    /// the task ids to activate (`0xff`: none).
    pub fn fifo(&mut self, at: u32, base: u16, cap: u16, elem: u8, push: u8, pop: u8) {
        self.desc(
            at,
            Desc {
                kind: DsdKind::Fifo,
                base,
                length: cap,
                elem,
                fifo_tasks: (push, pop),
                ..Desc::default()
            },
        );
    }

    /// Emits `dsd_op op dst, srcs` with the [`Dsd`] defaults.
    pub fn dsd(&mut self, op: DsdOpcode, dst: X, srcs: &[X]) {
        self.dsd_with(op, dst, srcs, Dsd::default());
    }

    /// Emits `dsd_op op dst, srcs` with the settings of `opts`: constants go to registers
    /// `r..r+4` first (`r + 4` holds the index when `index` is given).
    pub fn dsd_with(&mut self, op: DsdOpcode, dst: X, srcs: &[X], opts: Dsd) {
        let Dsd {
            cfg,
            done,
            ut,
            index,
            r,
        } = opts;
        let mut kinds = [OperandKind::None; 4];
        let mut regs = [Reg(r); 4];
        for (i, x) in std::iter::once(&dst).chain(srcs).enumerate() {
            let tmp = r + i as u16;
            let (kind, reg) = match *x {
                X::D(a) => {
                    self.imm(tmp, a);
                    (OperandKind::Desc, Reg(tmp))
                }
                X::S(v) => {
                    self.imm(tmp, v);
                    (OperandKind::Scalar, Reg(tmp))
                }
                X::P(a) => {
                    self.imm(tmp, a);
                    (OperandKind::Ptr, Reg(tmp))
                }
                X::R(reg) => (OperandKind::Scalar, Reg(reg)),
            };
            kinds[i] = kind;
            regs[i] = reg;
        }
        let mut cfg = cfg;
        if let Some(ix) = index {
            self.imm(r + 4, ix);
            cfg |= dsd::cfg::HAS_INDEX;
        }
        self.op(Op::DsdOp {
            op,
            kinds: OperandKind::pack(kinds),
            cfg,
            done,
            ut,
            dst: regs[0],
            a: regs[1],
            b: regs[2],
            c: regs[3],
            idx: Reg(r + 4),
        });
    }

    /// Appends register `val` to a log: `count` (u32) at 0x100, entries (u32) from 0x104.
    /// Uses registers `t..t+3`.
    pub fn log(&mut self, val: u16, t: u16) {
        self.imm(t, LOG_COUNT);
        self.load(Width::W32, t + 1, t);
        self.imm(t + 2, 4);
        self.bin(BinOp::Mul, NumTy::U32, t + 3, t + 1, t + 2);
        self.imm(t + 2, LOG_COUNT + 4);
        self.bin(BinOp::Add, NumTy::U32, t + 3, t + 3, t + 2);
        self.store(Width::W32, t + 3, val);
        self.imm(t + 2, 1);
        self.bin(BinOp::Add, NumTy::U32, t + 1, t + 1, t + 2);
        self.store(Width::W32, t, t + 1);
    }
}

/// Address of the log count ([`Asm::log`]).
pub const LOG_COUNT: u32 = 0x100;

/// The log written by [`Asm::log`].
pub fn read_log(mem: &[u8]) -> Vec<u32> {
    let n = read32(mem, LOG_COUNT as usize) as usize;
    (0..n)
        .map(|i| read32(mem, LOG_COUNT as usize + 4 + 4 * i))
        .collect()
}

/// A route of colour `color` at `(x, y)`.
pub fn route(x: u32, y: u32, color: u8, rx: &[Direction], tx: &[Direction]) -> ColorConfig {
    ColorConfig::route(x, y, color, rx.to_vec(), tx.to_vec())
}

/// An image of `arch` with routes (through the ELF encoding).
pub fn fabric_image(
    arch: Arch,
    width: u32,
    height: u32,
    classes: Vec<ProgramClass>,
    placement: Vec<u32>,
    routes: Vec<ColorConfig>,
) -> Image {
    let mut img = image(width, height, classes, placement, vec![]);
    img.meta.arch = arch;
    img.routes = routes.into();
    Image::from_elf(&img.to_elf().expect("encode")).expect("decode")
}

/// Two PEs in a row: `sender` at (0, 0) sends on colour `c` to `recv` at (1, 0).
pub fn pair_image(arch: Arch, c: u8, sender: Asm, recv: Asm) -> Image {
    let routes = vec![
        route(0, 0, c, &[Direction::Ramp], &[Direction::East]),
        route(1, 0, c, &[Direction::West], &[Direction::Ramp]),
    ];
    fabric_image(
        arch,
        2,
        1,
        vec![sender.build(), recv.build()],
        vec![0, 1],
        routes,
    )
}

/// The data task id of wavelets on colour `c` through input queue `q`.
pub fn data_id(arch: Arch, c: u8, q: u8) -> u8 {
    match arch {
        Arch::Wse2 => c,
        Arch::Wse3 => q,
    }
}
