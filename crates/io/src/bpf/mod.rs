//! eBPF programs that time each I/O inside the kernel, emitted from Rust (no
//! clang, no libbpf, no object file: the build needs nothing but cargo),
//! loaded with `bpf(2)` and attached to the block layer's tracepoints.
//!
//! Why emit bytecode rather than compile C: the programs are 20–80
//! instructions each ([`programs`]), and a build that needs clang or a
//! committed object would break the project's "cargo only" rule.
//!
//! Two flavours, chosen at load time:
//!
//! * **`tp_btf`** (the kernel has BTF, `/sys/kernel/btf/vmlinux`): the
//!   programs read the request's sector and device directly through its
//!   BTF-typed pointer and publish, per I/O, its `block_io_start`,
//!   `block_rq_issue` and `block_rq_complete` times in a memory-mapped
//!   [`JoinTable`]. The worker that submitted the I/O looks it up there when
//!   it reaps the completion, which splits every I/O's latency into app
//!   issue → io_start (above the block layer, submission), the block layer,
//!   the driver and device, and rq_complete → app (completion delivery).
//! * **raw tracepoints** (no BTF): the same in-kernel histograms, no join;
//!   the above-block part is then only a mean (app mean − kernel mean).
//!
//! In both, the kernel parts are histograms kept in the kernel: block and
//! below (io_start → io_done, what /sys/block/X/stat accounts), block layer
//! (io_start → rq_issue) and driver plus device (rq_issue → rq_complete).

use ssdready_core::stats::KernelTimes;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

pub mod cpustate;
pub mod programs;
pub use programs::{bucket_value, join_slot, BtfLayout, HIST_BUCKETS, TRACEPOINTS};
use programs::{Maps, JOIN_BITS, JOIN_BYTES, SLOTS, SLOT_BYTES, SLOT_SUM};
const JOIN_WORDS: usize = JOIN_BYTES as usize / 8;

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_LOOKUP_ELEM: i32 = 1;
const BPF_PROG_LOAD: i32 = 5;
const BPF_RAW_TRACEPOINT_OPEN: i32 = 17;
const MAP_ARRAY: u32 = 2;
const MAP_PERCPU_ARRAY: u32 = 6;
const MAP_F_MMAPABLE: u32 = 1 << 10;
const PROG_RAW_TRACEPOINT: u32 = 17;
const PROG_TRACING: u32 = 26;
const ATTACH_TRACE_RAW_TP: u32 = 23;

fn bpf(cmd: i32, attr: &mut [u64; 16]) -> io::Result<i64> {
    // SAFETY: `attr` is a zeroed, 128-byte, 8-aligned buffer laid out as the
    // union bpf_attr member for `cmd`; the kernel reads (and for lookups
    // writes through pointers we put in it, which outlive the call).
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr(),
            std::mem::size_of_val(attr),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as i64)
    }
}

struct Fd(i32);
impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closing an fd we own.
        unsafe { libc::close(self.0) };
    }
}

fn map_create(ty: u32, key: u32, value: u32, max: u32, flags: u32) -> io::Result<Fd> {
    let mut a = [0u64; 16];
    a[0] = ty as u64 | (key as u64) << 32;
    a[1] = value as u64 | (max as u64) << 32;
    a[2] = flags as u64;
    Ok(Fd(bpf(BPF_MAP_CREATE, &mut a)? as i32))
}

/// Number of possible CPUs (per-CPU map values come one per possible CPU).
fn possible_cpus() -> usize {
    let text =
        std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_else(|_| "0".into());
    text.trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap_or(0) - a.parse::<usize>().unwrap_or(0) + 1,
            None => 1,
        })
        .sum::<usize>()
        .max(1)
}

/// How a program is loaded: a raw tracepoint by name, or `tp_btf` by the
/// BTF id of the tracepoint's `btf_trace_*` typedef.
#[derive(Clone, Copy)]
enum Attach<'a> {
    Raw(&'a str),
    Btf(u32),
}

