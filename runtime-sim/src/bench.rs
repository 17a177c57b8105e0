//! Synthetic workloads, built by hand (no compiler): the `simbench` benchmark image and
//! its expected results, also used by the tests.
//!
//! [`busy_grid`]: every PE of a `w`×`h` rectangle runs a loop of scalar arithmetic and sends
//! one wavelet east per iteration with a synchronous `fabout` DSD operation; every PE but
//! those of the westmost column receives its west neighbour's wavelets with a data task
//! that adds them to a sum. Colours alternate by column (colour `x % 2` leaves column
//! `x`), so every link carries traffic on one colour. The loop runs in chunks of
//! [`CHUNK`] iterations; between chunks the task re-activates itself, which lets the data
//! task (high priority, set through the `TASK_PRIORITY` register) drain what arrived.

use csl_arch::dsd::{DsdKind, DsdOpcode, OperandKind};
use csl_arch::fabric::{Arch, Direction, mmio};
use csl_arch::image::{
    ClassInfo, ColorConfig, FuncInfo, Image, Meta, ProgramClass, QueueBinding, TaskBinding,
    TaskKind, WaveletArgs,
};
use csl_arch::isa::{BinOp, NumTy, Op, Reg, Width};

/// Where each PE keeps the sum of what it received (u32).
pub const SUM_ADDR: u32 = 0x80;
/// Iterations per activation of the main task.
pub const CHUNK: u32 = 4;
const V_ADDR: u32 = 0x84;
const CHUNKS_ADDR: u32 = 0x88;
const DESC: u32 = 0x40;
const MAIN_TASK: u8 = 10;
/// WSE-3: the input queue (and data task id) of the received colour.
const RECV_QUEUE: u8 = 2;
const A: u32 = 1_103_515_245;
const C: u32 = 12_345;
/// Fabric column of the rectangle's west edge.
const OFFSET_X: u32 = 4;

/// One iteration of the loop: the new state and the value sent, for fabric column `col`.
fn iteration(v: u32, col: u32) -> (u32, u32) {
    let v = v.wrapping_mul(A).wrapping_add(C).wrapping_add(col);
    let t = (v >> 7) ^ v;
    let t = t.wrapping_mul(C).wrapping_add(A) ^ col;
    let t = t.wrapping_add(t << 3);
    (v, t)
}

/// Iterations actually run for `iters` requested (rounded up to a multiple of [`CHUNK`]).
pub fn rounded_iters(iters: u32) -> u32 {
    iters.div_ceil(CHUNK) * CHUNK
}

/// The sum the PE in rectangle column `x` ends with.
pub fn busy_grid_expected(x: u32, iters: u32) -> u32 {
    if x == 0 {
        return 0;
    }
    let col = x - 1 + OFFSET_X;
    let mut v = 0u32;
    let mut sum = 0u32;
    for _ in 0..rounded_iters(iters) {
        let (nv, t) = iteration(v, col);
        v = nv;
        sum = sum.wrapping_add(t);
    }
    sum
}

