//! How much memory a run on emulated devices needs, computed from the
//! parameters before anything is allocated, and the check against what the
//! machine can give (so a device too large for RAM is refused with the
//! figures, instead of aborting on allocation or being killed by the OOM
//! killer halfway through a fill).
//!
//! What is counted ([`MemoryNeed`]), per item:
//!
//! * **FTL maps** (flash devices): logical→physical and physical→logical
//!   page maps, 4 bytes per logical and per physical page.
//! * **Block tables** (flash devices): per erase block, the valid count,
//!   write pointer and erase count (4 bytes each), the state (1), its place
//!   on a die's free list (4) and on the FIFO of full blocks (up to 8: a
//!   ring buffer grown by doubling): [`BLOCK_TABLE_BYTES`].
//! * **Data pages** (real time, unless `nocopy=1`): the device's capacity,
//!   once. The data is one zeroed allocation the kernel maps lazily: a page
//!   costs memory once written, an unwritten one nothing (reads see the
//!   shared zero page), so a filled device costs exactly its capacity.
//!   Virtual time keeps no data.
//! * **I/O buffers** (real time): `iodepth × bs` (rounded up to 4 KiB) per
//!   worker; one buffer per worker for psync, none for the null engine.
//! * **Queues and statistics**: per slot in flight, the worker's and the
//!   engine's bookkeeping ([`SLOT_BYTES_REAL`], [`SLOT_BYTES_VIRTUAL`]); per
//!   worker, three latency histograms per direction it uses, held three
//!   times (the worker's, the result's copy, the merge):
//!   [`worker_stats_bytes`].
//!
//! Devices live for the whole run; buffers and statistics only while their
//! phase runs, so a run needs its devices plus its largest phase
//! ([`estimate`]).
//!
//! The check ([`check`]): the need must fit in what is available less a
//! headroom for everything not counted (the program, page tables, the
//! kernel): [`Available::usable`] = available − max(256 MiB, 10 %), where
//! available is the least of `MemAvailable` (/proc/meminfo), the cgroup's
//! limit less its usage (v2 or v1, each level up to the root) and the
//! address-space limit (`ulimit -v`) less the current virtual size; against
//! that limit each worker thread also reserves 72 MiB (its stack and a
//! malloc arena), as address space, not memory.

use crate::config::Params;
use ssdready_core::spec::{EngineKind, JobSpec, RwMode};

/// Bytes per erase block of the FTL's block tables (see the module docs).
pub const BLOCK_TABLE_BYTES: u64 = 4 + 4 + 4 + 1 + 4 + 8;
/// Bytes of bookkeeping per slot in flight in real time: the worker's slot
/// record, free list and completion vector, and the engine's pending heap.
pub const SLOT_BYTES_REAL: u64 = 96;
/// Bytes per slot in virtual time: the slot record, free list and event heap.
pub const SLOT_BYTES_VIRTUAL: u64 = 48;
/// Address space each worker thread reserves under `ulimit -v` (an 8 MiB
/// stack and a 64 MiB malloc arena).
pub const THREAD_ADDRESS_SPACE: u64 = 72 << 20;
/// The least headroom left for what is not counted.
pub const MIN_HEADROOM: u64 = 256 << 20;
/// The headroom as a share of what is available, when that is more.
pub const HEADROOM_SHARE: f64 = 0.10;
const BUFFER_ALIGN: u64 = 4096;

/// Whether the device keeps data and workers hold buffers (real time) or
/// only the model runs (virtual time, `emu simulate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBase {
    /// `ssdready run`: data pages, I/O buffers.
    Real,
    /// `ssdready emu simulate`: the model only.
    Virtual,
}

/// What one job's workers hold while its phase runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobLoad {
    /// Worker threads (numjobs).
    pub workers: u64,
    /// Slots in flight per worker.
    pub iodepth: u64,
    /// I/O buffers per worker (iodepth, 1 for psync, 0 for the null engine).
    pub buffers: u64,
    /// Largest block size: each buffer's size.
    pub max_bs: u64,
    /// Directions the job uses (read, write, trim): each has its statistics.
    pub directions: u64,
}