fn prog_load(code: &[u64], name: &str, how: Attach) -> io::Result<Fd> {
    let license = b"GPL\0";
    let mut log = vec![0u8; 1 << 16];
    let mut a = [0u64; 16];
    let ty = match how {
        Attach::Raw(_) => PROG_RAW_TRACEPOINT,
        Attach::Btf(_) => PROG_TRACING,
    };
    a[0] = ty as u64 | (code.len() as u64) << 32;
    a[1] = code.as_ptr() as u64;
    a[2] = license.as_ptr() as u64;
    a[3] = 1 | (log.len() as u64) << 32; // log_level 1, log_size
    a[4] = log.as_mut_ptr() as u64;
    // prog_name (bytes 48..64), shown by `bpftool prog`.
    let mut nm = [0u8; 16];
    for (d, s) in nm.iter_mut().zip(name.bytes().take(15)) {
        *d = s;
    }
    a[6] = u64::from_le_bytes(nm[..8].try_into().expect("8 bytes"));
    a[7] = u64::from_le_bytes(nm[8..].try_into().expect("8 bytes"));
    if let Attach::Btf(id) = how {
        a[8] = (ATTACH_TRACE_RAW_TP as u64) << 32; // expected_attach_type
        a[13] = (id as u64) << 32; // attach_btf_id (vmlinux)
    }
    match bpf(BPF_PROG_LOAD, &mut a) {
        Ok(fd) => Ok(Fd(fd as i32)),
        Err(e) => {
            let msg = String::from_utf8_lossy(&log);
            let tail: String = msg
                .trim_end_matches('\0')
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ");
            Err(io::Error::new(e.kind(), format!("{e}; verifier: {tail}")))
        }
    }
}

fn attach(prog: &Fd, how: Attach) -> io::Result<Fd> {
    let name;
    let mut a = [0u64; 16];
    if let Attach::Raw(tp) = how {
        name = std::ffi::CString::new(tp).expect("no NUL");
        a[0] = name.as_ptr() as u64;
    }
    a[1] = prog.0 as u64;
    Ok(Fd(bpf(BPF_RAW_TRACEPOINT_OPEN, &mut a)? as i32))
}

/// The kernel's side of each I/O, published by `block_rq_complete` for the
/// worker that submitted it: a read-only shared mapping of a BPF array of
/// (sector, dev, io_start, rq_insert, rq_issue, rq_complete) entries, CLOCK_MONOTONIC
/// ns, at [`join_slot`]`(dev, sector)`. Published at rq_complete because
/// that precedes, always, the app seeing the completion (io_done does not:
/// the bios are ended, and the submitter woken, before it).
///
/// The program invalidates an entry's sector, writes the rest, then writes
/// the sector; a reader that sees its sector before and after reading the
/// times read one consistent entry (x86-64 keeps stores in order). An entry
/// overwritten by another I/O before the worker looked is not found, and
/// counted as unmatched.
pub struct JoinTable {
    base: std::ptr::NonNull<AtomicU64>,
    len: usize,
}

// SAFETY: the mapping is only read, through atomic loads, and lives until
// the table is dropped.
unsafe impl Send for JoinTable {}
// SAFETY: as above: shared read-only access through atomics.
unsafe impl Sync for JoinTable {}