/// The program of a PE that sends on colour `send` and receives on `recv`.
fn class(arch: Arch, send: Option<u8>, recv: Option<u8>, chunks: u32) -> ProgramClass {
    let mut code = Vec::new();
    let mut functions = Vec::new();
    let mut tasks = Vec::new();
    let mut info = ClassInfo {
        name: format!("busy send={send:?} recv={recv:?}"),
        ..ClassInfo::default()
    };
    let r = Reg;
    let bin = |op, dst, a, b| Op::Bin {
        op,
        ty: NumTy::U32,
        dst: Reg(dst),
        a: Reg(a),
        b: Reg(b),
    };
    // Main task: CHUNK iterations, then re-activate while chunks remain.
    functions.push(FuncInfo {
        name: "main".into(),
        entry: 0,
        nregs: 14,
        nparams: 0,
        frame_bytes: 0,
    });
    // A receiver gives its data task high priority (`TASK_PRIORITY`), so that each
    // activation of the main task first drains the wavelets that have arrived: with the
    // round-robin picker alone the data task would run once per chunk, the receiver would
    // fall behind and back-pressure would serialise the whole row.
    if let Some(c) = recv {
        let id = match arch {
            Arch::Wse2 => c,
            Arch::Wse3 => RECV_QUEUE,
        };
        code.extend([
            Op::Imm {
                dst: r(13),
                imm: mmio::TASK_PRIORITY,
            },
            Op::Imm {
                dst: r(12),
                imm: 1 << id,
            },
            Op::Store {
                w: Width::W16,
                addr: r(13),
                src: r(12),
            },
        ]);
    }
    code.extend([
        Op::Imm {
            dst: r(6),
            imm: DESC,
        },
        Op::Imm {
            dst: r(7),
            imm: V_ADDR,
        },
        Op::Load {
            w: Width::W32,
            dst: r(1),
            addr: r(7),
        },
        Op::Imm {
            dst: r(9),
            imm: CHUNKS_ADDR,
        },
        Op::Load {
            w: Width::W32,
            dst: r(10),
            addr: r(9),
        },
        Op::Imm {
            dst: r(11),
            imm: mmio::COL_ID,
        },
        Op::Load {
            w: Width::W16,
            dst: r(11),
            addr: r(11),
        },
        Op::Imm { dst: r(2), imm: A },
        Op::Imm { dst: r(3), imm: C },
        Op::Imm { dst: r(5), imm: 7 },
        Op::Imm { dst: r(8), imm: 1 },
        Op::Imm { dst: r(12), imm: 3 },
        Op::Imm {
            dst: r(0),
            imm: CHUNK,
        },
    ]);
    let head = code.len() as u32;
    code.extend([
        bin(BinOp::Mul, 1, 1, 2),
        bin(BinOp::Add, 1, 1, 3),
        bin(BinOp::Add, 1, 1, 11),
        bin(BinOp::Shr, 4, 1, 5),
        bin(BinOp::Xor, 4, 4, 1),
        bin(BinOp::Mul, 4, 4, 3),
        bin(BinOp::Add, 4, 4, 2),
        bin(BinOp::Xor, 4, 4, 11),
        bin(BinOp::Shl, 13, 4, 12),
        bin(BinOp::Add, 4, 4, 13),
    ]);
    if send.is_some() {
        code.push(Op::DsdOp {
            op: DsdOpcode::Mov32,
            kinds: OperandKind::pack([
                OperandKind::Desc,
                OperandKind::Scalar,
                OperandKind::None,
                OperandKind::None,
            ]),
            cfg: 0,
            done: 0,
            ut: 0,
            dst: r(6),
            a: r(4),
            b: r(0),
            c: r(0),
            idx: r(0),
        });
    }
    code.extend([
        bin(BinOp::Sub, 0, 0, 8),
        Op::BrTrue {
            cond: r(0),
            target: head,
        },
        Op::Store {
            w: Width::W32,
            addr: r(7),
            src: r(1),
        },
        bin(BinOp::Sub, 10, 10, 8),
        Op::Store {
            w: Width::W32,
            addr: r(9),
            src: r(10),
        },
    ]);
    let br = code.len();
    code.push(Op::BrFalse {
        cond: r(10),
        target: 0,
    });
    code.extend([
        Op::Imm {
            dst: r(11),
            imm: u32::from(MAIN_TASK),
        },
        Op::Activate { id: r(11) },
    ]);
    let end = code.len() as u32;
    if let Some(Op::BrFalse { target, .. }) = code.get_mut(br) {
        *target = end;
    }
    code.push(Op::RetVoid {});
    tasks.push(TaskBinding {
        id: MAIN_TASK,
        kind: TaskKind::Local,
        func: 0,
        args: WaveletArgs::None,
    });
    info.initially_active = 1 << MAIN_TASK;
    // Data task: sum += wavelet.
    if let Some(c) = recv {
        let entry = code.len() as u32;
        functions.push(FuncInfo {
            name: "recv".into(),
            entry,
            nregs: 3,
            nparams: 1,
            frame_bytes: 0,
        });
        code.extend([
            Op::Imm {
                dst: r(1),
                imm: SUM_ADDR,
            },
            Op::Load {
                w: Width::W32,
                dst: r(2),
                addr: r(1),
            },
            bin(BinOp::Add, 2, 2, 0),
            Op::Store {
                w: Width::W32,
                addr: r(1),
                src: r(2),
            },
            Op::RetVoid {},
        ]);
        let id = match arch {
            Arch::Wse2 => c,
            Arch::Wse3 => {
                info.input_queues.push(QueueBinding {
                    queue: RECV_QUEUE,
                    color: c,
                });
                RECV_QUEUE
            }
        };
        tasks.push(TaskBinding {
            id,
            kind: TaskKind::Data,
            func: 1,
            args: WaveletArgs::Word,
        });
    }
    let mut data = vec![0u8; 0x90];
    if let Some(c) = send {
        if arch == Arch::Wse3 {
            info.output_queues.push(QueueBinding { queue: 3, color: c });
        }
        let d = DESC as usize;
        data[d] = DsdKind::FabOut as u8;
        data[d + 2] = 3;
        data[d + 3] = c;
        data[d + 6..d + 8].copy_from_slice(&1u16.to_le_bytes());
    }
    let cc = CHUNKS_ADDR as usize;
    data[cc..cc + 4].copy_from_slice(&chunks.to_le_bytes());
    info.functions = functions;
    info.tasks = tasks;
    ProgramClass {
        code,
        data,
        info,
        lines: Default::default(),
    }
}

fn route(x: u32, y: u32, color: u8, rx: Direction, tx: Direction) -> ColorConfig {
    ColorConfig::route(x, y, color, vec![rx], vec![tx])
}

