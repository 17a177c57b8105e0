//! `memcpy_h2d` / `memcpy_d2h` (libraries.md §1.3–1.4).
//!
//! **Copy mode**: host arrays of 32-bit words to and from the tensor each PE exports with
//! `@export_symbol`. For each PE of the region, the class's exported symbol gives the
//! address of a pointer variable (`SymbolTarget::Tensor { ptr_addr }`); the 16-bit pointer
//! stored there is the tensor's address, and `elem_per_pe` elements are copied from
//! element 0.
//!
//! Before the data moves, a copy waits for its region to be quiescent
//! ([`Simulator::pe_quiescent`], SIMULATOR.md §8).
//!
//! **Streaming mode** (ours, simplified): `dest`/`src` is a colour id. The memcpy support
//! PEs around the rectangle are not simulated. H2D: after [`MEMCPY_SETUP_CYCLES`], each PE
//! of the region receives its `elem_per_pe` raw 32-bit words, at most one per cycle, in
//! its CE input queue for that colour (WSE-2: the colour's buffer; WSE-3: the input queue
//! bound to it), as if they had crossed the PE's RAMP from the memcpy infrastructure;
//! when the queue is full they wait in the memcpy path (`SimParams::h2d_path_depth`
//! wavelets per PE), then at the host (back-pressure). The H2D command completes when
//! every word has left the host. D2H: each PE of the region's CE
//! output on that colour (what it pushes towards its router's RAMP input, e.g. with a
//! `fabout` DSD) goes to the host instead of the fabric, at most one wavelet per cycle,
//! until `elem_per_pe` came from each PE. The command completes when every wavelet has
//! moved; if the fabric stops making progress first, it fails with
//! [`SimError::Deadlock`](crate::SimError::Deadlock). `data_type` is ignored.

use super::{HostError, MEMCPY_BOUNDS_ENV, SdkRuntime};
use crate::sim::RunEnd;
use csl_arch::fabric::{NUM_COLORS, PE_MEMORY_BYTES};
use csl_arch::image::{ExportKind, SymbolTarget};
use csl_arch::isa::Width;

/// Fixed cycles of a copy-mode memcpy (ours: a plausible command overhead).
pub const MEMCPY_SETUP_CYCLES: u64 = 16;

/// How long a copy-mode memcpy waits for the region to be quiescent
/// ([`Simulator::pe_quiescent`]) before it copies anyway.
pub const MEMCPY_WAIT_CYCLES: u64 = 100_000;

/// Device element size of a copy-mode memcpy (vendor `MEMCPY_32BIT` / `MEMCPY_16BIT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemcpyDataType {
    /// 4 bytes per element.
    Bit32,
    /// 2 bytes per element: the low 16 bits of each host word.
    Bit16,
}

impl MemcpyDataType {
    fn bytes(self) -> u32 {
        match self {
            MemcpyDataType::Bit32 => 4,
            MemcpyDataType::Bit16 => 2,
        }
    }
}

/// Host array layout (libraries.md §1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemcpyOrder {
    /// Host index of PE `(i, j)`, element `k`: `(j*w + i)*l + k`.
    RowMajor,
    /// Host index of PE `(i, j)`, element `k`: `j + i*h + k*h*w`.
    ColMajor,
}

impl SdkRuntime {
    /// Copies `src` into the tensor `dest` (a [`get_id`](Self::get_id) value) of every PE
    /// of the region: the vendor's argument list; [`h2d`](Self::h2d) takes the same as a
    /// [`Region`] and a [`Transfer`].
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_h2d(
        &mut self,
        dest: u32,
        src: &[u32],
        px: u32,
        py: u32,
        w: u32,
        h: u32,
        elem_per_pe: u32,
        streaming: bool,
        data_type: MemcpyDataType,
        order: MemcpyOrder,
        _nonblock: bool,
    ) -> Result<(), HostError> {
        let how = Transfer::new(streaming, data_type, order);
        self.h2d(dest, src, Region::new(px, py, w, h, elem_per_pe), how)
    }

