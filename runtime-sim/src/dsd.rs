//! The DSD engine: `dsd_op` operations over memory vectors, fabric queues and FIFOs.
//!
//! An operation reads its descriptors from PE memory when it is issued (a running
//! operation keeps that copy; only FIFO state is re-read, since FIFOs are shared). It
//! then processes **one element per cycle** (after [`SimParams::dsd_setup_cycles`]
//! (crate::SimParams) of setup): every source yields element `k`, the result goes to
//! destination element `k`. An element waits until every fabric input has a wavelet, the
//! fabric output queue has room, and (asynchronous operations) FIFOs are non-empty/non-full;
//! a synchronous operation on an empty (full) FIFO stops early instead.
//!
//! Element values are bit patterns zero-extended to 32 bits; 16-bit element types use the
//! low half of a wavelet. The arithmetic is in [`compute`].
//!
//! SIMD fabric modes (`simd_32`, `simd_64`, `simd_32_or_64`; 16-bit operations only) pack
//! two elements per wavelet, element `2j` in the low half of wavelet `j` and `2j + 1` in
//! its high half; lengths count elements. A `fabin` pops a wavelet at every even element
//! and keeps its high half for the odd one; a `fabout` sends a wavelet at every odd
//! element and at the last one (high half 0 when the length is odd). `simd_64` also
//! waits, at every fourth element, until both wavelets of the step have arrived.
//!
//! `control_transform`: a `fabin` with the flag takes a control wavelet at its head as
//! data, its top two bits set to [`CONTROL_TRANSFORM_MARK`] (the CE's control dispatch
//! leaves that buffer alone while the operation runs); a `fabout` with the flag sends
//! words carrying the mark as control wavelets, the mark cleared.

use crate::error::{FaultKind, WaitOn};
use crate::exec::{mem_read, mem_write};
use crate::mem::Mem;
use crate::pe::Pe;
use crate::ring::{Ring, Wavelet, wflags};
use crate::router::{RAMP, Router};
use csl_arch::dsd::{
    CONTROL_TRANSFORM_MARK, DESC_BYTES, DsdKind, DsdOpcode, Elem, OperandKind, UNBOUNDED_LENGTH,
    cfg, fab_zero, field, flags,
};
use csl_arch::fabric::{Arch, NUM_COLORS, PE_MEMORY_BYTES, control};
use csl_arch::isa::Width;
use half::f16;

/// Length of an operation that never ends by itself (`0x7fff`).
pub(crate) const UNBOUNDED: u32 = u32::MAX;

/// Where an operation was issued, for fault and deadlock reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    pub task: Option<u8>,
    pub func: u32,
    pub pc: u32,
}

/// What the engine needs to know about the machine.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Env {
    pub arch: Arch,
    /// RAMP latency in cycles.
    pub ramp: u64,
    /// Setup cycles of every operation.
    pub setup: u32,
    /// Extra cycles of a taken branch or jump, and of one that falls through
    /// ([`crate::SimParams::branch_taken_cycles`] minus one, and so on).
    pub branch_taken_extra: u32,
    pub branch_not_taken_extra: u32,
    /// Extra cycles after each element of `fmacs`.
    pub fmacs_extra: u32,
    /// Synchronous memory operations run ahead ([`step`]; on unless turned off with
    /// `Simulator::set_run_ahead`).
    pub run_ahead: bool,
}

/// One operand of a running operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Opnd {
    None,
    /// A value broadcast to every element.
    Scalar(u32),
    /// The byte address of one scalar.
    Ptr(u32),
    /// `mem1d`: element `k` at `base + k * step` (bytes); `save` is the descriptor's
    /// address when its base must move past the processed elements at completion.
    Mem {
        base: i64,
        step: i64,
        len: u32,
        save: Option<u32>,
    },
    /// `mem4d`: element at `base + off * eb`; `cnt` counts per dimension (innermost first).
    Mem4 {
        base: i64,
        eb: i64,
        nd: u8,
        ext: [u16; 4],
        strides: [i16; 4],
        cnt: [u16; 4],
        off: i64,
        len: u32,
    },
    /// `fabin`: CE input buffer `buf`; `simd` = the [`flags::SIMD_MASK`] bits, `hold` the
    /// high half of the last wavelet popped in a SIMD mode; `ct` = `control_transform`.
    FabIn {
        buf: u8,
        len: u32,
        simd: u8,
        ct: bool,
        hold: u32,
    },
    /// `fabout`: the colour's RAMP input at the router, through an output queue of
    /// `depth` wavelets; `hi` is the high half of 16-bit wavelets (`.index`).
    FabOut {
        color: u8,
        queue: u8,
        depth: u8,
        flags: u8,
        hi: u32,
        len: u32,
        /// [`fab_zero`] bits: memory sources cleared once read.
        zero: u8,
        /// SIMD modes: the element waiting for its partner (low half of the next wavelet).
        hold: u32,
    },
    /// A FIFO whose descriptor (and ring state) is at `desc`.
    Fifo {
        desc: u32,
        len: u32,
    },
}

impl Opnd {
    /// The operand's length for the operation-length rule (`None`: not a DSD).
    fn dsd_len(&self) -> Option<u32> {
        match *self {
            Opnd::Mem { len, .. }
            | Opnd::Mem4 { len, .. }
            | Opnd::FabIn { len, .. }
            | Opnd::FabOut { len, .. }
            | Opnd::Fifo { len, .. } => Some(len),
            Opnd::None | Opnd::Scalar(_) | Opnd::Ptr(_) => None,
        }
    }
}

