//! The four block-tracepoint programs, assembled from Rust.
//!
//! All four share one table of request slots, keyed by the `struct request`
//! pointer the tracepoints pass (never by sector, which the block layer
//! changes as a request completes):
//!
//! | offset | field                                   | written by   |
//! |--------|-----------------------------------------|--------------|
//! | 0      | request pointer (0 = free)              | io_start / io_done |
//! | 8      | `block_io_start` time                   | io_start     |
//! | 16     | `block_rq_issue` time (0 once consumed) | rq_issue / rq_complete |
//! | 24     | sector (tp_btf only)                    | io_start     |
//! | 32     | the bio's device, kernel dev_t (tp_btf only) | io_start |
//! | 40     | `block_rq_insert` time, 0 if never inserted (tp_btf only) | io_start / rq_insert |
//!
//! * `block_io_start`: only for this process's threads (tgid), so only the
//!   run's own I/O counts; claims the slot.
//! * `block_rq_insert` (tp_btf only): the request went into an I/O
//!   scheduler's (or a software) queue rather than straight to the driver.
//! * `block_rq_issue`: a request we started (the pointer matches, whichever
//!   thread issues it: a kworker dispatching from a scheduler counts too);
//!   io_start → rq_issue into the block-layer histogram.
//! * `block_rq_complete`: rq_issue → now into the driver-and-device
//!   histogram; with BTF, publishes (sector, dev, io_start, rq_issue, now) in
//!   the join table for the worker that submitted the I/O (see
//!   [`super::JoinTable`]).
//! * `block_io_done`: io_start → now into the block-and-below histogram;
//!   frees the slot.
//!
//! Each program reads the clock first, so its own work stays outside the
//! deltas. Histograms are per-CPU arrays (no atomics): 16 exact buckets, then
//! 4 per power of two, then the sum.

/// Histogram slots: 16 exact + 4 per power of two up to 2^63, then the sum.
pub const HIST_BUCKETS: u32 = 16 + 4 * 60;
pub(super) const SLOT_SUM: u32 = HIST_BUCKETS;

/// Slots of the request table: `(pointer >> 6) & (SLOTS − 1)`. Requests come
/// from small, contiguous tag pools, so in-flight requests rarely share a
/// slot; every later program checks the pointer, so a collision loses one
/// sample rather than corrupting one.
pub(super) const SLOTS: u32 = 1 << 16;
pub(super) const SLOT_BYTES: u32 = 48;

/// Join-table slots (a power of two) and their size: sector, dev, io_start,
/// rq_insert, rq_issue, rq_complete.
pub(super) const JOIN_BITS: u32 = 16;
pub(super) const JOIN_BYTES: u32 = 48;
/// The multiplier of the join table's hash (Fibonacci hashing).
pub(super) const JOIN_MULT: u64 = 0x9e37_79b9_7f4a_7c15;

/// Where the join table puts (dev, sector): the user side computes the same.
pub fn join_slot(dev: u32, sector: u64) -> usize {
    ((sector ^ dev as u64).wrapping_mul(JOIN_MULT) >> (64 - JOIN_BITS)) as usize
}

/// Byte offsets in the running kernel's structs, from its BTF. With them the
/// programs are `tp_btf` and read the request's sector and device directly.
#[derive(Clone, Copy, Debug)]
pub struct BtfLayout {
    /// Type ids of `btf_trace_block_io_start`, `…_rq_issue`,
    /// `…_rq_complete`, `…_io_done`, `…_rq_insert`.
    pub attach_ids: [u32; 5],
    /// `struct request`: `__sector` (u64), `bio` (pointer).
    pub rq_sector: u32,
    pub rq_bio: u32,
    /// `struct bio`: `bi_bdev` (pointer; the partition when there is one).
    pub bio_bdev: u32,
    /// `struct block_device`: `bd_dev` (u32).
    pub bdev_dev: u32,
}

/// The tracepoints, in the order of [`BtfLayout::attach_ids`]; the last,
/// `block_rq_insert`, is used by the tp_btf flavour only.
pub const TRACEPOINTS: [&str; 5] = [
    "block_io_start",
    "block_rq_issue",
    "block_rq_complete",
    "block_io_done",
    "block_rq_insert",
];

