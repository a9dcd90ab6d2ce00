//! A few eBPF programs emitted from Rust (no clang, no libbpf, no object
//! file: the build needs nothing but cargo), loaded with `bpf(2)` and
//! attached to the block layer's raw tracepoints, to time each I/O inside
//! the kernel:
//!
//! * `block_io_start` → `block_io_done`, keyed by the bio pointer: the time
//!   the block layer accounts in /sys/block/X/stat (block layer, scheduler,
//!   driver and device);
//! * `block_rq_issue` → `block_rq_complete`, keyed by the request pointer:
//!   the driver and the device;
//! * `block_io_start` → `block_rq_issue`, the same request: the block layer
//!   and I/O scheduler alone.
//!
//! Starts are recorded only for this process's threads (by tgid), so only the
//! run's own I/O counts. Each end adds the delta to an in-kernel, per-CPU,
//! log-linear histogram (exact below 16 ns, then 4 buckets per power of two:
//! ±12.5 %) and to its sum. Each program reads the clock before anything
//! else, so the programs' own work stays outside the deltas. Why emit bytecode rather than compile C: the
//! programs are ~40 instructions each, and a build that needs clang or a
//! committed object would break the project's "cargo only" rule.

use std::io;

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_LOOKUP_ELEM: i32 = 1;
const BPF_PROG_LOAD: i32 = 5;
const BPF_RAW_TRACEPOINT_OPEN: i32 = 17;
const MAP_ARRAY: u32 = 2;
const MAP_PERCPU_ARRAY: u32 = 6;
const PROG_RAW_TRACEPOINT: u32 = 17;

/// Histogram slots: 16 exact + 4 per power of two up to 2^63, then the sum.
/// The arrays are per CPU, so the programs add without atomics; the count
/// is the sum of the buckets.
pub const HIST_BUCKETS: u32 = 16 + 4 * 60;
const SLOT_SUM: u32 = HIST_BUCKETS;

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

fn map_create(ty: u32, key: u32, value: u32, max: u32) -> io::Result<Fd> {
    let mut a = [0u64; 16];
    a[0] = ty as u64 | (key as u64) << 32;
    a[1] = value as u64 | (max as u64) << 32;
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

/// A tiny BPF assembler with forward labels.
#[derive(Default)]
struct Asm {
    code: Vec<u64>,
    fixups: Vec<(usize, &'static str)>,
    labels: Vec<(&'static str, usize)>,
}

impl Asm {
    fn raw(&mut self, op: u8, dst: u8, src: u8, off: i16, imm: i32) {
        let w = op as u64
            | ((dst as u64 | (src as u64) << 4) << 8)
            | ((off as u16 as u64) << 16)
            | ((imm as u32 as u64) << 32);
        self.code.push(w);
    }
    fn jmp(&mut self, op: u8, dst: u8, src: u8, imm: i32, to: &'static str) {
        self.fixups.push((self.code.len(), to));
        self.raw(op, dst, src, 0, imm);
    }
    fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.code.len()));
    }
    fn ld_map(&mut self, dst: u8, fd: i32) {
        self.raw(0x18, dst, 1, 0, fd); // BPF_LD|DW|IMM, src = BPF_PSEUDO_MAP_FD
        self.raw(0, 0, 0, 0, 0);
    }
    fn finish(mut self) -> Vec<u64> {
        for (at, to) in std::mem::take(&mut self.fixups) {
            let target = self
                .labels
                .iter()
                .find(|(n, _)| *n == to)
                .expect("label defined")
                .1;
            let off = (target as i64 - at as i64 - 1) as i16;
            self.code[at] = (self.code[at] & !(0xffff << 16)) | ((off as u16 as u64) << 16);
        }
        self.code
    }
}