/// A DSD operation in progress.
#[derive(Clone, Debug)]
pub(crate) struct DsdExec {
    pub op: DsdOpcode,
    pub cfg: u8,
    pub done: u8,
    pub dst: Opnd,
    pub src: [Opnd; 3],
    pub nsrc: usize,
    /// Elements to process ([`UNBOUNDED`]: until ended otherwise).
    pub total: u32,
    /// Elements processed.
    pub k: u32,
    /// Setup cycles left.
    pub setup: u32,
    /// Cycles left of the element just processed (operations slower than one element
    /// per cycle, e.g. `fmacs` under [`crate::SimParams::measured`]).
    pub busy: u32,
    /// Reduction accumulator (`*p` destination with a scalar first source).
    pub acc: Option<u32>,
    /// `addc16` carry.
    pub carry: u32,
    /// `dfilt`: the input buffer's count of passed control wavelets at issue.
    pub base_ctrl: u32,
    pub site: Site,
    /// What the last attempt waited for.
    pub waiting: Option<WaitOn>,
}

impl DsdExec {
    /// Whether a source is a fabric input (`fabin`).
    pub(crate) fn reads_fabric(&self) -> bool {
        self.src
            .iter()
            .take(self.nsrc)
            .any(|s| matches!(s, Opnd::FabIn { .. }))
    }

    /// A state to fill in (`issue` sets every field).
    fn blank() -> DsdExec {
        DsdExec {
            op: DsdOpcode::Mov32,
            cfg: 0,
            done: 0,
            dst: Opnd::None,
            src: [Opnd::None; 3],
            nsrc: 0,
            total: 0,
            k: 0,
            setup: 0,
            busy: 0,
            acc: None,
            carry: 0,
            base_ctrl: 0,
            site: Site {
                task: None,
                func: 0,
                pc: 0,
            },
            waiting: None,
        }
    }
}

/// Result of issuing a `dsd_op`.
pub(crate) enum Issued {
    /// A synchronous operation: it holds the task until done.
    Sync(Box<DsdExec>),
    /// Installed on its microthread.
    Async,
    /// The microthread is busy: the instruction must be retried.
    UtBusy,
}

/// The fields of a `dsd_op` instruction with its register values (`vals` = dst, a, b, c,
/// idx).
pub(crate) struct IssueArgs {
    pub op: DsdOpcode,
    pub kinds: u8,
    pub cfg: u8,
    pub done: u8,
    pub ut: u8,
    pub vals: [u32; 5],
    pub site: Site,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Dst,
    Src,
}

#[inline]
fn elem_mask(e: Elem) -> u32 {
    if e.bytes() == 2 { 0xffff } else { u32::MAX }
}

#[inline]
fn width(e: Elem) -> Width {
    if e.bytes() == 2 {
        Width::W16
    } else {
        Width::W32
    }
}

#[inline]
fn rd16(mem: &Mem, a: usize) -> u16 {
    mem.read(a as u32, Width::W16).unwrap_or(0) as u16
}

fn wr16(mem: &mut Mem, a: usize, v: u16) {
    mem.write_from(a, &v.to_le_bytes());
}

/// Checks that a descriptor at `addr` lies in memory.
pub(crate) fn check_desc(addr: u32) -> Result<usize, FaultKind> {
    if u64::from(addr) + u64::from(DESC_BYTES) > u64::from(PE_MEMORY_BYTES) {
        return Err(FaultKind::MemoryOutOfBounds {
            addr,
            width: DESC_BYTES,
        });
    }
    Ok(addr as usize)
}

#[inline]
fn len_of(l: u16) -> u32 {
    if l == UNBOUNDED_LENGTH {
        UNBOUNDED
    } else {
        u32::from(l)
    }
}

/// Reads the descriptor at `addr` as an operand of element type `elem`.
fn parse(
    pe: &Pe,
    out_queue_color: &[u8; 8],
    env: &Env,
    addr: u32,
    elem: Elem,
    role: Role,
    index: Option<u16>,
) -> Result<Opnd, FaultKind> {
    let a = check_desc(addr)?;
    // The whole descriptor at once (one page-aware read instead of one per field).
    // A fixed-size copy (not a `memcpy` call) when it lies in one page.
    let d: [u8; DESC_BYTES as usize] = pe.mem.array(a).unwrap_or([0; DESC_BYTES as usize]);
    let byte = |off: u32| d.get(off as usize).copied().unwrap_or(0);
    let rd = |off: usize| u16::from_le_bytes([byte(off as u32), byte(off as u32 + 1)]);
    let bad = |why| FaultKind::BadDescriptor { addr, why };
    let kind = DsdKind::from_u8(byte(field::KIND)).ok_or(bad("unknown descriptor kind"))?;
    let fl = byte(field::FLAGS);
    let queue = byte(field::QUEUE);
    let color = byte(field::COLOR);
    let base = i64::from(rd(field::BASE as usize));
    let length = rd(field::LENGTH as usize);
    let eb = i64::from(elem.bytes());
    let with_index = fl & flags::WAVELET_INDEX_OFFSET != 0;
    if matches!(kind, DsdKind::FabIn | DsdKind::FabOut)
        && fl & flags::SIMD_MASK != 0
        && elem.bytes() != 2
    {
        return Err(bad(
            "SIMD fabric modes (simd_32/simd_64) need an operation on 16-bit elements",
        ));
    }
    Ok(match kind {
        DsdKind::Mem1d => {
            let stride = i64::from(rd(field::STRIDE as usize) as i16);
            let idx = if with_index {
                index.map_or(0, |i| i64::from(i) * 2)
            } else {
                0
            };
            Opnd::Mem {
                base: base + idx,
                step: stride * eb,
                len: len_of(length),
                save: (fl & flags::SAVE_ADDRESS != 0).then_some(addr),
            }
        }
        DsdKind::Mem4d => {
            let nd = byte(field::NDIMS);
            if nd == 0 || nd > 4 {
                return Err(bad("a mem4d descriptor needs 1 to 4 dimensions"));
            }
            let mut ext = [0u16; 4];
            let mut strides = [0i16; 4];
            let mut len: u64 = 1;
            for i in 0..usize::from(nd) {
                ext[i] = rd(field::EXTENTS as usize + 2 * i);
                strides[i] = rd(field::STRIDES as usize + 2 * i) as i16;
                len *= u64::from(ext[i]);
            }
            let idx = if with_index {
                index.map_or(0, |i| i64::from(i) * 2)
            } else {
                0
            };
            Opnd::Mem4 {
                base: base + idx,
                eb,
                nd,
                ext,
                strides,
                cnt: [0; 4],
                off: 0,
                len: len.min(u64::from(UNBOUNDED - 1)) as u32,
            }
        }
        DsdKind::FabIn => {
            if role == Role::Dst {
                return Err(bad("a fabin descriptor cannot be a destination"));
            }
            let buf = match env.arch {
                Arch::Wse2 if color < NUM_COLORS => color,
                Arch::Wse3 if queue < 8 => queue,
                _ => return Err(bad("fabin colour or input queue out of range")),
            };
            Opnd::FabIn {
                buf,
                len: len_of(length),
                simd: fl & flags::SIMD_MASK,
                ct: fl & flags::CONTROL_TRANSFORM != 0,
                hold: 0,
            }
        }
        DsdKind::FabOut => {
            if role == Role::Src {
                return Err(bad("a fabout descriptor cannot be a source"));
            }
            let color = match env.arch {
                Arch::Wse2 => color,
                Arch::Wse3 => out_queue_color
                    .get(usize::from(queue))
                    .copied()
                    .filter(|&c| c != 0xff)
                    .unwrap_or(color),
            };
            if color >= NUM_COLORS {
                return Err(bad("fabout colour out of range"));
            }
            let depth = env.arch.output_queue_depth(queue).unwrap_or(2) as u8;
            let hi = match index {
                Some(i) if with_index && elem.bytes() == 2 => u32::from(i) << 16,
                _ => 0,
            };
            Opnd::FabOut {
                color,
                queue,
                depth,
                flags: fl,
                hi,
                len: len_of(length),
                zero: byte(field::FAB_ZERO),
                hold: 0,
            }
        }
        DsdKind::Fifo => {
            let off = if role == Role::Dst {
                field::FIFO_WRITE_LEN
            } else {
                field::FIFO_READ_LEN
            };
            Opnd::Fifo {
                desc: addr,
                len: len_of(rd(off as usize)),
            }
        }
    })
}