/// A tiny BPF assembler with forward labels.
#[derive(Default)]
pub(super) struct Asm {
    code: Vec<u64>,
    fixups: Vec<(usize, &'static str)>,
    labels: Vec<(&'static str, usize)>,
}

impl Asm {
    pub(super) fn raw(&mut self, op: u8, dst: u8, src: u8, off: i16, imm: i32) {
        let w = op as u64
            | ((dst as u64 | (src as u64) << 4) << 8)
            | ((off as u16 as u64) << 16)
            | ((imm as u32 as u64) << 32);
        self.code.push(w);
    }
    pub(super) fn jmp(&mut self, op: u8, dst: u8, src: u8, imm: i32, to: &'static str) {
        self.fixups.push((self.code.len(), to));
        self.raw(op, dst, src, 0, imm);
    }
    pub(super) fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.code.len()));
    }
    pub(super) fn ld_map(&mut self, dst: u8, fd: i32) {
        self.raw(0x18, dst, 1, 0, fd); // BPF_LD|DW|IMM, src = BPF_PSEUDO_MAP_FD
        self.raw(0, 0, 0, 0, 0);
    }
    pub(super) fn ld_imm64(&mut self, dst: u8, v: u64) {
        self.raw(0x18, dst, 0, 0, v as u32 as i32);
        self.raw(0, 0, 0, 0, (v >> 32) as u32 as i32);
    }
    pub(super) fn finish(mut self) -> Vec<u64> {
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
pub(super) const LDX_DW: u8 = 0x79;
pub(super) const LDX_W: u8 = 0x61;
pub(super) const STX_DW: u8 = 0x7b;
pub(super) const STX_W: u8 = 0x63;
pub(super) const ST_DW: u8 = 0x7a;
pub(super) const MOV_K: u8 = 0xb7;
pub(super) const MOV_X: u8 = 0xbf;
pub(super) const MOV32_X: u8 = 0xbc;
pub(super) const ADD_K: u8 = 0x07;
pub(super) const ADD_X: u8 = 0x0f;
pub(super) const SUB_X: u8 = 0x1f;
pub(super) const MUL_X: u8 = 0x2f;
pub(super) const XOR_X: u8 = 0xaf;
pub(super) const RSH_K: u8 = 0x77;
pub(super) const RSH_X: u8 = 0x7f;
pub(super) const LSH_K: u8 = 0x67;
pub(super) const AND_K: u8 = 0x57;
pub(super) const JEQ_K: u8 = 0x15;
pub(super) const JNE_K: u8 = 0x55;
pub(super) const JNE_X: u8 = 0x5d;
pub(super) const JGT_K: u8 = 0x25;
pub(super) const JLT_K: u8 = 0xa5;
pub(super) const JLT_X: u8 = 0xad;
pub(super) const CALL: u8 = 0x85;
pub(super) const EXIT: u8 = 0x95;

pub(super) const HELPER_LOOKUP: i32 = 1;
pub(super) const HELPER_KTIME: i32 = 5;
pub(super) const HELPER_PID_TGID: i32 = 14;

/// The maps a program refers to, by fd.
#[derive(Clone, Copy)]
pub(super) struct Maps {
    pub slots: i32,
    pub join: Option<i32>,
    /// block-and-below, driver-and-device, block layer.
    pub hists: [i32; 3],
}

/// Prologue: r6 = the request (args[0]), r8 = now.
fn prologue(a: &mut Asm) {
    a.raw(LDX_DW, 6, 1, 0, 0);
    a.raw(CALL, 0, 0, 0, HELPER_KTIME); // the time first: nothing of ours inside it
    a.raw(MOV_X, 8, 0, 0, 0);
}

/// r7 = this request's slot, or out. With `check`, also out unless the slot
/// holds this request.
fn lookup_slot(a: &mut Asm, map: i32, check: bool) {
    a.ld_map(1, map);
    // The low 32 bits, as a scalar: the verifier forbids shifting a
    // BTF-typed pointer but lets a privileged program copy part of one.
    a.raw(MOV32_X, 2, 6, 0, 0);
    a.raw(RSH_K, 2, 0, 0, 6);
    a.raw(AND_K, 2, 0, 0, (SLOTS - 1) as i32);
    a.raw(STX_W, 10, 2, -4, 0);
    a.raw(MOV_X, 2, 10, 0, 0);
    a.raw(ADD_K, 2, 0, 0, -4);
    a.raw(CALL, 0, 0, 0, HELPER_LOOKUP);
    a.jmp(JEQ_K, 0, 0, 0, "out");
    a.raw(MOV_X, 7, 0, 0, 0);
    if check {
        a.raw(LDX_DW, 1, 7, 0, 0);
        a.jmp(JNE_X, 1, 6, 0, "out"); // not ours (or a collision)
    }
}

/// Add r8 (a delta, ns) to histogram `hist`; clobbers r0–r5, r9.
fn add_to_hist(a: &mut Asm, hist: i32) {
    a.raw(MOV_X, 9, 8, 0, 0);
    a.jmp(JLT_K, 8, 0, 16, "have_bucket");
    // r2 = msb(r8) by binary search.
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
    // bucket = 16 + (msb − 4)·4 + ((delta >> (msb − 2)) & 3) = 4·msb + sub
    a.raw(MOV_X, 9, 8, 0, 0);
    a.raw(MOV_X, 3, 2, 0, 0);
    a.raw(ADD_K, 3, 0, 0, -2);
    a.raw(RSH_X, 9, 3, 0, 0);
    a.raw(AND_K, 9, 0, 0, 3);
    a.raw(LSH_K, 2, 0, 0, 2);
    a.raw(ADD_X, 9, 2, 0, 0);
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
    a.raw(ADD_X, 1, 8, 0, 0);
    a.raw(STX_DW, 0, 1, (SLOT_SUM * 8) as i16, 0);
    a.jmp(JGT_K, 9, 0, (HIST_BUCKETS - 1) as i32, "out"); // bounds, for the verifier
    a.raw(LSH_K, 9, 0, 0, 3);
    a.raw(ADD_X, 0, 9, 0, 0);
    a.raw(LDX_DW, 1, 0, 0, 0);
    a.raw(ADD_K, 1, 0, 0, 1);
    a.raw(STX_DW, 0, 1, 0, 0);
}

fn epilogue(mut a: Asm) -> Vec<u64> {
    a.label("out");
    a.raw(MOV_K, 0, 0, 0, 0);
    a.raw(EXIT, 0, 0, 0, 0);
    a.finish()
}

/// `block_io_start`: claim a slot for this process's request.
pub(super) fn io_start(m: Maps, tgid: u32, btf: Option<&BtfLayout>) -> Vec<u64> {
    let mut a = Asm::default();
    prologue(&mut a);
    a.raw(CALL, 0, 0, 0, HELPER_PID_TGID);
    a.raw(RSH_K, 0, 0, 0, 32);
    a.jmp(JNE_K, 0, 0, tgid as i32, "out");
    lookup_slot(&mut a, m.slots, false);
    a.raw(STX_DW, 7, 6, 0, 0);
    a.raw(STX_DW, 7, 8, 8, 0);
    a.raw(ST_DW, 7, 0, 16, 0);
    a.raw(ST_DW, 7, 0, 40, 0);
    if let Some(l) = btf {
        // Direct loads through the BTF-typed request pointer (tp_btf).
        a.raw(LDX_DW, 1, 6, l.rq_sector as i16, 0);
        a.raw(STX_DW, 7, 1, 24, 0);
        // rq->bio->bi_bdev->bd_dev (rq->part is not set yet at io_start).
        a.raw(MOV_K, 2, 0, 0, 0);
        a.raw(LDX_DW, 1, 6, l.rq_bio as i16, 0);
        a.jmp(JEQ_K, 1, 0, 0, "no_dev");
        a.raw(LDX_DW, 1, 1, l.bio_bdev as i16, 0);
        a.jmp(JEQ_K, 1, 0, 0, "no_dev");
        a.raw(LDX_W, 2, 1, l.bdev_dev as i16, 0);
        a.label("no_dev");
        a.raw(STX_DW, 7, 2, 32, 0);
    }
    epilogue(a)
}

/// A program that returns at once (the floor of the tracepoints' cost).
pub(super) fn empty() -> Vec<u64> {
    epilogue(Asm::default())
}

/// `block_rq_insert`: stamp the insertion into a queue above the driver.
pub(super) fn rq_insert(m: Maps) -> Vec<u64> {
    let mut a = Asm::default();
    prologue(&mut a);
    lookup_slot(&mut a, m.slots, true);
    a.raw(STX_DW, 7, 8, 40, 0);
    epilogue(a)
}

/// `block_rq_issue`: stamp the issue; io_start → now is the block layer.
pub(super) fn rq_issue(m: Maps) -> Vec<u64> {
    let mut a = Asm::default();
    prologue(&mut a);
    lookup_slot(&mut a, m.slots, true);
    a.raw(LDX_DW, 9, 7, 8, 0);
    a.jmp(JEQ_K, 9, 0, 0, "out");
    a.raw(STX_DW, 7, 8, 16, 0);
    a.raw(SUB_X, 8, 9, 0, 0);
    add_to_hist(&mut a, m.hists[2]);
    epilogue(a)
}

/// `block_rq_complete`: issue → now is the driver and the device. The issue
/// stamp is consumed, so a partial completion counts once. With a join
/// table, publish the I/O's kernel times for the worker that submitted it.
pub(super) fn rq_complete(m: Maps) -> Vec<u64> {
    let mut a = Asm::default();
    prologue(&mut a);
    lookup_slot(&mut a, m.slots, true);
    a.raw(LDX_DW, 9, 7, 16, 0);
    a.jmp(JEQ_K, 9, 0, 0, "out");
    a.raw(ST_DW, 7, 0, 16, 0);
    if let Some(join) = m.join {
        // key = ((sector ^ dev) · JOIN_MULT) >> (64 − JOIN_BITS)
        a.raw(LDX_DW, 1, 7, 24, 0);
        a.raw(LDX_DW, 2, 7, 32, 0);
        a.raw(XOR_X, 1, 2, 0, 0);
        a.ld_imm64(3, JOIN_MULT);
        a.raw(MUL_X, 1, 3, 0, 0);
        a.raw(RSH_K, 1, 0, 0, (64 - JOIN_BITS) as i32);
        a.raw(STX_W, 10, 1, -8, 0);
        a.ld_map(1, join);
        a.raw(MOV_X, 2, 10, 0, 0);
        a.raw(ADD_K, 2, 0, 0, -8);
        a.raw(CALL, 0, 0, 0, HELPER_LOOKUP);
        a.jmp(JEQ_K, 0, 0, 0, "joined");
        // Invalidate the sector first and write it last: a reader that sees
        // the same sector before and after reading the times read one entry.
        a.raw(ST_DW, 0, 0, 0, -1);
        a.raw(LDX_DW, 1, 7, 32, 0);
        a.raw(STX_DW, 0, 1, 8, 0);
        a.raw(LDX_DW, 1, 7, 8, 0);
        a.raw(STX_DW, 0, 1, 16, 0);
        a.raw(LDX_DW, 1, 7, 40, 0);
        a.raw(STX_DW, 0, 1, 24, 0);
        a.raw(STX_DW, 0, 9, 32, 0);
        a.raw(STX_DW, 0, 8, 40, 0);
        a.raw(LDX_DW, 1, 7, 24, 0);
        a.raw(STX_DW, 0, 1, 0, 0);
        a.label("joined");
    }
    a.raw(SUB_X, 8, 9, 0, 0);
    add_to_hist(&mut a, m.hists[1]);
    epilogue(a)
}

/// `block_io_done`: io_start → now is everything from the block layer down;
/// free the slot.
pub(super) fn io_done(m: Maps) -> Vec<u64> {
    let mut a = Asm::default();
    prologue(&mut a);
    lookup_slot(&mut a, m.slots, true);
    a.raw(LDX_DW, 9, 7, 8, 0);
    a.raw(ST_DW, 7, 0, 0, 0); // free the slot
    a.jmp(JEQ_K, 9, 0, 0, "out");
    a.raw(SUB_X, 8, 9, 0, 0);
    add_to_hist(&mut a, m.hists[0]);
    epilogue(a)
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
    fn join_slots_spread_neighbouring_sectors() {
        let mut seen = std::collections::HashSet::new();
        for s in 0..4096u64 {
            assert!(join_slot(7 << 20, s * 8) < 1 << JOIN_BITS);
            seen.insert(join_slot(7 << 20, s * 8));
        }
        assert!(seen.len() > 4000, "{}", seen.len());
    }
}