    /// Copies the tensor `src` (a [`get_id`](Self::get_id) value) of every PE of the region
    /// into `dest`: the vendor's argument list; [`d2h`](Self::d2h) takes the same as a
    /// [`Region`] and a [`Transfer`].
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_d2h(
        &mut self,
        dest: &mut [u32],
        src: u32,
        px: u32,
        py: u32,
        w: u32,
        h: u32,
        elem_per_pe: u32,
        streaming: bool,
        data_type: MemcpyDataType,
        order: MemcpyOrder,
        _nonblock: bool,
    ) -> Result<(), HostError> {
        let how = Transfer::new(streaming, data_type, order);
        self.d2h(dest, src, Region::new(px, py, w, h, elem_per_pe), how)
    }

    /// Copies `src` into the tensor `dest` (a [`get_id`](Self::get_id) value; a colour in
    /// streaming mode) of every PE of `region`.
    pub fn h2d(
        &mut self,
        dest: u32,
        src: &[u32],
        region: Region,
        how: Transfer,
    ) -> Result<(), HostError> {
        let Transfer {
            streaming,
            data_type,
            order,
        } = how;
        let Region { px, py, l, .. } = region;
        if streaming {
            return self.stream_h2d(dest, src, region, order);
        }
        let plan = self.plan_copy(dest, src.len(), region, data_type, true)?;
        let Some(sim) = self.sim.as_mut() else {
            return Err(HostError::NotLoaded);
        };
        let n = data_type.bytes() as usize;
        for (i, j, addr) in plan {
            let Some(pe) = sim.pe_mut(px + i, py + j) else {
                continue;
            };
            for k in 0..l {
                let v = src
                    .get(region.host_index(order, i, j, k))
                    .copied()
                    .unwrap_or(0);
                let at = addr + k * data_type.bytes();
                if let Some(b) = v.to_le_bytes().get(..n) {
                    pe.write_bytes(at, b);
                }
            }
        }
        Ok(())
    }

    /// Copies the tensor `src` (a [`get_id`](Self::get_id) value; a colour in streaming
    /// mode) of every PE of `region` into `dest`.
    pub fn d2h(
        &mut self,
        dest: &mut [u32],
        src: u32,
        region: Region,
        how: Transfer,
    ) -> Result<(), HostError> {
        let Transfer {
            streaming,
            data_type,
            order,
        } = how;
        if streaming {
            return self.stream_d2h(dest, src, region, order);
        }
        let plan = self.plan_copy(src, dest.len(), region, data_type, false)?;
        let Some(sim) = self.sim.as_mut() else {
            return Err(HostError::NotLoaded);
        };
        if sim.rank().is_some() {
            let n = region.l * data_type.bytes();
            let spans: Vec<_> = plan
                .iter()
                .map(|&(i, j, a)| (region.px + i, region.py + j, a, n))
                .collect();
            sim.sync_memory(&spans);
        }
        let sim = &*sim;
        for (i, j, addr) in plan {
            let Some(pe) = sim.pe(region.px + i, region.py + j) else {
                continue;
            };
            for k in 0..region.l {
                let at = addr + k * data_type.bytes();
                let v = match data_type {
                    MemcpyDataType::Bit32 => pe.read_word(at, Width::W32),
                    MemcpyDataType::Bit16 => pe.read_word(at, Width::W16),
                };
                if let Some(slot) = dest.get_mut(region.host_index(order, i, j, k)) {
                    *slot = v.unwrap_or(0);
                }
            }
        }
        Ok(())
    }