/// Faults a fabric operation (one with a `fabin` or `fabout` operand) that is longer than
/// one of its memory operands, instead of letting it run past that operand's end.
fn check_memory_lengths(dst: &Opnd, src: &[Opnd], total: u32) -> Result<(), FaultKind> {
    let all = std::iter::once(dst).chain(src);
    let fabric = all
        .clone()
        .any(|o| matches!(o, Opnd::FabIn { .. } | Opnd::FabOut { .. }));
    if !fabric || total == UNBOUNDED {
        return Ok(());
    }
    for (operand, o) in all.enumerate() {
        if let Opnd::Mem { len, .. } | Opnd::Mem4 { len, .. } = *o
            && len < total
        {
            return Err(FaultKind::DsdLengthMismatch {
                operand,
                len,
                total,
            });
        }
    }
    Ok(())
}

/// Starts a `dsd_op`: reads its operands and applies the operation-length rule.
pub(crate) fn issue(
    pe: &mut Pe,
    out_queue_color: &[u8; 8],
    env: &Env,
    args: &IssueArgs,
) -> Result<Issued, FaultKind> {
    let is_async = args.cfg & cfg::ASYNC != 0;
    let ut = args.ut & 7;
    if is_async && pe.ut_busy >> ut & 1 == 1 {
        return Ok(Issued::UtBusy);
    }
    let op = args.op;
    let kinds = OperandKind::unpack(args.kinds);
    let src_elems = op.src_elems();
    let nsrc = src_elems.len().min(3);
    let index = (args.cfg & cfg::HAS_INDEX != 0).then_some(args.vals[4] as u16);
    // The state is built in the box of a finished operation (no allocation per
    // operation), field by field: a whole `DsdExec` built on the stack and copied in cost
    // a 288-byte copy and store-forwarding stalls on every issue.
    let mut exec = pe
        .spare_ops
        .pop()
        .unwrap_or_else(|| Box::new(DsdExec::blank()));
    let e = &mut *exec;
    e.dst = match kinds[0] {
        OperandKind::Desc => parse(
            pe,
            out_queue_color,
            env,
            args.vals[0],
            op.dst_elem(),
            Role::Dst,
            index,
        )?,
        OperandKind::Ptr => Opnd::Ptr(args.vals[0]),
        // `dfilt` alone has no destination.
        OperandKind::None if op == DsdOpcode::Dfilt => Opnd::None,
        OperandKind::Scalar | OperandKind::None => {
            return Err(FaultKind::BadDsdOperands {
                why: "the destination must be a descriptor or a pointer",
            });
        }
    };
    e.src = [Opnd::None; 3];
    for i in 0..nsrc {
        let elem = src_elems[i];
        e.src[i] = match kinds[i + 1] {
            OperandKind::None => {
                return Err(FaultKind::BadDsdOperands {
                    why: "a source operand is missing",
                });
            }
            OperandKind::Desc => parse(
                pe,
                out_queue_color,
                env,
                args.vals[i + 1],
                elem,
                Role::Src,
                index,
            )?,
            OperandKind::Scalar => Opnd::Scalar(args.vals[i + 1] & elem_mask(elem)),
            OperandKind::Ptr => Opnd::Ptr(args.vals[i + 1]),
        };
    }
    let (dst, src) = (&e.dst, &e.src);
    // Operation length: the first DSD source with a non-zero length, else the
    // destination's length; 1 if no operand is a DSD (builtins.md §9).
    let any_dsd = dst.dsd_len().is_some() || src.iter().any(|s| s.dsd_len().is_some());
    let total = src
        .iter()
        .take(nsrc)
        .find_map(|s| s.dsd_len().filter(|&l| l != 0))
        .or(dst.dsd_len())
        .unwrap_or(if any_dsd { 0 } else { 1 });
    check_memory_lengths(dst, &src[..nsrc], total)?;
    // `*p` destination with a scalar (or pointer) first source: a reduction seeded by it.
    let acc = match (dst, &src[0]) {
        (Opnd::Ptr(_), Opnd::Scalar(v)) if nsrc >= 2 => Some(*v),
        (Opnd::Ptr(_), Opnd::Ptr(a)) if nsrc >= 2 => {
            Some(mem_read(&pe.mem, *a, width(src_elems[0]))?)
        }
        _ => None,
    };
    for s in src.iter().take(nsrc) {
        if takes_controls(s, args.cfg)
            && let Opnd::FabIn { buf, .. } = s
        {
            pe.term_bufs |= 1 << buf;
        }
    }
    e.base_ctrl = match src[0] {
        Opnd::FabIn { buf, .. } => pe.ctrl_seen.get(usize::from(buf)).copied().unwrap_or(0),
        _ => 0,
    };
    e.op = op;
    e.cfg = args.cfg;
    e.done = args.done;
    e.nsrc = nsrc;
    e.total = total;
    e.k = 0;
    e.setup = env.setup;
    e.busy = 0;
    e.acc = acc;
    e.carry = 0;
    e.site = args.site;
    e.waiting = None;
    if is_async {
        if let Some(slot) = pe.uts.get_mut(usize::from(ut)) {
            *slot = Some(exec);
            pe.ut_busy |= 1 << ut;
        }
        Ok(Issued::Async)
    } else {
        Ok(Issued::Sync(exec))
    }
}