/// The busy-grid image (module docs): `iters` sends per PE, rounded up to a multiple of
/// [`CHUNK`].
pub fn busy_grid(arch: Arch, w: u32, h: u32, iters: u32) -> Image {
    let chunks = rounded_iters(iters) / CHUNK;
    let mut keys: Vec<(Option<u8>, Option<u8>)> = Vec::new();
    let mut placement = Vec::with_capacity((w * h) as usize);
    let mut routes = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let send = (x + 1 < w).then_some((x % 2) as u8);
            let recv = (x > 0).then_some(((x + 1) % 2) as u8);
            let k = match keys.iter().position(|&k| k == (send, recv)) {
                Some(k) => k,
                None => {
                    keys.push((send, recv));
                    keys.len() - 1
                }
            };
            placement.push(k as u32);
            if let Some(c) = send {
                routes.push(route(x, y, c, Direction::Ramp, Direction::East));
            }
            if let Some(c) = recv {
                routes.push(route(x, y, c, Direction::West, Direction::Ramp));
            }
        }
    }
    Image {
        meta: Meta {
            offset_x: OFFSET_X,
            memcpy: true,
            ..Meta::rect(arch, w, h)
        },
        placement,
        routes: routes.into(),
        exports: Vec::new(),
        classes: keys
            .iter()
            .map(|&(s, r)| class(arch, s, r, chunks))
            .collect(),
        tile_memory: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{SUM_ADDR, busy_grid, busy_grid_expected};
    use crate::Simulator;
    use csl_arch::fabric::Arch;
    use csl_arch::isa::Width;

    /// Everything a run shows: how it ended, the clock, every counter, every sum.
    type Seen = (Result<(), String>, crate::RunStats, Vec<Option<u32>>);

    /// [`Seen`], whether some PE was asleep when the run stopped, and whether some PE
    /// had stores that ran ahead of the clock taken back.
    /// `resume`: after stopping at `limit`, run on to the end.
    fn run(
        arch: Arch,
        ahead: bool,
        threads: usize,
        limit: u64,
        resume: bool,
    ) -> (Seen, bool, bool) {
        let (w, h, iters) = (9, 3, 24);
        let mut sim = Simulator::new(&busy_grid(arch, w, h, iters)).expect("the image loads");
        sim.set_run_ahead(ahead);
        sim.set_threads(threads);
        sim.set_split_threshold(0);
        let mut end = sim.run_until_idle(limit).map_err(|e| e.to_string());
        if limit < u64::MAX && resume {
            // On from the stop to the end (stores taken back at the stop are made again).
            end = sim.run_until_idle(u64::MAX).map_err(|e| e.to_string());
        }
        let sums = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| {
                sim.pe(x, y)
                    .and_then(|pe| pe.read_word(SUM_ADDR, Width::W32))
            })
            .collect();
        let asleep = sim.pes().iter().any(|pe| pe.sleep_until != 0);
        let held = sim.pes().iter().any(|pe| pe.stores_held);
        ((end, sim.stats(), sums), asleep, held)
    }

    /// Instructions running ahead and stalled PEs sleeping (both off with
    /// `set_run_ahead(false)`) change no figure: not at the end of a run, not at a cycle
    /// limit in the middle of one, on any thread count.
    #[test]
    fn running_ahead_and_sleeping_change_no_figure() {
        for arch in [Arch::Wse2, Arch::Wse3] {
            let (plain, _, _) = run(arch, false, 1, u64::MAX, false);
            assert_eq!(plain.0, Ok(()));
            assert_eq!(
                plain.2.get(4).copied().flatten(),
                Some(busy_grid_expected(4, 24))
            );
            for threads in [1, 2] {
                assert_eq!(
                    run(arch, true, threads, u64::MAX, false).0,
                    plain,
                    "{arch:?} {threads}"
                );
            }
            let cycles = plain.1.cycles;
            let (mut slept, mut held) = (false, false);
            // A few spread-out limits, and every cycle of a window longer than a loop
            // iteration (so that some stop falls inside every kind of run-ahead stretch).
            let window = (cycles / 2..cycles / 2 + 32).step_by(1);
            for limit in [cycles / 3, cycles - 5].into_iter().chain(window) {
                let (stopped, none, _) = run(arch, false, 1, limit, false);
                assert!(stopped.0.is_err(), "the limit stops the run");
                assert!(!none, "no PE sleeps without running ahead");
                let (fast, asleep, taken_back) = run(arch, true, 2, limit, false);
                slept |= asleep;
                held |= taken_back;
                assert_eq!(fast, stopped, "{arch:?} at {limit}");
                let (resumed, _, _) = run(arch, true, 1, limit, true);
                assert_eq!(resumed, plain, "{arch:?} on from {limit}");
            }
            assert!(slept, "PEs sleep through the instructions they ran ahead");
            assert!(held, "stores that ran ahead are taken back at a stop");
        }
    }
}