// Opcodes.
const LDX_DW: u8 = 0x79;
const STX_DW: u8 = 0x7b;
const STX_W: u8 = 0x63;
const MOV_K: u8 = 0xb7;
const MOV_X: u8 = 0xbf;
const ADD_K: u8 = 0x07;
const SUB_X: u8 = 0x1f;
const RSH_K: u8 = 0x77;
const RSH_X: u8 = 0x7f;
const LSH_K: u8 = 0x67;
const AND_K: u8 = 0x57;
const JEQ_K: u8 = 0x15;
const JNE_K: u8 = 0x55;
const JLT_K: u8 = 0xa5;
const JLT_X: u8 = 0xad;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;

const HELPER_LOOKUP: i32 = 1;
const HELPER_KTIME: i32 = 5;
const HELPER_PID_TGID: i32 = 14;

/// On a start tracepoint: if the current task belongs to `tgid`, remember
/// now under the key args[0].
/// Slots of the start table: (request pointer, start time) at index
/// `(pointer >> 6) & (SLOTS − 1)`. Requests come from small, contiguous tag
/// pools, so in-flight requests rarely share a slot; an end checks the
/// pointer, so a collision loses one sample rather than corrupting one.
const SLOTS: u32 = 1 << 16;

/// r2 = &slot index of the pointer in r6, stored at r10 − 4.
fn slot_key(a: &mut Asm) {
    a.raw(MOV_X, 2, 6, 0, 0);
    a.raw(RSH_K, 2, 0, 0, 6);
    a.raw(AND_K, 2, 0, 0, (SLOTS - 1) as i32);
    a.raw(STX_W, 10, 2, -4, 0);
    a.raw(MOV_X, 2, 10, 0, 0);
    a.raw(ADD_K, 2, 0, 0, -4);
}

/// On a start tracepoint: if the current task belongs to `tgid`, remember
/// (args[0], now) in its slot.
fn start_prog(map: i32, tgid: u32) -> Vec<u64> {
    let mut a = Asm::default();
    a.raw(LDX_DW, 6, 1, 0, 0); // r6 = args[0]
    a.raw(CALL, 0, 0, 0, HELPER_KTIME); // the time first: nothing of ours inside it
    a.raw(MOV_X, 7, 0, 0, 0);
    a.raw(CALL, 0, 0, 0, HELPER_PID_TGID);
    a.raw(RSH_K, 0, 0, 0, 32);
    a.jmp(JNE_K, 0, 0, tgid as i32, "out");
    a.ld_map(1, map);
    slot_key(&mut a);
    a.raw(CALL, 0, 0, 0, HELPER_LOOKUP);
    a.jmp(JEQ_K, 0, 0, 0, "out");
    a.raw(STX_DW, 0, 6, 0, 0);
    a.raw(STX_DW, 0, 7, 8, 0);
    a.label("out");
    a.raw(MOV_K, 0, 0, 0, 0);
    a.raw(EXIT, 0, 0, 0, 0);
    a.finish()
}