/// Result of one cycle of an operation.
pub(crate) enum Step {
    /// It did something (setup or one element).
    Progress,
    /// It waits for another part of the fabric.
    Wait(WaitOn),
    /// A wavelet it needs arrives in a later cycle.
    Later,
    /// It has finished (after processing its last element, if any).
    Done,
}

/// The input queue id / colour of CE input buffer `buf`, for reports.
fn input_names(pe: &Pe, env: &Env, buf: u8) -> (Option<u8>, Option<u8>) {
    match env.arch {
        Arch::Wse2 => (Some(buf), None),
        Arch::Wse3 => (
            pe.color_inq.iter().position(|&b| b == buf).map(|c| c as u8),
            Some(buf),
        ),
    }
}

/// FIFO ring state read from its descriptor.
struct FifoState {
    a: usize,
    base: u32,
    cap: u32,
    eb: u32,
    read: u32,
    count: u32,
}

fn fifo_state(pe: &Pe, desc: u32, elem: Elem) -> Result<FifoState, FaultKind> {
    let a = check_desc(desc)?;
    let m = &pe.mem;
    let eb = match m.byte(a + field::ELEM as usize) {
        Some(b @ (2 | 4)) => u32::from(b),
        _ => elem.bytes(),
    };
    Ok(FifoState {
        a,
        base: u32::from(rd16(m, a + field::BASE as usize)),
        cap: u32::from(rd16(m, a + field::LENGTH as usize)),
        eb,
        read: u32::from(rd16(m, a + field::FIFO_READ as usize)),
        count: u32::from(rd16(m, a + field::FIFO_COUNT as usize)),
    })
}

fn fifo_activate(pe: &mut Pe, a: usize, off: u32) {
    if let Some(id) = pe.mem.byte(a + off as usize)
        && id < 64
    {
        pe.active |= 1 << id;
    }
}

fn fifo_pop(pe: &mut Pe, desc: u32, elem: Elem) -> Result<u32, FaultKind> {
    let st = fifo_state(pe, desc, elem)?;
    if st.count == 0 || st.cap == 0 {
        return Ok(0);
    }
    let w = if st.eb == 2 { Width::W16 } else { Width::W32 };
    let v = mem_read(&pe.mem, st.base + (st.read % st.cap) * st.eb, w)?;
    wr16(
        &mut pe.mem,
        st.a + field::FIFO_READ as usize,
        ((st.read + 1) % st.cap) as u16,
    );
    wr16(
        &mut pe.mem,
        st.a + field::FIFO_COUNT as usize,
        (st.count - 1) as u16,
    );
    if st.count == st.cap {
        fifo_activate(pe, st.a, field::FIFO_ACTIVATE_POP);
    }
    Ok(v & elem_mask(elem))
}

fn fifo_push(pe: &mut Pe, desc: u32, elem: Elem, v: u32) -> Result<(), FaultKind> {
    let st = fifo_state(pe, desc, elem)?;
    if st.count >= st.cap {
        return Ok(());
    }
    let w = if st.eb == 2 { Width::W16 } else { Width::W32 };
    mem_write(
        &mut pe.mem,
        st.base + ((st.read + st.count) % st.cap) * st.eb,
        w,
        v,
    )?;
    wr16(
        &mut pe.mem,
        st.a + field::FIFO_COUNT as usize,
        (st.count + 1) as u16,
    );
    if st.count == 0 {
        fifo_activate(pe, st.a, field::FIFO_ACTIVATE_PUSH);
    }
    Ok(())
}

/// A memory address computed in `i64`, checked against PE memory.
#[inline]
fn checked(a: i64, w: Width) -> Result<u32, FaultKind> {
    if a < 0 || a + i64::from(w.bytes()) > i64::from(PE_MEMORY_BYTES) {
        return Err(FaultKind::MemoryOutOfBounds {
            addr: a as u32,
            width: w.bytes(),
        });
    }
    Ok(a as u32)
}

/// The memory address of element `k` of a memory operand.
#[inline]
fn mem_addr(o: &Opnd, k: u32) -> Option<i64> {
    match *o {
        Opnd::Mem { base, step, .. } => Some(base + i64::from(k) * step),
        Opnd::Mem4 { base, eb, off, .. } => Some(base + off * eb),
        _ => None,
    }
}

/// Advances a `mem4d` operand's counters past one element.
fn advance4(o: &mut Opnd) {
    if let Opnd::Mem4 {
        nd,
        ext,
        strides,
        cnt,
        off,
        ..
    } = o
    {
        for d in 0..usize::from(*nd) {
            cnt[d] = cnt[d].wrapping_add(1);
            if cnt[d] < ext[d] {
                *off += i64::from(strides[d]);
                return;
            }
            cnt[d] = 0;
        }
    }
}