    /// Checks a copy-mode memcpy, lets its time pass, and returns for each PE of the region
    /// (row-major) its region-relative column and row and the tensor's address.
    fn plan_copy(
        &mut self,
        id: u32,
        host_len: usize,
        region: Region,
        data_type: MemcpyDataType,
        h2d: bool,
    ) -> Result<Vec<(u32, u32, u32)>, HostError> {
        self.ready()?;
        let (name, _, mutable) = self.tensor_export(id)?;
        if h2d && !mutable {
            return Err(HostError::ImmutableSymbol { name });
        }
        let Region { px, py, w, h, l } = region;
        let width = self.image.meta.width;
        self.check_region(region, host_len)?;
        // Where each PE's pointer variable is (looked up once per program class).
        let mut class_ptr: Vec<Option<u32>> = vec![None; self.image.classes.len()];
        let mut ptrs = Vec::with_capacity((w as usize) * (h as usize));
        for j in 0..h {
            for i in 0..w {
                let pe_index = (py + j) as usize * width as usize + (px + i) as usize;
                let c = self.image.placement.get(pe_index).copied().unwrap_or(0) as usize;
                let ptr_addr = match class_ptr.get(c).copied().flatten() {
                    Some(p) => p,
                    None => match self.lookup_on(c, pe_index, &name)? {
                        SymbolTarget::Tensor { ptr_addr } => {
                            if let Some(slot) = class_ptr.get_mut(c) {
                                *slot = Some(ptr_addr);
                            }
                            ptr_addr
                        }
                        SymbolTarget::Func { .. } => {
                            return Err(HostError::WrongSymbolKind {
                                name,
                                expected: "a tensor",
                                found: "a function on some PEs",
                            });
                        }
                    },
                };
                ptrs.push((i, j, ptr_addr));
            }
        }
        // The copy's time passes (the fabric runs meanwhile), then the memcpy runtime needs
        // each PE's CE: it waits until the region is quiescent (no task running or ready,
        // no microthread, CE input or router of the region with work left: what was sent
        // before has arrived and been handled), then the data moves. SIMULATOR.md §8.
        let cost = MEMCPY_SETUP_CYCLES + u64::from(w) * u64::from(l);
        let max = self.max_cycles;
        let sim = self.ready()?;
        let r = sim.advance(cost, max);
        self.record(r)?;
        let sim = self.ready()?;
        let region_free = |s: &crate::sim::Simulator| {
            (0..h).all(|j| (0..w).all(|i| s.pe_quiescent(px + i, py + j)))
        };
        // A program that keeps its tasks runnable forever never frees the CE: after
        // MEMCPY_WAIT_CYCLES the copy happens anyway (as the memcpy task would get its turn).
        let limit = sim.cycle().saturating_add(MEMCPY_WAIT_CYCLES).min(max);
        let r = match sim.run_until(region_free, limit) {
            Err(crate::error::SimError::CycleLimit { .. }) if limit < max => Ok(()),
            other => other.map(|_| ()),
        };
        self.record(r)?;
        let Some(sim) = self.sim.as_mut() else {
            return Err(HostError::NotLoaded);
        };
        if sim.rank().is_some() {
            let spans: Vec<_> = ptrs
                .iter()
                .map(|&(i, j, p)| (px + i, py + j, p, 2))
                .collect();
            sim.sync_memory(&spans);
        }
        let Some(sim) = self.sim.as_ref() else {
            return Err(HostError::NotLoaded);
        };
        let bytes = u64::from(l) * u64::from(data_type.bytes());
        let mut plan = Vec::with_capacity(ptrs.len());
        let mut warned = false;
        for (i, j, ptr_addr) in ptrs {
            let Some(pe) = sim.pe(px + i, py + j) else {
                continue;
            };
            let ptr = pe.read_word(ptr_addr, Width::W16);
            let Some(addr) = ptr else {
                return Err(HostError::SymbolOutOfBounds {
                    name,
                    pe: pe.loc(),
                    addr: ptr_addr,
                    bytes: 2,
                });
            };
            if u64::from(addr) + bytes > u64::from(PE_MEMORY_BYTES) {
                return Err(HostError::SymbolOutOfBounds {
                    name,
                    pe: pe.loc(),
                    addr,
                    bytes,
                });
            }
            let class = self
                .image
                .placement
                .get(((py + j) * width + px + i) as usize)
                .copied()
                .unwrap_or(0) as usize;
            if let Some(g) = self.array_at(class, addr) {
                let room = u64::from(g.addr) + u64::from(g.size) - u64::from(addr);
                if bytes > room {
                    let e = HostError::PastEndOfArray {
                        name: name.clone(),
                        pe: pe.loc(),
                        array: g.name.clone(),
                        room,
                        bytes,
                    };
                    if h2d || !self.lenient_reads {
                        return Err(e);
                    }
                    if !warned {
                        eprintln!("warning: {e} (reading on: {MEMCPY_BOUNDS_ENV}=warn)");
                        warned = true;
                    }
                }
            }
            plan.push((i, j, addr));
        }
        Ok(plan)
    }
}

