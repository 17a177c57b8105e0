//! The fabric: every PE of the program rectangle, a global clock, and the loop that
//! advances them together.
//!
//! Each cycle, every PE that has work (a running task, a runnable task, or a pending host
//! call) performs one tick; PEs visit in row-major order, so runs are
//! deterministic. Idle PEs cost nothing: the simulator keeps a worklist of PEs with work,
//! and when it is empty the clock stops (or jumps, see [`Simulator::advance`]). PEs outside
//! the program rectangle are not simulated. Routers and wavelets are not modelled yet; a
//! later router stage will wake PEs by adding them to the worklist.

use crate::class::Class;
use crate::error::{PeLoc, SimError, WaitReason, Waiting};
use crate::pe::{HostCall, Pe, Tick};
use csl_arch::fabric::PeCoord;
use csl_arch::image::{Image, ImageError};
use std::sync::Arc;

/// How [`Simulator::run_until`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The condition held.
    Condition,
    /// No PE had work left before the condition held.
    Idle,
}

/// Counters of one PE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeStats {
    /// The PE.
    pub pe: PeLoc,
    /// Cycles in which it executed an instruction or started a task.
    pub busy_cycles: u64,
    /// Instructions executed.
    pub instructions: u64,
    /// Tasks and host calls started.
    pub tasks_started: u64,
}

/// Counters of a whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Simulated cycles so far.
    pub cycles: u64,
    /// Instructions executed by all PEs.
    pub instructions: u64,
    /// Per PE, row-major over the program rectangle.
    pub pes: Vec<PeStats>,
}

/// The simulated program rectangle.
#[derive(Clone, Debug)]
pub struct Simulator {
    classes: Vec<Class>,
    pes: Vec<Pe>,
    width: u32,
    height: u32,
    cycle: u64,
    /// Indices of PEs that may have work.
    worklist: Vec<usize>,
    /// Whether PEs were added to the worklist out of order.
    worklist_dirty: bool,
    /// PEs that stored to `HOST_CMD_UNBLOCK` since the last host call was issued.
    unblocked: usize,
}

impl Simulator {
    /// Builds the rectangle of `image` in its reset state (checks each class first).
    pub fn new(image: &Image) -> Result<Simulator, ImageError> {
        image.validate()?;
        let classes = image
            .classes
            .iter()
            .enumerate()
            .map(|(n, c)| Class::prepare(n, c))
            .collect::<Result<Vec<_>, _>>()?;
        let meta = &image.meta;
        let mut pes = Vec::with_capacity(image.placement.len());
        for (i, &c) in image.placement.iter().enumerate() {
            let i = i as u32;
            // `validate` guarantees width > 0 when there is a placement entry.
            let rel = PeCoord {
                x: i % meta.width.max(1),
                y: i / meta.width.max(1),
            };
            let abs = PeCoord {
                x: rel.x + meta.offset_x,
                y: rel.y + meta.offset_y,
            };
            let Some(class) = classes.get(c as usize) else {
                return Err(ImageError::BadSection {
                    section: csl_arch::image::SECTION_PLACEMENT.into(),
                    reason: format!("class {c} does not exist"),
                });
            };
            pes.push(Pe::new(PeLoc { rel, abs }, c as usize, class));
        }
        let mut sim = Simulator {
            classes,
            pes,
            width: meta.width,
            height: meta.height,
            cycle: 0,
            worklist: Vec::new(),
            worklist_dirty: false,
            unblocked: 0,
        };
        for i in 0..sim.pes.len() {
            sim.wake(i);
        }
        Ok(sim)
    }

    /// Width of the program rectangle.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Height of the program rectangle.
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Simulated cycles so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
    /// The prepared program classes.
    pub fn classes(&self) -> &[Class] {
        &self.classes
    }
    /// All PEs, row-major.
    pub fn pes(&self) -> &[Pe] {
        &self.pes
    }
    /// The PE at rectangle-relative `(x, y)`.
    pub fn pe(&self, x: u32, y: u32) -> Option<&Pe> {
        self.index(x, y).and_then(|i| self.pes.get(i))
    }
    /// The PE at rectangle-relative `(x, y)`, writable.
    pub fn pe_mut(&mut self, x: u32, y: u32) -> Option<&mut Pe> {
        self.index(x, y).and_then(|i| self.pes.get_mut(i))
    }
    fn index(&self, x: u32, y: u32) -> Option<usize> {
        (x < self.width && y < self.height).then(|| y as usize * self.width as usize + x as usize)
    }

    /// Whether any PE has work.
    pub fn has_work(&self) -> bool {
        self.worklist
            .iter()
            .any(|&i| self.pes.get(i).is_some_and(Pe::has_work))
    }

    /// Puts PE `i` on the worklist if it has work.
    fn wake(&mut self, i: usize) {
        let Some(pe) = self.pes.get_mut(i) else {
            return;
        };
        if !pe.in_worklist && pe.has_work() {
            pe.in_worklist = true;
            if self.worklist.last().is_some_and(|&last| last > i) {
                self.worklist_dirty = true;
            }
            self.worklist.push(i);
        }
    }