/// Runs one cycle of `op` on `pe`. `wake_router` is set when the router of the PE must
/// look at its buffers again (the op pushed to an output queue or freed an input slot).
///
/// **Running ahead** (ours; invisible to the program): a synchronous operation whose
/// operands are all memory, scalars or pointers, on a PE with no microthread running,
/// cannot be observed by anything in the fabric until it completes: the task waits for
/// it, no other operation can start on the PE, and routers and other PEs never read PE
/// memory. Once such an operation has processed an element in a cycle, [`run_ahead`]
/// (called by the CE) processes the following elements but the last at once (in order,
/// stopping before one that would fault), and the PE stalls one cycle per element so
/// processed (`Pe::stall`, counted as busy cycles as the elements were), so its
/// completion, the busy and stalled cycles and every later event keep their cycles; only
/// `dsd_elements` counts the elements early. The elements' memory is written
/// early, which only the host can notice, and only where it reads a PE's memory while
/// an operation runs (it never does for a copy it issues: copies wait until the PE is
/// quiescent, except past the `MEMCPY_WAIT_CYCLES` time-out). It keeps the memory a
/// long operation streams through in cache instead of fetching it again every cycle
/// (large rectangles).
pub(crate) fn step(
    op: &mut DsdExec,
    pe: &mut Pe,
    router: &mut Router,
    env: &Env,
    now: u64,
    wake_router: &mut bool,
) -> Result<Step, FaultKind> {
    if op.setup > 0 {
        op.setup -= 1;
        return Ok(Step::Progress);
    }
    if op.busy > 0 {
        op.busy -= 1;
        let finished = op.total != UNBOUNDED && op.k >= op.total;
        return Ok(if op.busy == 0 && finished {
            Step::Done
        } else {
            Step::Progress
        });
    }
    if op.op == DsdOpcode::Dfilt {
        return dfilt_step(op, pe, env, now, wake_router);
    }
    if op.total != UNBOUNDED && op.k >= op.total {
        return Ok(Step::Done);
    }
    let is_async = op.cfg & cfg::ASYNC != 0;
    let src_elems = op.op.src_elems();
    let k = op.k;
    let last = op.total != UNBOUNDED && k + 1 >= op.total;
    // Can element k be processed now?
    #[allow(clippy::needless_range_loop)]
    for i in 0..op.nsrc {
        match op.src[i] {
            Opnd::FabIn { buf, simd, ct, .. } => {
                if !pops_at(simd, k) {
                    continue;
                }
                // Fabric sources on the same buffer that pop a wavelet at this element.
                let same = |s: &Opnd| matches!(s, Opnd::FabIn { buf: b, simd: m, .. } if *b == buf && pops_at(*m, k));
                let nth = op.src[..i].iter().filter(|s| same(s)).count();
                let (color, queue) = input_names(pe, env, buf);
                let ring = pe.inq.get(usize::from(buf));
                match ring.and_then(|r| r.nth(nth)) {
                    None => return Ok(Step::Wait(WaitOn::InputEmpty { color, queue })),
                    Some(w) if w.ready > now => return Ok(Step::Later),
                    Some(w) if w.is_ctrl() && !ct => {
                        if nth == 0 && op.cfg & cfg::ON_CONTROL_TERMINATE != 0 {
                            pe.ce_pop(usize::from(buf), now);
                            *wake_router = true;
                            return Ok(Step::Done);
                        }
                        return Ok(Step::Wait(WaitOn::ControlAtHead { color, queue }));
                    }
                    Some(_) => {}
                }
                // `simd_64`: a step of four elements starts once both of its wavelets
                // have arrived.
                let rest = op.total.saturating_sub(k);
                if simd == flags::SIMD_64 && k.is_multiple_of(4) && rest > 2 {
                    let per_step = op.src[..op.nsrc].iter().filter(|s| same(s)).count();
                    match ring.and_then(|r| r.nth(nth + per_step)) {
                        None => return Ok(Step::Wait(WaitOn::InputEmpty { color, queue })),
                        Some(w) if w.ready > now => return Ok(Step::Later),
                        Some(_) => {}
                    }
                }
            }
            Opnd::Fifo { desc, .. } if fifo_state(pe, desc, src_elems[i])?.count == 0 => {
                return Ok(if is_async {
                    Step::Wait(WaitOn::FifoEmpty { fifo: desc })
                } else {
                    Step::Done
                });
            }
            _ => {}
        }
    }
    match op.dst {
        Opnd::FabOut {
            color,
            queue,
            depth,
            flags: fl,
            ..
        } if sends_at(fl & flags::SIMD_MASK, k, last) => {
            // (Usually configured: `ensure_color` creates the state only when needed.)
            let cs = match router.slot.get(usize::from(color)) {
                Some(&s) if s != crate::router::NO_SLOT => router.color(color),
                _ => router.ensure_color(color).map(|c| &*c),
            };
            let room = cs
                .and_then(|cs| cs.rings.get(RAMP))
                .is_some_and(|r: &Ring| r.has_room(usize::from(depth), now));
            if !room {
                return Ok(Step::Wait(WaitOn::OutputFull { color, queue }));
            }
        }
        Opnd::Fifo { desc, .. } => {
            let st = fifo_state(pe, desc, op.op.dst_elem())?;
            if st.count >= st.cap {
                return Ok(if is_async {
                    Step::Wait(WaitOn::FifoFull { fifo: desc })
                } else {
                    Step::Done
                });
            }
        }
        _ => {}
    }
    // Read the sources.
    let mut v = [0u32; 3];
    let first = usize::from(op.acc.is_some());
    for i in first..op.nsrc {
        let e = src_elems[i];
        let w = width(e);
        v[i] = match op.src[i] {
            Opnd::None => 0,
            Opnd::Scalar(x) => x,
            Opnd::Ptr(a) => mem_read(&pe.mem, a, w)?,
            Opnd::Mem { .. } | Opnd::Mem4 { .. } => {
                let a = mem_addr(&op.src[i], op.k).unwrap_or(-1);
                mem_read(&pe.mem, checked(a, w)?, w)?
            }
            Opnd::FabIn { simd, hold, .. } if !pops_at(simd, k) => hold,
            Opnd::FabIn { buf, simd, ct, .. } => {
                *wake_router = true;
                let data = pe.ce_pop(usize::from(buf), now).map_or(0, |w| {
                    if ct && w.is_ctrl() {
                        w.data | CONTROL_TRANSFORM_MARK
                    } else {
                        w.data
                    }
                });
                if simd != 0 {
                    if let Opnd::FabIn { hold, .. } = &mut op.src[i] {
                        *hold = data >> 16;
                    }
                    data & 0xffff
                } else {
                    data & elem_mask(e)
                }
            }
            Opnd::FabOut { .. } => 0,
            Opnd::Fifo { desc, .. } => fifo_pop(pe, desc, e)?,
        };
    }
    // `fabout .zero`: the named memory sources are cleared as their elements are sent.
    if let Opnd::FabOut { zero, .. } = op.dst
        && zero != 0
    {
        for (i, bit) in [(0, fab_zero::FIRST), (1, fab_zero::SECOND)] {
            if i < first || i >= op.nsrc || zero & bit == 0 {
                continue;
            }
            if let Opnd::Mem { .. } | Opnd::Mem4 { .. } = op.src[i] {
                let w = width(src_elems[i]);
                let a = mem_addr(&op.src[i], op.k).unwrap_or(-1);
                mem_write(&mut pe.mem, checked(a, w)?, w, 0)?;
            }
        }
    }
    if let Some(acc) = op.acc {
        v[0] = acc;
    }
    let r = compute(op.op, v[0], v[1], v[2], &mut op.carry);
    if op.acc.is_some() {
        op.acc = Some(r);
    }
    // Write the destination.
    let de = op.op.dst_elem();
    let dw = width(de);
    match op.dst {
        Opnd::None | Opnd::Scalar(_) | Opnd::FabIn { .. } => {}
        Opnd::Ptr(a) => mem_write(&mut pe.mem, a, dw, r)?,
        Opnd::Mem { .. } | Opnd::Mem4 { .. } => {
            let a = mem_addr(&op.dst, op.k).unwrap_or(-1);
            mem_write(&mut pe.mem, checked(a, dw)?, dw, r)?;
        }
        Opnd::FabOut { flags: fl, .. } if !sends_at(fl & flags::SIMD_MASK, k, last) => {
            if let Opnd::FabOut { hold, .. } = &mut op.dst {
                *hold = r & 0xffff;
            }
        }
        Opnd::FabOut {
            color,
            flags: fl,
            hi,
            hold,
            ..
        } => {
            let mut data = if fl & flags::SIMD_MASK != 0 {
                // The partner of an odd element, or an odd length's last element alone.
                if k % 2 == 1 {
                    hold | (r & 0xffff) << 16
                } else {
                    r & 0xffff
                }
            } else if de.bytes() == 2 {
                (r & 0xffff) | hi
            } else {
                r
            };
            let mut wf = 0;
            if fl & flags::CONTROL != 0 {
                wf |= wflags::CTRL;
            }
            if fl & flags::CONTROL_TRANSFORM != 0
                && data & CONTROL_TRANSFORM_MARK == CONTROL_TRANSFORM_MARK
            {
                data &= !CONTROL_TRANSFORM_MARK;
                wf |= wflags::CTRL;
            }
            if last && fl & flags::ADVANCE_SWITCH != 0 {
                if wf & wflags::CTRL != 0 && control::command(data, 0) & 3 != control::NOP {
                    return Err(FaultKind::FlipOnControl { color, word: data });
                }
                wf |= wflags::ADVANCE;
            }
            if router.color(color).is_none() {
                router.ensure_color(color);
            }
            router.push(
                color,
                RAMP,
                Wavelet {
                    data,
                    flags: wf,
                    ready: now + env.ramp,
                },
            );
            *wake_router = true;
        }
        Opnd::Fifo { desc, .. } => fifo_push(pe, desc, de, r)?,
    }
    advance4(&mut op.dst);
    for s in op.src.iter_mut() {
        advance4(s);
    }
    op.k = op.k.wrapping_add(1);
    pe.dsd_elements += 1;
    if op.op == DsdOpcode::Fmacs && env.fmacs_extra > 0 {
        // The element occupies the engine for the extra cycles too; the last one ends
        // the operation when they are over.
        op.busy = env.fmacs_extra;
        return Ok(Step::Progress);
    }
    Ok(if last { Step::Done } else { Step::Progress })
}