/// On an end tracepoint: look args[0] up in `map`; add now − start to the
/// histogram and its sum; mark the entry consumed.
fn end_prog(map: i32, hist: i32, consume: bool) -> Vec<u64> {
    let mut a = Asm::default();
    a.raw(LDX_DW, 6, 1, 0, 0); // r6 = args[0]
    a.raw(CALL, 0, 0, 0, HELPER_KTIME); // the time first: the lookup is not inside it
    a.raw(MOV_X, 8, 0, 0, 0); // r8 = now
    a.ld_map(1, map);
    slot_key(&mut a);
    a.raw(CALL, 0, 0, 0, HELPER_LOOKUP);
    a.jmp(JEQ_K, 0, 0, 0, "out");
    a.raw(LDX_DW, 1, 0, 0, 0); // the slot's pointer
    a.jmp(0x5d, 1, 6, 0, "out"); // not ours (or a collision): out
    a.raw(LDX_DW, 7, 0, 8, 0); // r7 = start
    if consume {
        // Consume the slot: a later end for a request this process did not
        // start finds another pointer, or 0, and is ignored.
        a.raw(0x7a, 0, 0, 0, 0); // *(u64 *)(r0 + 0) = 0
    }
    a.jmp(JEQ_K, 7, 0, 0, "out");
    a.raw(SUB_X, 8, 7, 0, 0); // r8 = delta
                              // r9 = bucket of r8
    a.raw(MOV_X, 9, 8, 0, 0);
    a.jmp(JLT_K, 8, 0, 16, "have_bucket");
    // r2 = msb(r8) by binary search, r3 = scratch
    a.raw(MOV_K, 2, 0, 0, 0);
    a.raw(MOV_X, 4, 8, 0, 0);
    for (step, name) in [
        (32, "s32"),
        (16, "s16"),
        (8, "s8"),
        (4, "s4"),
        (2, "s2"),
        (1, "s1"),
    ] {
        a.raw(MOV_K, 3, 0, 0, 1);
        a.raw(LSH_K, 3, 0, 0, step);
        a.jmp(JLT_X, 4, 3, 0, name);
        a.raw(RSH_K, 4, 0, 0, step);
        a.raw(ADD_K, 2, 0, 0, step);
        a.label(name);
    }
    // bucket = 16 + (msb - 4) * 4 + ((delta >> (msb - 2)) & 3)
    a.raw(MOV_X, 9, 8, 0, 0);
    a.raw(MOV_X, 3, 2, 0, 0);
    a.raw(ADD_K, 3, 0, 0, -2);
    a.raw(RSH_X, 9, 3, 0, 0);
    a.raw(AND_K, 9, 0, 0, 3);
    a.raw(LSH_K, 2, 0, 0, 2);
    a.raw(0x0f, 9, 2, 0, 0); // r9 += 4·msb: bucket 16 + (msb − 4)·4 + sub
    a.label("have_bucket");
    // One lookup: this CPU's value holds every bucket and, last, the sum.
    a.raw(MOV_K, 1, 0, 0, 0);
    a.raw(STX_W, 10, 1, -20, 0);
    a.ld_map(1, hist);
    a.raw(MOV_X, 2, 10, 0, 0);
    a.raw(ADD_K, 2, 0, 0, -20);
    a.raw(CALL, 0, 0, 0, HELPER_LOOKUP);
    a.jmp(JEQ_K, 0, 0, 0, "out");
    a.raw(LDX_DW, 1, 0, (SLOT_SUM * 8) as i16, 0);
    a.raw(0x0f, 1, 8, 0, 0); // sum += delta
    a.raw(STX_DW, 0, 1, (SLOT_SUM * 8) as i16, 0);
    a.jmp(0x25, 9, 0, (HIST_BUCKETS - 1) as i32, "out"); // if bucket > last: out (bounds for the verifier)
    a.raw(LSH_K, 9, 0, 0, 3);
    a.raw(0x0f, 0, 9, 0, 0); // r0 += bucket * 8
    a.raw(LDX_DW, 1, 0, 0, 0);
    a.raw(ADD_K, 1, 0, 0, 1);
    a.raw(STX_DW, 0, 1, 0, 0);
    a.label("del");
    a.label("out");
    a.raw(MOV_K, 0, 0, 0, 0);
    a.raw(EXIT, 0, 0, 0, 0);
    a.finish()
}