impl SdkRuntime {
    /// The element type of the exported tensor `id` and how many elements the array its
    /// pointer points at holds on PE `(px, py)`, from the program's table of globals
    /// (`None` when the pointer leads into no known global). Needs a loaded image.
    pub fn tensor_len(
        &self,
        id: u32,
        px: u32,
        py: u32,
    ) -> Result<(csl_arch::isa::NumTy, Option<u32>), HostError> {
        let (name, elem, _) = self.tensor_export(id)?;
        let width = self.image.meta.width;
        let pe_index = (py * width + px) as usize;
        let c = self.image.placement.get(pe_index).copied().unwrap_or(0) as usize;
        let SymbolTarget::Tensor { ptr_addr } = self.lookup_on(c, pe_index, &name)? else {
            return Ok((elem, None));
        };
        let Some(sim) = self.sim.as_ref() else {
            return Err(HostError::NotLoaded);
        };
        let addr = sim
            .pe(px, py)
            .and_then(|pe| pe.read_word(ptr_addr, Width::W16))
            .unwrap_or(u32::MAX);
        let len = self
            .array_at(c, addr)
            .map(|g| (g.addr + g.size - addr) / elem.size().max(1));
        Ok((elem, len))
    }

    /// The name, element type and mutability of the exported tensor `id`.
    fn tensor_export(&self, id: u32) -> Result<(String, csl_arch::isa::NumTy, bool), HostError> {
        let export = self
            .image
            .exports
            .get(id as usize)
            .ok_or(HostError::UnknownSymbolId {
                id,
                count: self.image.exports.len(),
            })?;
        match export.kind {
            ExportKind::Tensor { elem, mutable } => Ok((export.name.clone(), elem, mutable)),
            ExportKind::Func { .. } => Err(HostError::WrongSymbolKind {
                name: export.name.clone(),
                expected: "a tensor",
                found: "a function",
            }),
        }
    }

    /// The global of class `c` whose storage holds byte address `addr`, if any.
    fn array_at(&self, c: usize, addr: u32) -> Option<&csl_arch::image::GlobalInfo> {
        self.image.classes.get(c).and_then(|cl| {
            cl.info
                .globals
                .iter()
                .find(|g| g.addr <= addr && addr < g.addr.saturating_add(g.size))
        })
    }

    /// Checks that the region lies in the rectangle and the host array fits it.
    fn check_region(&self, region: Region, host_len: usize) -> Result<(), HostError> {
        let Region { px, py, w, h, l } = region;
        let (width, height) = (self.image.meta.width, self.image.meta.height);
        if u64::from(px) + u64::from(w) > u64::from(width)
            || u64::from(py) + u64::from(h) > u64::from(height)
        {
            return Err(HostError::RegionOutsideRectangle {
                px,
                py,
                w,
                h,
                width,
                height,
            });
        }
        let expected = u64::from(w) * u64::from(h) * u64::from(l);
        if host_len as u64 != expected {
            return Err(HostError::WrongArraySize {
                expected,
                got: host_len,
            });
        }
        Ok(())
    }

    /// Checks a streaming colour id.
    fn stream_color(id: u32) -> Result<u8, HostError> {
        u8::try_from(id)
            .ok()
            .filter(|&c| c < NUM_COLORS)
            .ok_or(HostError::InvalidColor { color: id })
    }

    /// Runs a streaming command until its wavelets have moved.
    fn finish_stream(&mut self, command: String) -> Result<(), HostError> {
        let max = self.max_cycles;
        let sim = self.ready()?;
        let r = match sim.run_until_known(crate::sim::Until::StreamsDone, max) {
            Ok(RunEnd::Condition) => Ok(()),
            Ok(RunEnd::Idle) => Err(sim.deadlock(&command, false)),
            Err(e) => Err(e),
        };
        if r.is_err() {
            sim.cancel_streams();
        }
        self.record(r)
    }

    /// Streaming `memcpy_h2d` (module docs).
    fn stream_h2d(
        &mut self,
        color: u32,
        src: &[u32],
        region: Region,
        order: MemcpyOrder,
    ) -> Result<(), HostError> {
        crate::dist::no_streams(self.ready()?)?;
        let c = Self::stream_color(color)?;
        self.check_region(region, src.len())?;
        let mut data = Vec::with_capacity((region.w * region.h) as usize);
        for j in 0..region.h {
            for i in 0..region.w {
                let words = (0..region.l)
                    .map(|k| {
                        src.get(region.host_index(order, i, j, k))
                            .copied()
                            .unwrap_or(0)
                    })
                    .collect();
                data.push(((region.px + i, region.py + j), words));
            }
        }
        let sim = self.ready()?;
        let r = sim.start_h2d_stream(c, data, MEMCPY_SETUP_CYCLES);
        self.record(r)?;
        self.finish_stream(format!("memcpy_h2d (streaming, colour {c})"))
    }