/// After `op` processed an element this cycle: if it may run ahead (see [`step`]),
/// processes every element left but the last, and stalls the PE one cycle for each (busy
/// cycles, like the element it stands for); the last element is processed in its own
/// cycle (it completes the operation). Returns whether the router must be woken.
pub(crate) fn run_ahead(
    op: &mut DsdExec,
    pe: &mut Pe,
    router: &mut Router,
    env: &Env,
    now: u64,
) -> bool {
    let mut wake = false;
    if op.setup != 0 || op.busy != 0 || !runs_ahead(op, pe, env) {
        return wake;
    }
    while op.k + 1 < op.total {
        if step(op, pe, router, env, now, &mut wake).is_err() {
            // Left for its own cycle, where it faults.
            break;
        }
        pe.stall += 1;
    }
    wake
}

/// Whether `op` may run ahead (see [`step`]).
#[inline]
fn runs_ahead(op: &DsdExec, pe: &Pe, env: &Env) -> bool {
    let memory = |o: &Opnd| {
        matches!(
            o,
            Opnd::None | Opnd::Scalar(_) | Opnd::Ptr(_) | Opnd::Mem { .. } | Opnd::Mem4 { .. }
        )
    };
    env.run_ahead
        && op.cfg & cfg::ASYNC == 0
        && pe.ut_busy == 0
        && op.total != UNBOUNDED
        && op.op != DsdOpcode::Dfilt
        && !(op.op == DsdOpcode::Fmacs && env.fmacs_extra > 0)
        && memory(&op.dst)
        && op.src.iter().take(op.nsrc).all(memory)
}