impl JoinTable {
    fn map(fd: &Fd) -> io::Result<JoinTable> {
        let len = (JOIN_BYTES as usize) << JOIN_BITS;
        // SAFETY: a new shared read-only mapping of the map's `len` bytes
        // (an mmapable array's values, page-aligned by the kernel). The
        // mapping keeps the map alive after the fd closes.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.0,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(JoinTable {
            base: std::ptr::NonNull::new(p as *mut AtomicU64).expect("mmap returned non-null"),
            len,
        })
    }

    #[inline]
    fn word(&self, i: usize) -> u64 {
        debug_assert!(i < self.len / 8);
        // SAFETY: `i` is within the mapping (slot < 2^JOIN_BITS, JOIN_WORDS
        // words each), which is 8-aligned and outlives `self`; AtomicU64 has the
        // layout of u64 and the kernel writes whole words.
        unsafe { (*self.base.as_ptr().add(i)).load(Ordering::Acquire) }
    }

    /// Start fetching the entry for (`dev`, `sector`) into the cache: the
    /// kernel wrote it on another CPU, so the first read misses. A worker
    /// prefetches a whole batch of completions before looking them up, so
    /// the misses overlap.
    #[inline]
    pub fn prefetch(&self, dev: u32, sector: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let w = join_slot(dev, sector) * JOIN_WORDS;
            // SAFETY: a prefetch has no architectural effect; the address is
            // inside the mapping (see `word`).
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    self.base.as_ptr().add(w) as *const i8,
                )
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (dev, sector);
    }

    /// The kernel's times for the I/O at `sector` of `dev` (kernel dev_t),
    /// if the entry there is that I/O's.
    #[inline]
    pub fn lookup(&self, dev: u32, sector: u64) -> Option<KernelTimes> {
        let w = join_slot(dev, sector) * JOIN_WORDS;
        if self.word(w) != sector || self.word(w + 1) != dev as u64 {
            return None;
        }
        let k = KernelTimes {
            io_start: self.word(w + 2),
            rq_insert: self.word(w + 3),
            rq_issue: self.word(w + 4),
            rq_complete: self.word(w + 5),
        };
        (self.word(w) == sector).then_some(k)
    }
}

impl Drop for JoinTable {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `map`, once.
        unsafe { libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len) };
    }
}

/// The loaded and attached programs; detached when dropped.
pub struct BlockTimer {
    _links: Vec<Fd>,
    _progs: Vec<Fd>,
    _slots: Fd,
    hists: [Fd; 3],
    join: Option<std::sync::Arc<JoinTable>>,
    /// `tp_btf` or `raw_tp`.
    pub flavour: &'static str,
    /// Why the tp_btf flavour was not used, when it was asked for.
    pub fallback: Option<String>,
}

/// One part's histogram read back: (bucket representative ns, count), sum, count.
#[derive(Clone, Debug, Default)]
pub struct PartHist {
    pub buckets: Vec<(u64, u64)>,
    pub sum_ns: u64,
    pub count: u64,
}

impl BlockTimer {
    /// Load and attach the programs for this process (`tgid`): `tp_btf`
    /// with a join table when `btf` is given and the kernel accepts them,
    /// else raw tracepoints.
    pub fn start(tgid: u32, btf: Option<&BtfLayout>) -> io::Result<BlockTimer> {
        let mut fallback = None;
        if let Some(l) = btf {
            match Self::load(tgid, Some(l)) {
                Ok(t) => return Ok(t),
                Err(e) => fallback = Some(format!("tp_btf programs refused ({e})")),
            }
        }
        let mut t = Self::load(tgid, None)?;
        t.fallback = fallback;
        Ok(t)
    }