    /// Queues a host call on every PE: `funcs[class]` is the function to start on PEs of
    /// that class (`None`: the class is not used by any PE). Resets every PE's
    /// "unblocked the command stream" flag.
    pub fn issue_host_call(&mut self, funcs: &[Option<u32>], args: Arc<[u32]>) {
        self.unblocked = 0;
        for i in 0..self.pes.len() {
            if let Some(pe) = self.pes.get_mut(i) {
                pe.cmd_unblocked = false;
                if let Some(Some(func)) = funcs.get(pe.class) {
                    pe.host_calls.push_back(HostCall {
                        func: *func,
                        args: args.clone(),
                    });
                }
            }
            self.wake(i);
        }
    }

    /// Whether every PE stored to `HOST_CMD_UNBLOCK` since the last host call.
    pub fn all_unblocked(&self) -> bool {
        self.unblocked >= self.pes.len()
    }

    /// The PEs that have not unblocked the command stream, and why.
    pub fn not_unblocked(&self) -> Vec<Waiting> {
        self.pes
            .iter()
            .filter(|pe| !pe.cmd_unblocked)
            .map(|pe| Waiting {
                pe: pe.loc,
                reason: WaitReason::NeverUnblockedCmdStream {
                    blocked_tasks: pe.active & pe.blocked,
                },
            })
            .collect()
    }

    /// Runs cycles until `cond` holds (checked before every cycle) or no PE has work.
    /// Fails with [`SimError::CycleLimit`] if the clock reaches `max_cycles` first.
    pub fn run_until(
        &mut self,
        mut cond: impl FnMut(&Simulator) -> bool,
        max_cycles: u64,
    ) -> Result<RunEnd, SimError> {
        loop {
            if cond(self) {
                return Ok(RunEnd::Condition);
            }
            if self.worklist.is_empty() {
                return Ok(RunEnd::Idle);
            }
            if self.cycle >= max_cycles {
                return Err(SimError::CycleLimit { cycle: self.cycle });
            }
            self.step_cycle()?;
        }
    }

    /// Runs until no PE has work.
    pub fn run_until_idle(&mut self, max_cycles: u64) -> Result<(), SimError> {
        self.run_until(|_| false, max_cycles).map(|_| ())
    }

    /// Lets `cycles` cycles pass: PEs with work run; if none has work the clock jumps.
    pub fn advance(&mut self, cycles: u64, max_cycles: u64) -> Result<(), SimError> {
        let target = self.cycle.saturating_add(cycles);
        loop {
            if self.cycle >= target {
                return Ok(());
            }
            if self.cycle >= max_cycles {
                return Err(SimError::CycleLimit { cycle: self.cycle });
            }
            if self.worklist.is_empty() {
                self.cycle = target.min(max_cycles);
            } else {
                self.step_cycle()?;
            }
        }
    }

    /// Performs one cycle of every PE on the worklist.
    fn step_cycle(&mut self) -> Result<(), SimError> {
        if self.worklist_dirty {
            self.worklist.sort_unstable();
            self.worklist_dirty = false;
        }
        let cycle = self.cycle;
        let mut keep = 0;
        for r in 0..self.worklist.len() {
            let Some(&i) = self.worklist.get(r) else {
                break;
            };
            let Some(pe) = self.pes.get_mut(i) else {
                continue;
            };
            let Some(class) = self.classes.get(pe.class) else {
                continue;
            };
            let tick = match pe.tick(class, cycle) {
                Ok(t) => t,
                Err(kind) => {
                    let func = class.func_name(pe.cur.func).to_string();
                    return Err(SimError::Fault {
                        pe: pe.loc,
                        task: pe.task,
                        func,
                        pc: pe.cur.pc,
                        cycle,
                        kind,
                    });
                }
            };
            match tick {
                Tick::Idle => pe.in_worklist = false,
                Tick::Busy | Tick::BusyUnblocked => {
                    if tick == Tick::BusyUnblocked {
                        self.unblocked += 1;
                    }
                    if let Some(slot) = self.worklist.get_mut(keep) {
                        *slot = i;
                    }
                    keep += 1;
                }
            }
        }
        self.worklist.truncate(keep);
        // A cycle in which every visited PE turned out idle did not happen.
        if keep > 0 {
            self.cycle += 1;
        }
        Ok(())
    }

    /// Counters of every PE.
    pub fn stats(&self) -> RunStats {
        let pes: Vec<PeStats> = self
            .pes
            .iter()
            .map(|pe| PeStats {
                pe: pe.loc,
                busy_cycles: pe.busy_cycles,
                instructions: pe.instructions,
                tasks_started: pe.tasks_started,
            })
            .collect();
        RunStats {
            cycles: self.cycle,
            instructions: pes.iter().map(|p| p.instructions).sum(),
            pes,
        }
    }
}