/// One cycle of `@dfilt`: control wavelets reaching the head of its input buffer are
/// taken by the CE's control dispatch as usual (and counted there); data wavelets at the
/// head are dropped. Done once `total` control wavelets have passed since the operation
/// was issued.
fn dfilt_step(
    op: &mut DsdExec,
    pe: &mut Pe,
    env: &Env,
    now: u64,
    wake_router: &mut bool,
) -> Result<Step, FaultKind> {
    let Opnd::FabIn { buf, .. } = op.src[0] else {
        return Ok(Step::Done);
    };
    let b = usize::from(buf);
    op.k = pe
        .ctrl_seen
        .get(b)
        .copied()
        .unwrap_or(0)
        .wrapping_sub(op.base_ctrl);
    if op.total != UNBOUNDED && op.k >= op.total {
        return Ok(Step::Done);
    }
    let (color, queue) = input_names(pe, env, buf);
    let head = pe
        .inq
        .get(b)
        .and_then(|r| r.front())
        .map(|w| (w.ready, w.is_ctrl()));
    Ok(match head {
        None => Step::Wait(WaitOn::InputEmpty { color, queue }),
        Some((ready, _)) if ready > now => Step::Later,
        Some((_, true)) => Step::Wait(WaitOn::ControlAtHead { color, queue }),
        Some((_, false)) => {
            pe.ce_pop(b, now);
            *wake_router = true;
            Step::Progress
        }
    })
}

/// Fires an operation's completion actions.
pub(crate) fn complete(op: &DsdExec, pe: &mut Pe) {
    // `save_address`: the descriptor's base moves past what the operation processed.
    for o in std::iter::once(&op.dst).chain(op.src.iter().take(op.nsrc)) {
        if let Opnd::Mem {
            base,
            step,
            save: Some(desc),
            ..
        } = *o
        {
            let new = base + i64::from(op.k) * step;
            if let Ok(a) = check_desc(desc) {
                wr16(&mut pe.mem, a + field::BASE as usize, new as u16);
            }
        }
    }
    let bit = 1u64 << (op.done & 63);
    if op.cfg & cfg::ON_DONE_ACTIVATE != 0 {
        pe.active |= bit;
    }
    if op.cfg & cfg::ON_DONE_UNBLOCK != 0 {
        pe.blocked &= !bit;
    }
    for s in op.src.iter().take(op.nsrc) {
        if takes_controls(s, op.cfg)
            && let Opnd::FabIn { buf, .. } = s
        {
            pe.term_bufs &= !(1 << buf);
        }
    }
}

/// Whether a running operation, not the CE's control dispatch, takes the control wavelets
/// of this operand's input buffer: `ON_CONTROL_TERMINATE`, or a `control_transform` fabin.
fn takes_controls(o: &Opnd, op_cfg: u8) -> bool {
    matches!(o, Opnd::FabIn { ct, .. } if *ct || op_cfg & cfg::ON_CONTROL_TERMINATE != 0)
}

/// Whether element `k` of a fabric operand in SIMD mode `simd` moves a wavelet: every
/// element without SIMD, every even one with (a `fabin` pops the wavelet of elements `k`
/// and `k + 1`).
#[inline]
fn pops_at(simd: u8, k: u32) -> bool {
    simd == 0 || k.is_multiple_of(2)
}

/// Whether element `k` of a `fabout` in SIMD mode `simd` sends a wavelet: every element
/// without SIMD; with, every odd one (completing a pair) and the operation's last.
#[inline]
fn sends_at(simd: u8, k: u32, last: bool) -> bool {
    simd == 0 || k % 2 == 1 || last
}

#[inline]
fn h(x: u32) -> f64 {
    f16::from_bits(x as u16).to_f64()
}
#[inline]
fn to_h(x: f64) -> u32 {
    u32::from(csl_arch::alu::f16_from_f64(x))
}
#[inline]
fn s(x: u32) -> f64 {
    f64::from(f32::from_bits(x))
}
#[inline]
fn to_s(x: f64) -> u32 {
    (x as f32).to_bits()
}

/// Float to 16-bit integer: round to nearest even, saturate, NaN to 0.
fn to_i16(x: f64) -> u32 {
    if x.is_nan() {
        return 0;
    }
    u32::from(x.round_ties_even().clamp(-32768.0, 32767.0) as i16 as u16)
}

/// `x` scaled by a power of two so that its magnitude is in [1, 2) (0, infinities and
/// NaN unchanged). Our reading of the undocumented `fnorm*`.
fn normalize(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    // f16 and f32 values are normal as f64: replace the exponent with the bias.
    let bits = x.to_bits();
    f64::from_bits((bits & !(0x7ff << 52)) | (1023 << 52))
}