    fn load(tgid: u32, btf: Option<&BtfLayout>) -> io::Result<BlockTimer> {
        let hist = || map_create(MAP_PERCPU_ARRAY, 4, 8 * (HIST_BUCKETS + 1), 1, 0);
        let slots = map_create(MAP_ARRAY, 4, SLOT_BYTES, SLOTS, 0)?;
        let hists = [hist()?, hist()?, hist()?];
        let (join_fd, join) = match btf {
            Some(_) => {
                let fd = map_create(MAP_ARRAY, 4, JOIN_BYTES, 1 << JOIN_BITS, MAP_F_MMAPABLE)?;
                let t = JoinTable::map(&fd)?;
                (Some(fd), Some(std::sync::Arc::new(t)))
            }
            None => (None, None),
        };
        let m = Maps {
            slots: slots.0,
            join: join_fd.as_ref().map(|f| f.0),
            hists: [hists[0].0, hists[1].0, hists[2].0],
        };
        let mut codes = vec![
            programs::io_start(m, tgid, btf),
            programs::rq_issue(m),
            programs::rq_complete(m),
            programs::io_done(m),
        ];
        if btf.is_some() {
            codes.push(programs::rq_insert(m));
        }
        // Benchmarks only (bench/overhead.sh): programs that return at once,
        // to measure the kernel's fixed cost of calling BPF on each tracepoint.
        if std::env::var_os("SSDREADY_BPF_EMPTY").is_some() {
            for c in codes.iter_mut() {
                *c = programs::empty();
            }
        }
        let names = [
            "ssdr_io_start",
            "ssdr_rq_issue",
            "ssdr_rq_complete",
            "ssdr_io_done",
            "ssdr_rq_insert",
        ];
        let mut progs = Vec::new();
        let mut links = Vec::new();
        for (i, code) in codes.iter().enumerate() {
            let how = match btf {
                Some(l) => Attach::Btf(l.attach_ids[i]),
                None => Attach::Raw(TRACEPOINTS[i]),
            };
            let tp = TRACEPOINTS[i];
            let p = prog_load(code, names[i], how)
                .map_err(|e| io::Error::new(e.kind(), format!("loading {tp}: {e}")))?;
            links.push(
                attach(&p, how)
                    .map_err(|e| io::Error::new(e.kind(), format!("attaching to {tp}: {e}")))?,
            );
            progs.push(p);
        }
        Ok(BlockTimer {
            _links: links,
            _progs: progs,
            _slots: slots,
            hists,
            join,
            flavour: if btf.is_some() { "tp_btf" } else { "raw_tp" },
            fallback: None,
        })
    }

    /// The per-I/O join table (tp_btf flavour only).
    pub fn join_table(&self) -> Option<std::sync::Arc<JoinTable>> {
        self.join.clone()
    }

    fn read(map: &Fd) -> io::Result<PartHist> {
        let cpus = possible_cpus();
        let slots = (HIST_BUCKETS + 1) as usize;
        let mut vals = vec![0u64; cpus * slots];
        let key = 0u32;
        let mut a = [0u64; 16];
        a[0] = map.0 as u64;
        a[1] = &key as *const u32 as u64;
        a[2] = vals.as_mut_ptr() as u64; // one value of `slots` u64 per possible CPU
        bpf(BPF_MAP_LOOKUP_ELEM, &mut a)?;
        let mut h = PartHist::default();
        for k in 0..slots {
            let val: u64 = (0..cpus).map(|c| vals[c * slots + k]).sum();
            if k as u32 == SLOT_SUM {
                h.sum_ns = val;
            } else if val > 0 {
                h.buckets.push((bucket_value(k as u32), val));
                h.count += val;
            }
        }
        Ok(h)
    }

    /// (block layer and below, driver and device, block layer alone)
    /// histograms so far.
    pub fn read_parts(&self) -> io::Result<(PartHist, PartHist, PartHist)> {
        Ok((
            Self::read(&self.hists[0])?,
            Self::read(&self.hists[1])?,
            Self::read(&self.hists[2])?,
        ))
    }
}

/// CLOCK_MONOTONIC now, ns: the clock `bpf_ktime_get_ns` reads.
pub fn monotonic_ns() -> u64 {
    crate::clock::posix_clock_ns(libc::CLOCK_MONOTONIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_tracepoint_programs_load_where_permitted() {
        match BlockTimer::start(std::process::id(), None) {
            Ok(t) => {
                assert_eq!(t.flavour, "raw_tp");
                // The programs' maps read back; their counts are this
                // process's block I/O, which other tests of the crate
                // running beside this one may already have made.
                let (a, b, c) = t.read_parts().unwrap();
                assert!(a.count + b.count + c.count < 1 << 20);
                assert!(t.join_table().is_none());
            }
            Err(e) => eprintln!("skipped: eBPF not permitted here: {e}"),
        }
    }
}