impl JobLoad {
    /// The load of `spec` as its engine will hold it.
    pub fn of(spec: &JobSpec) -> JobLoad {
        let iodepth = spec.effective_iodepth().max(1) as u64;
        JobLoad {
            workers: spec.numjobs.max(1) as u64,
            iodepth,
            buffers: match spec.ioengine {
                EngineKind::Null => 0,
                _ => iodepth,
            },
            max_bs: spec.bs.max() as u64,
            directions: match spec.rw {
                RwMode::ReadWrite | RwMode::RandRw => 2,
                _ => 1,
            },
        }
    }
}

/// Memory a run needs, by item (bytes; sums saturate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Logical→physical and physical→logical page maps.
    pub ftl_maps: u64,
    /// Per-erase-block tables.
    pub block_tables: u64,
    /// The data of the device (real time, not `nocopy`).
    pub data_pages: u64,
    /// Workers' I/O buffers.
    pub buffers: u64,
    /// Queues and statistics.
    pub bookkeeping: u64,
    /// Worker threads (for the address-space limit).
    pub workers: u64,
}

impl MemoryNeed {
    /// Everything.
    pub fn total(&self) -> u64 {
        self.ftl_maps
            .saturating_add(self.block_tables)
            .saturating_add(self.data_pages)
            .saturating_add(self.buffers)
            .saturating_add(self.bookkeeping)
    }

    /// Both needs at once.
    pub fn plus(&self, o: &MemoryNeed) -> MemoryNeed {
        MemoryNeed {
            ftl_maps: self.ftl_maps.saturating_add(o.ftl_maps),
            block_tables: self.block_tables.saturating_add(o.block_tables),
            data_pages: self.data_pages.saturating_add(o.data_pages),
            buffers: self.buffers.saturating_add(o.buffers),
            bookkeeping: self.bookkeeping.saturating_add(o.bookkeeping),
            workers: self.workers.saturating_add(o.workers),
        }
    }

    /// The items with their names and the way to shrink each, largest first.
    fn items(&self) -> Vec<(u64, &'static str, &'static str)> {
        let mut v = vec![
            (
                self.data_pages,
                "data pages",
                "set nocopy=1 on the device (it then keeps no data: reads return zeros) or give it a smaller size=",
            ),
            (
                self.ftl_maps,
                "FTL maps",
                "give the device a smaller size= (or a larger page_bytes=)",
            ),
            (
                self.block_tables,
                "block tables",
                "give the device a smaller size= (or a larger pages_per_block=)",
            ),
            (self.buffers, "I/O buffers", "lower iodepth, bs or numjobs"),
            (
                self.bookkeeping,
                "queues and statistics",
                "lower iodepth or numjobs",
            ),
        ];
        v.retain(|i| i.0 > 0);
        v.sort_by_key(|i| std::cmp::Reverse(i.0));
        v
    }
}

/// Physical pages and erase blocks of a flash device, computed as the FTL
/// lays them out but without narrowing (an absurd geometry gives an absurd
/// figure, not a wrapped one).
fn flash_geometry(p: &Params) -> (f64, f64) {
    let dies = p.dies().max(1) as f64;
    let ppb = p.pages_per_block.max(1) as f64;
    let phys = (p.logical_pages() as f64 * (1.0 + p.op)).ceil();
    let blocks_per_die = (phys / dies).ceil() / ppb;
    let blocks = blocks_per_die.ceil() * dies;
    (blocks * ppb, blocks)
}

/// f64 bytes to u64, saturating (NaN and infinity included).
fn bytes(x: f64) -> u64 {
    if x.is_nan() || x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.max(0.0) as u64
    }
}

/// What one emulated device holds for the whole run.
pub fn device(p: &Params, time: TimeBase) -> MemoryNeed {
    let mut need = MemoryNeed::default();
    if !p.dram {
        let (phys_pages, blocks) = flash_geometry(p);
        need.ftl_maps = bytes(4.0 * (p.logical_pages() as f64 + phys_pages));
        need.block_tables = bytes(BLOCK_TABLE_BYTES as f64 * blocks);
    }
    if time == TimeBase::Real && !p.nocopy {
        need.data_pages = p.logical_pages().saturating_mul(p.page_bytes as u64);
    }
    need
}

/// Statistics one worker holds per direction it uses: 3 latency
/// histograms, three times over (see the module docs).
pub fn worker_stats_bytes() -> u64 {
    3 * 3 * ssdready_core::hist::NUM_BUCKETS as u64 * 8
}