fn prog_load(code: &[u64]) -> io::Result<Fd> {
    let license = b"GPL\0";
    let mut log = vec![0u8; 1 << 16];
    let mut a = [0u64; 16];
    a[0] = PROG_RAW_TRACEPOINT as u64 | (code.len() as u64) << 32;
    a[1] = code.as_ptr() as u64;
    a[2] = license.as_ptr() as u64;
    a[3] = 1 | (log.len() as u64) << 32; // log_level 1, log_size
    a[4] = log.as_mut_ptr() as u64;
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

fn attach(prog: &Fd, tracepoint: &str) -> io::Result<Fd> {
    let name = std::ffi::CString::new(tracepoint).expect("no NUL");
    let mut a = [0u64; 16];
    a[0] = name.as_ptr() as u64;
    a[1] = prog.0 as u64;
    Ok(Fd(bpf(BPF_RAW_TRACEPOINT_OPEN, &mut a)? as i32))
}

/// The loaded and attached programs; detached when dropped.
pub struct BlockTimer {
    _links: Vec<Fd>,
    _progs: Vec<Fd>,
    _keys: Vec<Fd>,
    hists: [Fd; 3],
}

/// One part's histogram read back: (bucket representative ns, count), sum, count.
#[derive(Clone, Debug, Default)]
pub struct PartHist {
    pub buckets: Vec<(u64, u64)>,
    pub sum_ns: u64,
    pub count: u64,
}

/// The representative value of histogram bucket `b`.
pub fn bucket_value(b: u32) -> u64 {
    if b < 16 {
        return b as u64;
    }
    let msb = (b - 16) / 4 + 4;
    let sub = (b - 16) % 4;
    let lo = (4 + sub as u64) << (msb - 2);
    lo + (1u64 << (msb - 2)) / 2
}

impl BlockTimer {
    /// Load and attach the programs for this process (`tgid`).
    pub fn start(tgid: u32) -> io::Result<BlockTimer> {
        let bio_map = map_create(MAP_ARRAY, 4, 16, SLOTS)?;
        let rq_map = map_create(MAP_ARRAY, 4, 16, SLOTS)?;
        let h_total = map_create(MAP_PERCPU_ARRAY, 4, 8 * (HIST_BUCKETS + 1), 1)?;
        let h_dev = map_create(MAP_PERCPU_ARRAY, 4, 8 * (HIST_BUCKETS + 1), 1)?;
        let h_blk = map_create(MAP_PERCPU_ARRAY, 4, 8 * (HIST_BUCKETS + 1), 1)?;
        let progs = vec![
            prog_load(&start_prog(bio_map.0, tgid))?,
            prog_load(&end_prog(bio_map.0, h_total.0, true))?,
            prog_load(&start_prog(rq_map.0, tgid))?,
            prog_load(&end_prog(rq_map.0, h_dev.0, true))?,
            // io_start → rq_issue, same request: the block layer and scheduler.
            prog_load(&end_prog(bio_map.0, h_blk.0, false))?,
        ];
        let mut links = Vec::new();
        let tps = [
            "block_io_start",
            "block_io_done",
            "block_rq_issue",
            "block_rq_complete",
            "block_rq_issue",
        ];
        for (p, tp) in progs.iter().zip(tps) {
            links.push(
                attach(p, tp)
                    .map_err(|e| io::Error::new(e.kind(), format!("attaching to {tp}: {e}")))?,
            );
        }
        Ok(BlockTimer {
            _links: links,
            _progs: progs,
            _keys: vec![bio_map, rq_map],
            hists: [h_total, h_dev, h_blk],
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_log_linear() {
        assert_eq!(bucket_value(7), 7);
        // msb 4 (16..31): buckets 16..19 cover 16-19, 20-23, 24-27, 28-31
        assert_eq!(bucket_value(16), 18);
        assert_eq!(bucket_value(19), 30);
        // 1000 ns: msb 9 → bucket 16 + 5·4 + ((1000 >> 7) & 3) = 36 + 3 = 39
        let v = bucket_value(39);
        assert!((v as f64 - 1000.0).abs() / 1000.0 < 0.125, "{v}");
    }

    #[test]
    fn programs_load_where_permitted() {
        match BlockTimer::start(std::process::id()) {
            Ok(t) => {
                let (a, b, _) = t.read_parts().unwrap();
                assert_eq!(a.count, 0);
                assert_eq!(b.count, 0);
            }
            Err(e) => eprintln!("skipped: eBPF not permitted here: {e}"),
        }
    }
}