    /// Streaming `memcpy_d2h` (module docs).
    fn stream_d2h(
        &mut self,
        dest: &mut [u32],
        color: u32,
        region: Region,
        order: MemcpyOrder,
    ) -> Result<(), HostError> {
        crate::dist::no_streams(self.ready()?)?;
        let c = Self::stream_color(color)?;
        self.check_region(region, dest.len())?;
        let mut pes = Vec::with_capacity((region.w * region.h) as usize);
        for j in 0..region.h {
            for i in 0..region.w {
                pes.push((region.px + i, region.py + j));
            }
        }
        let sim = self.ready()?;
        sim.start_d2h_stream(c, &pes, region.l as usize, MEMCPY_SETUP_CYCLES);
        self.finish_stream(format!("memcpy_d2h (streaming, colour {c})"))?;
        let Some(sim) = self.sim.as_mut() else {
            return Err(HostError::NotLoaded);
        };
        let got = sim.take_d2h();
        for (n, words) in got.iter().enumerate() {
            let (i, j) = ((n as u32) % region.w.max(1), (n as u32) / region.w.max(1));
            for (k, &v) in words.iter().enumerate() {
                if let Some(slot) = dest.get_mut(region.host_index(order, i, j, k as u32)) {
                    *slot = v;
                }
            }
        }
        Ok(())
    }
}

/// The PEs and elements of a memcpy: the `w` x `h` PEs whose north-west corner is PE
/// `(px, py)` of the program rectangle, `l` elements each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Column of the region's first PE (rectangle-relative).
    pub px: u32,
    /// Row of the region's first PE (rectangle-relative).
    pub py: u32,
    /// Width in PEs.
    pub w: u32,
    /// Height in PEs.
    pub h: u32,
    /// Elements per PE.
    pub l: u32,
}

/// How a memcpy moves its data. [`Transfer::COPY`] is the usual one: copy mode, 32-bit
/// elements, row-major host order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Streaming mode (to or from a colour) rather than copy mode (exported tensors).
    pub streaming: bool,
    /// Device element size (copy mode).
    pub data_type: MemcpyDataType,
    /// Host array layout.
    pub order: MemcpyOrder,
}

impl Transfer {
    /// Copy mode, 32-bit elements, row-major.
    pub const COPY: Transfer = Transfer::new(false, MemcpyDataType::Bit32, MemcpyOrder::RowMajor);
    /// Streaming mode, row-major.
    pub const STREAM: Transfer = Transfer::new(true, MemcpyDataType::Bit32, MemcpyOrder::RowMajor);

    /// The transfer with these settings.
    pub const fn new(streaming: bool, data_type: MemcpyDataType, order: MemcpyOrder) -> Self {
        Transfer {
            streaming,
            data_type,
            order,
        }
    }

    /// The same with host order `order`.
    pub const fn order(self, order: MemcpyOrder) -> Self {
        Transfer { order, ..self }
    }

    /// The same with device element size `data_type`.
    pub const fn data_type(self, data_type: MemcpyDataType) -> Self {
        Transfer { data_type, ..self }
    }
}

impl Region {
    /// The region of `w` x `h` PEs from `(px, py)`, `l` elements each.
    pub const fn new(px: u32, py: u32, w: u32, h: u32, l: u32) -> Self {
        Region { px, py, w, h, l }
    }

    /// Host array index of PE `(i, j)` of the region, element `k`.
    fn host_index(&self, order: MemcpyOrder, i: u32, j: u32, k: u32) -> usize {
        let (i, j, k) = (i as usize, j as usize, k as usize);
        let (w, h, l) = (self.w as usize, self.h as usize, self.l as usize);
        match order {
            MemcpyOrder::RowMajor => (j * w + i) * l + k,
            MemcpyOrder::ColMajor => j + i * h + k * h * w,
        }
    }
}