/// What the workers of one phase hold while it runs.
pub fn jobs(loads: &[JobLoad], time: TimeBase) -> MemoryNeed {
    let mut need = MemoryNeed::default();
    for l in loads {
        let per_buffer = l.max_bs.max(1).div_ceil(BUFFER_ALIGN) * BUFFER_ALIGN;
        let slot_bytes = match time {
            TimeBase::Real => SLOT_BYTES_REAL,
            TimeBase::Virtual => SLOT_BYTES_VIRTUAL,
        };
        if time == TimeBase::Real {
            let per_worker = per_buffer.saturating_mul(l.buffers);
            need.buffers = need
                .buffers
                .saturating_add(per_worker.saturating_mul(l.workers));
        }
        let per_worker = slot_bytes
            .saturating_mul(l.iodepth)
            .saturating_add(worker_stats_bytes().saturating_mul(l.directions.max(1)));
        need.bookkeeping = need
            .bookkeeping
            .saturating_add(per_worker.saturating_mul(l.workers));
        need.workers = need.workers.saturating_add(l.workers);
    }
    need
}

/// A run's need: every device, plus the phase whose workers hold the most.
pub fn estimate(devices: &[&Params], phases: &[Vec<JobLoad>], time: TimeBase) -> MemoryNeed {
    let held = devices
        .iter()
        .fold(MemoryNeed::default(), |n, p| n.plus(&device(p, time)));
    let largest = phases
        .iter()
        .map(|loads| jobs(loads, time))
        .max_by_key(|n| n.total())
        .unwrap_or_default();
    held.plus(&largest)
}

/// What the machine can give, and which limit that is.
#[derive(Clone, Debug, PartialEq)]
pub struct Available {
    /// Bytes.
    pub bytes: u64,
    /// Where the figure comes from, for the message.
    pub source: String,
    /// Address space each worker thread reserves against this limit.
    pub per_thread: u64,
}

impl Available {
    /// The headroom left for what is not counted.
    pub fn headroom(&self) -> u64 {
        MIN_HEADROOM.max((self.bytes as f64 * HEADROOM_SHARE) as u64)
    }

    /// What a run of `workers` threads may use.
    pub fn usable(&self, workers: u64) -> u64 {
        self.bytes
            .saturating_sub(self.headroom())
            .saturating_sub(self.per_thread.saturating_mul(workers))
    }
}

/// A byte count for people: `1.5 GiB`.
pub fn human(b: u64) -> String {
    if b == u64::MAX {
        return "more than 16 EiB".into();
    }
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// A need that does not fit what the machine can give. Its text is one
/// line with the need by item, what is usable and why, and what to change.
#[derive(Debug, thiserror::Error)]
#[error("{}", refusal(.need, .avail))]
pub struct NotEnoughMemory {
    pub need: MemoryNeed,
    pub avail: Available,
}

/// The allocator could not reserve an emulated device's data (the memory
/// check is meant to refuse such a device first).
#[derive(Debug, thiserror::Error)]
#[error(
    "the emulated device's {} of data could not be allocated \
     (set nocopy=1 on the device, or a smaller size=)",
    human(*.bytes)
)]
pub struct DataNotAllocated {
    pub bytes: u64,
}

/// Refuse a need that does not fit ([`NotEnoughMemory`]).
pub fn check(need: &MemoryNeed, avail: &Available) -> Result<(), NotEnoughMemory> {
    if need.total() <= avail.usable(need.workers) {
        return Ok(());
    }
    Err(NotEnoughMemory {
        need: *need,
        avail: avail.clone(),
    })
}