/// The value of one element: `a`, `b`, `c` are the sources' bit patterns (16-bit types in
/// the low half). 16-bit integer ops wrap; f16 ops compute in f64 (exact for `+ - *` of
/// two halves) and round once.
pub(crate) fn compute(op: DsdOpcode, a: u32, b: u32, c: u32, carry: &mut u32) -> u32 {
    use DsdOpcode::*;
    let (a16, b16) = (a & 0xffff, b & 0xffff);
    match op {
        Add16 => a16.wrapping_add(b16) & 0xffff,
        Addc16 => {
            let sum = a16 + b16 + *carry;
            *carry = sum >> 16;
            sum & 0xffff
        }
        Sub16 => a16.wrapping_sub(b16) & 0xffff,
        And16 => a16 & b16,
        Or16 => a16 | b16,
        Xor16 => a16 ^ b16,
        Sll16 => {
            if b16 >= 16 {
                0
            } else {
                (a16 << b16) & 0xffff
            }
        }
        Slr16 => {
            if b16 >= 16 {
                0
            } else {
                a16 >> b16
            }
        }
        Sar16 => u32::from(((a16 as u16 as i16) >> b16.min(15)) as u16),
        Clz => (a16 as u16).leading_zeros(),
        Ctz => (a16 as u16).trailing_zeros(),
        Popcnt => a16.count_ones(),
        Mov16 | Fmovh => a16,
        Mov32 | Fmovs => a,
        Fabsh => a16 & 0x7fff,
        Fabss => a & 0x7fff_ffff,
        Fnegh => a16 ^ 0x8000,
        Fnegs => a ^ 0x8000_0000,
        Faddh => to_h(h(a) + h(b)),
        Fadds => (f32::from_bits(a) + f32::from_bits(b)).to_bits(),
        Faddhs => to_s(h(a) + h(b)),
        Fsubh => to_h(h(a) - h(b)),
        Fsubs => (f32::from_bits(a) - f32::from_bits(b)).to_bits(),
        Fmulh => to_h(h(a) * h(b)),
        Fmuls => (f32::from_bits(a) * f32::from_bits(b)).to_bits(),
        Fmaxh => to_h(h(a).max(h(b))),
        Fmaxs => f32::from_bits(a).max(f32::from_bits(b)).to_bits(),
        Fmach => to_h(h(b).mul_add(h(c), h(a))),
        Fmacs => f32::from_bits(b)
            .mul_add(f32::from_bits(c), f32::from_bits(a))
            .to_bits(),
        Fmachs => to_s(s(a) + h(b) * h(c)),
        Fh2s => to_s(h(a)),
        Fs2h => u32::from(f16::from_f32(f32::from_bits(a)).to_bits()),
        Fh2xp16 => to_i16(h(a)),
        Fs2xp16 => to_i16(s(a)),
        Xp162fh => to_h(f64::from(a16 as u16 as i16)),
        Xp162fs => to_s(f64::from(a16 as u16 as i16)),
        Fnormh => to_h(normalize(h(a))),
        Fnorms => to_s(normalize(s(a))),
        Fscaleh => to_h(h(a) * 2f64.powi(i32::from(b16 as u16 as i16))),
        Fscales => to_s(s(a) * 2f64.powi(i32::from(b16 as u16 as i16))),
        // `dfilt` never reaches element arithmetic (see `dfilt_step`).
        Dfilt => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hb(x: f32) -> u32 {
        u32::from(f16::from_f32(x).to_bits())
    }

    /// `fmach` rounds the exact a + b*c once to f16: this sum lies just above the tie
    /// between 1.8740234375 and 1.875, so close that rounding to f32 first would make it
    /// the tie and then round it to the even neighbour, 1.875 (worked out exactly with
    /// rationals).
    #[test]
    #[allow(clippy::excessive_precision)] // the values are exact f16 values, written out
    fn fmach_rounds_once() {
        let mut k = 0;
        let (a, b, c) = (6.097555160522461e-05f32, 1.0341796875f32, 1.8125f32);
        assert_eq!(f32::from(f16::from_f32(a)), a, "a is an f16");
        let r = compute(DsdOpcode::Fmach, hb(a), hb(b), hb(c), &mut k);
        assert_eq!(f16::from_bits(r as u16).to_f32(), 1.8740234375);
    }

    #[test]
    fn element_arithmetic() {
        let mut c = 0;
        assert_eq!(compute(DsdOpcode::Add16, 0xffff, 2, 0, &mut c), 1);
        assert_eq!(compute(DsdOpcode::Addc16, 0xffff, 2, 0, &mut c), 1);
        assert_eq!(c, 1);
        assert_eq!(compute(DsdOpcode::Addc16, 1, 1, 0, &mut c), 3);
        assert_eq!(compute(DsdOpcode::Sub16, 0, 1, 0, &mut c), 0xffff);
        assert_eq!(compute(DsdOpcode::Sar16, 0x8000, 15, 0, &mut c), 0xffff);
        assert_eq!(compute(DsdOpcode::Slr16, 0x8000, 15, 0, &mut c), 1);
        assert_eq!(compute(DsdOpcode::Sll16, 1, 16, 0, &mut c), 0);
        assert_eq!(compute(DsdOpcode::Clz, 1, 0, 0, &mut c), 15);
        assert_eq!(compute(DsdOpcode::Popcnt, 0xf0f0, 0, 0, &mut c), 8);
        assert_eq!(
            compute(DsdOpcode::Faddh, hb(1.5), hb(2.0), 0, &mut c),
            hb(3.5)
        );
        assert_eq!(
            compute(DsdOpcode::Fmach, hb(1.0), hb(2.0), hb(3.0), &mut c),
            hb(7.0)
        );
        assert_eq!(
            compute(
                DsdOpcode::Fmacs,
                1f32.to_bits(),
                2f32.to_bits(),
                3f32.to_bits(),
                &mut c
            ),
            7f32.to_bits()
        );
        assert_eq!(compute(DsdOpcode::Fh2xp16, hb(2.5), 0, 0, &mut c), 2);
        assert_eq!(
            compute(DsdOpcode::Fs2xp16, 1e9f32.to_bits(), 0, 0, &mut c),
            0x7fff
        );
        assert_eq!(
            compute(DsdOpcode::Xp162fs, 0xffff, 0, 0, &mut c),
            (-1f32).to_bits()
        );
        assert_eq!(
            compute(DsdOpcode::Fnorms, 12f32.to_bits(), 0, 0, &mut c),
            1.5f32.to_bits()
        );
        assert_eq!(
            compute(DsdOpcode::Fscales, 3f32.to_bits(), 0xfffe, 0, &mut c),
            0.75f32.to_bits()
        );
        assert_eq!(
            compute(
                DsdOpcode::Fmaxs,
                (-1f32).to_bits(),
                2f32.to_bits(),
                0,
                &mut c
            ),
            2f32.to_bits()
        );
    }
}