fn refusal(need: &MemoryNeed, avail: &Available) -> String {
    let usable = avail.usable(need.workers);
    let total = need.total();
    let items = need.items();
    let parts: Vec<String> = items
        .iter()
        .map(|(b, name, _)| format!("{name} {}", human(*b)))
        .collect();
    // Advice for each item that is a quarter of the need or more.
    let mut advice: Vec<&str> = items
        .iter()
        .filter(|(b, _, _)| *b as f64 >= total as f64 / 4.0)
        .map(|i| i.2)
        .collect();
    advice.dedup();
    let threads = if avail.per_thread > 0 && need.workers > 0 {
        format!(
            " and {} for {} worker thread{}",
            human(avail.per_thread.saturating_mul(need.workers)),
            need.workers,
            if need.workers == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    format!(
        "not enough memory: this needs {} ({}) but only {} can be used ({} {}, less {} of headroom{threads}); to fit, {}",
        human(total),
        parts.join(", "),
        human(usable),
        avail.source,
        human(avail.bytes),
        human(avail.headroom()),
        advice.join(", or "),
    )
}

/// `Key:   123 kB` from /proc/meminfo or /proc/self/status, in bytes.
fn proc_kb(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// The smallest room (limit − usage) from this process's cgroup up to the
/// root of its hierarchy, when a limit is set: `memory.max` and
/// `memory.current` under cgroup v2, `memory.limit_in_bytes` and
/// `memory.usage_in_bytes` under v1's memory controller.
fn cgroup_room() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_room_in(&cg, std::path::Path::new("/sys/fs/cgroup"))
}

/// [`cgroup_room`] for the /proc/self/cgroup text `cg`, cgroups mounted at `sys`.
fn cgroup_room_in(cg: &str, sys: &std::path::Path) -> Option<u64> {
    let v1 = cg.lines().find_map(|l| {
        let (_, rest) = l.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    });
    let (root, rel, files) = match v1 {
        Some(path) => (
            sys.join("memory"),
            path,
            ["memory.limit_in_bytes", "memory.usage_in_bytes"],
        ),
        None => (
            sys.to_path_buf(),
            cg.lines().find_map(|l| l.strip_prefix("0::"))?,
            ["memory.max", "memory.current"],
        ),
    };
    let mut dir = root.join(rel.trim().trim_start_matches('/'));
    let mut room: Option<u64> = None;
    loop {
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f))
                .ok()?
                .trim()
                .parse::<u64>()
                .ok()
        };
        // "max" (v2) does not parse: no limit at this level.
        if let (Some(max), Some(cur)) = (read(files[0]), read(files[1])) {
            let r = max.saturating_sub(cur);
            room = Some(room.map_or(r, |x| x.min(r)));
        }
        if dir == root || !dir.pop() {
            break;
        }
    }
    room
}

/// The address-space limit (`ulimit -v`) less the current virtual size.
fn address_space_room() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..]
        .split_whitespace()
        .next()?;
    let limit: u64 = soft.parse().ok()?; // "unlimited" does not parse
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = proc_kb(&status, "VmSize:").unwrap_or(0);
    Some(limit.saturating_sub(used))
}

/// What this machine can give now: the least of MemAvailable, the cgroup's
/// room and the address-space limit's room. None when /proc/meminfo is
/// unreadable (then nothing is checked).
pub fn available() -> Option<Available> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let mut best = Available {
        bytes: proc_kb(&meminfo, "MemAvailable:")?,
        source: "MemAvailable".into(),
        per_thread: 0,
    };
    if let Some(room) = cgroup_room().filter(|&r| r < best.bytes) {
        best = Available {
            bytes: room,
            source: "free under the cgroup's memory limit".into(),
            per_thread: 0,
        };
    }
    if let Some(room) = address_space_room() {
        // Against the address-space limit threads count too: compare what
        // each source would let the run use, for a typical worker count.
        let as_limit = Available {
            bytes: room,
            source: "free under the address-space limit (ulimit -v)".into(),
            per_thread: THREAD_ADDRESS_SPACE,
        };
        if as_limit.usable(1) < best.usable(1) {
            best = as_limit;
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Params {
        Params::parse(s).unwrap()
    }

    #[test]
    fn flash_device_items_follow_the_geometry() {
        // 256 MiB, 4 KiB pages: 65536 logical pages; op 0.25 → 81920
        // physical, 16 dies × 80 blocks of 64 pages = 81920 exactly.
        let n = device(&p("nvme-tlc,size=256m,op=0.25"), TimeBase::Real);
        assert_eq!(n.ftl_maps, 4 * (65536 + 81920));
        assert_eq!(n.block_tables, BLOCK_TABLE_BYTES * 1280);
        assert_eq!(n.data_pages, 256 << 20);
        let v = device(&p("nvme-tlc,size=256m,op=0.25"), TimeBase::Virtual);
        assert_eq!(v.data_pages, 0, "virtual time keeps no data");
        let nc = device(&p("nvme-tlc,size=256m,op=0.25,nocopy=1"), TimeBase::Real);
        assert_eq!(nc.data_pages, 0, "nocopy keeps no data");
    }

    #[test]
    fn dram_devices_have_no_ftl() {
        let n = device(&p("null,size=1g"), TimeBase::Real);
        assert_eq!((n.ftl_maps, n.block_tables), (0, 0));
        assert_eq!(n.data_pages, 1 << 30);
    }

    #[test]
    fn buffers_are_iodepth_times_bs_per_worker() {
        let l = JobLoad {
            workers: 4,
            iodepth: 65536,
            buffers: 65536,
            max_bs: 1 << 20,
            directions: 1,
        };
        let n = jobs(&[l], TimeBase::Real);
        assert_eq!(n.buffers, 4 * 65536 * (1 << 20));
        assert_eq!(jobs(&[l], TimeBase::Virtual).buffers, 0);
        // bs rounds up to whole pages
        let small = JobLoad { max_bs: 512, ..l };
        assert_eq!(jobs(&[small], TimeBase::Real).buffers, 4 * 65536 * 4096);
    }

    #[test]
    fn a_run_needs_its_devices_and_its_largest_phase() {
        let d = p("null,size=64m");
        let small = JobLoad {
            workers: 1,
            iodepth: 1,
            buffers: 1,
            max_bs: 4096,
            directions: 1,
        };
        let big = JobLoad {
            iodepth: 64,
            buffers: 64,
            max_bs: 1 << 20,
            ..small
        };
        let n = estimate(&[&d], &[vec![small], vec![big]], TimeBase::Real);
        assert_eq!(n.data_pages, 64 << 20);
        assert_eq!(n.buffers, 64 << 20, "the larger phase, not the sum");
    }

    #[test]
    fn absurd_geometry_saturates_instead_of_wrapping() {
        let mut q = p("nvme-tlc,size=1g");
        q.op = f64::INFINITY;
        let n = device(&q, TimeBase::Virtual);
        assert_eq!(n.total(), u64::MAX);
        assert!(human(n.total()).contains("more than"));
    }

    #[test]
    fn refusal_names_the_figures_and_the_alternative() {
        let need = estimate(
            &[&p("nvme-tlc,size=64g")],
            &[vec![JobLoad::of(&JobSpec::default())]],
            TimeBase::Real,
        );
        let avail = Available {
            bytes: 16 << 30,
            source: "MemAvailable".into(),
            per_thread: 0,
        };
        let e = check(&need, &avail).unwrap_err().to_string();
        assert!(e.contains("data pages 64.0 GiB"), "{e}");
        assert!(e.contains("14.4 GiB can be used"), "{e}");
        assert!(e.contains("nocopy=1"), "{e}");
        assert!(!e.contains('\n'));
        let fits = Available {
            bytes: 80 << 30,
            ..avail
        };
        assert!(check(&need, &fits).is_ok());
    }

    #[test]
    fn the_headroom_is_a_tenth_or_256_mib() {
        let a = |bytes| Available {
            bytes,
            source: String::new(),
            per_thread: 0,
        };
        assert_eq!(a(1 << 30).headroom(), 256 << 20);
        assert_eq!(a(10 << 30).headroom(), 1 << 30);
        let threads = Available {
            per_thread: THREAD_ADDRESS_SPACE,
            ..a(10 << 30)
        };
        assert_eq!(threads.usable(2), (9 << 30) - 2 * THREAD_ADDRESS_SPACE);
    }

    #[test]
    fn cgroup_limits_are_read_up_to_the_root() {
        let sys = std::env::temp_dir().join(format!("ssdready-cg-{}", std::process::id()));
        let put = |rel: &str, f: &str, v: &str| {
            let d = sys.join(rel);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(f), v).unwrap();
        };
        // v2: the parent's limit is the tighter one.
        put("a/b", "memory.max", "max\n");
        put("a/b", "memory.current", "100\n");
        put("a", "memory.max", "5000\n");
        put("a", "memory.current", "1000\n");
        assert_eq!(cgroup_room_in("0::/a/b\n", &sys), Some(4000));
        assert_eq!(cgroup_room_in("0::/elsewhere\n", &sys), None);
        // v1: the memory controller's hierarchy wins over the v2 line.
        put("memory/x", "memory.limit_in_bytes", "3000\n");
        put("memory/x", "memory.usage_in_bytes", "1000\n");
        let cg = "4:memory:/x\n0::/a/b\n";
        assert_eq!(cgroup_room_in(cg, &sys), Some(2000));
        std::fs::remove_dir_all(&sys).unwrap();
    }

    #[test]
    fn meminfo_is_read() {
        let a = available().expect("/proc/meminfo on Linux");
        assert!(a.bytes > 0);
    }
}
