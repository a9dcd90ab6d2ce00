//! System-wide CPU sampling with `perf_event_open(2)`: `cpu-clock`
//! software events on every CPU at a fixed period (1 ms of CPU time per
//! sample at ssdready's default 1 kHz), read from each event's mmap'ed ring buffer. Symbols
//! and classification are the probe crate's business; this module only
//! moves bytes.
//!
//! Unwinding a kernel call chain is most of a sample's cost (measured on the
//! project's VM: sampling at 10 kHz cost ~1 % of a loop device's IOPS
//! without call chains, 3–6 % with them). So a sampler can run two events
//! per CPU: the *timing* event at the full rate records IP, task, CPU and
//! time — every CPU-second is accounted by it — and a *chain* event at
//! 1/`chain_every` of the rate records call chains, from which the
//! classifier learns the callers of functions whose own name does not say
//! their layer (locks, clock reads, helpers).
//!
//! Needs `perf_event_paranoid` ≤ 0 or CAP_PERFMON/root for system-wide
//! sampling; the error says so.

use std::sync::atomic::{fence, Ordering};

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
const PERF_SAMPLE_IP: u64 = 1;
const PERF_SAMPLE_TID: u64 = 1 << 1;
const PERF_SAMPLE_TIME: u64 = 1 << 2;
const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;
const PERF_SAMPLE_CPU: u64 = 1 << 7;
const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_SAMPLE: u32 = 9;
const PERF_RECORD_THROTTLE: u32 = 5;
const PERF_RECORD_MISC_CPUMODE_MASK: u16 = 7;
const PERF_RECORD_MISC_USER: u16 = 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
/// Data pages per CPU (power of two): 512 KiB holds ~2,500 samples.
const DATA_PAGES: usize = 128;

/// `struct perf_event_attr`, PERF_ATTR_SIZE_VER5 (112 bytes).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
}

/// Open a counting event (no sampling, no ring buffer) of `type_`/`config`
/// on `cpu`, system-wide, reading value, time enabled and time running.
/// `group` is the leader's fd or -1; a leader starts disabled, a member
/// enabled (it then counts whenever its leader does). Used by
/// [`crate::hwperf`].
pub(crate) fn open_counter(type_: u32, config: u64, cpu: u32, group: i32) -> std::io::Result<i32> {
    const READ_TIMES: u64 = 1 | 2; // TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
    let attr = PerfEventAttr {
        type_,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format: READ_TIMES,
        flags: (group < 0) as u64, // bit 0: disabled
        ..PerfEventAttr::default()
    };
    perf_event_open(&attr, cpu, group)
}

/// perf_event_open(2) of `attr` on `cpu`, every task, in `group` (-1: none).
fn perf_event_open(attr: &PerfEventAttr, cpu: u32, group: i32) -> std::io::Result<i32> {
    // SAFETY: attr is a valid, fully initialised perf_event_attr that lives
    // across the call; the other arguments are plain integers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const PerfEventAttr,
            -1 as libc::pid_t,
            cpu as libc::c_int,
            group as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    } as i32;
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// One sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    pub cpu: u32,
    pub pid: u32,
    pub tid: u32,
    /// Taken in user mode.
    pub user: bool,
    /// CPU time this sample stands for: the time since the previous sample
    /// on its CPU (the timer may fire late and skip periods in a VM), capped
    /// at 100 periods.
    pub weight_ns: u64,
    pub ip: u64,
    /// Kernel return addresses, innermost first (context markers removed);
    /// empty for the timing event of a two-rate sampler.
    pub callchain: Vec<u64>,
    /// Whether the sample stands for CPU time (`weight_ns`); chain-event
    /// samples of a two-rate sampler only teach callers, weight 0.
    pub timing: bool,
}

/// Copy `out.len()` bytes starting at ring offset `off` (wrapping).
fn copy_ring(base: *mut u8, page: usize, data_size: u64, off: u64, out: &mut [u8]) {
    let start = (off % data_size) as usize;
    let first = out.len().min(data_size as usize - start);
    // SAFETY: both ranges lie inside the mapped data area that follows the
    // metadata page: [page + start, page + start + first) and
    // [page, page + out.len() - first), with start + first ≤ data_size.
    unsafe {
        std::ptr::copy_nonoverlapping(base.add(page + start), out.as_mut_ptr(), first);
        std::ptr::copy_nonoverlapping(
            base.add(page),
            out.as_mut_ptr().add(first),
            out.len() - first,
        );
    }
}

struct CpuBuffer {
    fd: i32,
    base: *mut u8,
    len: usize,
    page: usize,
    /// Records carry call chains.
    chains: bool,
    /// Records count for time (the timing event, or the only event).
    timing: bool,
}

/// The CPU time each timing sample stands for: the time since the previous
/// sample on its CPU, capped. The time since the last sample absorbs periods
/// the kernel skipped while the CPU was busy (timer interrupts held back by
/// an interrupt-disabled region). But a halted vCPU's timer fires late, so
/// the first sample after an idle gap lands in the first interruptible code
/// after wake-up (`_raw_spin_unlock_irq`, `finish_task_switch`); charging it
/// the whole gap inflated busy time 2-3× at QD 1. The part of a gap beyond
/// the cap is counted in `late_ns` and charged to no layer.
#[derive(Clone, Debug)]
pub struct SampleWeigher {
    last: Vec<u64>,
    period_ns: u64,
    max_weight_ns: u64,
    /// Time between samples beyond the cap, all CPUs.
    pub late_ns: u64,
    /// Per CPU: the time its samples stand for plus its late gaps. A CPU
    /// whose timer does not fire while it idles (seen on a 16-vCPU
    /// Firecracker guest: idle vCPUs gave no samples at all) covers less
    /// than the window; see [`SampleWeigher::unsampled_ns`].
    covered: Vec<u64>,
}

impl SampleWeigher {
    /// For `cpus` CPUs sampled every `period_ns`, a sample standing for at
    /// most `cap_periods` periods (≥ 1).
    pub fn new(cpus: u32, period_ns: u64, cap_periods: f64) -> Self {
        SampleWeigher {
            last: vec![0; cpus as usize],
            period_ns,
            max_weight_ns: (period_ns as f64 * cap_periods.max(1.0)) as u64,
            late_ns: 0,
            covered: vec![0; cpus as usize],
        }
    }

    /// CPU time of a `window_ns` window that no sample or late gap stands
    /// for, all CPUs: CPUs that idled with their sampling timer stopped, or
    /// whose sampling the kernel throttled. Charged to no layer.
    pub fn unsampled_ns(&self, window_ns: u64) -> u64 {
        self.covered
            .iter()
            .map(|&c| window_ns.saturating_sub(c))
            .sum()
    }

    /// The weight of a sample taken on `cpu` at `time_ns` (perf's clock).
    pub fn weigh(&mut self, cpu: u32, time_ns: u64) -> u64 {
        let Some(last) = self.last.get_mut(cpu as usize) else {
            return self.period_ns;
        };
        let gap = if *last > 0 && time_ns > *last {
            time_ns - *last
        } else {
            self.period_ns
        };
        *last = time_ns;
        let w = gap.min(self.max_weight_ns);
        self.late_ns += gap - w;
        self.covered[cpu as usize] += gap;
        w
    }
}

/// Samplers on every online CPU.
pub struct Sampler {
    bufs: Vec<CpuBuffer>,
    /// Records the kernel dropped because a buffer was full.
    pub lost: u64,
    /// Times the kernel throttled sampling (too much time in perf handlers).
    pub throttled: u64,
    /// What each timing sample stands for.
    pub weigher: SampleWeigher,
    period_ns: u64,
    scratch: Vec<u8>,
}

// SAFETY: the mapped buffers are owned by the Sampler and only touched
// through &mut self.
unsafe impl Send for Sampler {}

/// One `cpu-clock` event on `cpu` and its mapped ring buffer.
fn open_event(cpu: u32, period_ns: u64, chains: bool, timing: bool) -> std::io::Result<CpuBuffer> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let attr = PerfEventAttr {
        type_: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_SW_CPU_CLOCK,
        sample_period: period_ns,
        sample_type: PERF_SAMPLE_IP
            | PERF_SAMPLE_TID
            | PERF_SAMPLE_TIME
            | PERF_SAMPLE_CPU
            | if chains { PERF_SAMPLE_CALLCHAIN } else { 0 },
        // disabled (bit 0), exclude_callchain_user (bit 22)
        flags: 1 | (1 << 22),
        wakeup_events: 0,
        sample_max_stack: 64,
        ..PerfEventAttr::default()
    };
    let fd = perf_event_open(&attr, cpu, -1)?;
    let len = page * (1 + DATA_PAGES);
    // SAFETY: mapping a perf fd's ring buffer, as perf_event_open(2)
    // documents; the result is checked against MAP_FAILED.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        // SAFETY: fd is ours and open.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    Ok(CpuBuffer {
        fd,
        base: base.cast(),
        len,
        page,
        chains,
        timing,
    })
}

impl Sampler {
    /// Open a sampler on each of `cpus` CPUs with one sample per `period_ns`
    /// of CPU time. With `chain_every` = 1 every sample carries its kernel
    /// call chain; with N > 1 a second event per CPU records call chains once
    /// per N periods and the timing samples carry only their IP. Starts
    /// disabled; call [`Sampler::enable`].
    pub fn open(cpus: u32, period_ns: u64, chain_every: u64) -> std::io::Result<Sampler> {
        let mut s = Sampler {
            bufs: Vec::new(),
            lost: 0,
            throttled: 0,
            weigher: SampleWeigher::new(cpus, period_ns, 1.5),
            period_ns,
            scratch: Vec::new(),
        };
        for cpu in 0..cpus {
            if chain_every <= 1 {
                s.bufs.push(open_event(cpu, period_ns, true, true)?);
            } else {
                s.bufs.push(open_event(cpu, period_ns, false, true)?);
                s.bufs
                    .push(open_event(cpu, period_ns * chain_every, true, false)?);
            }
        }
        Ok(s)
    }

    /// The most CPU time one timing sample may stand for, in periods (1.5 in the sampler,
    /// unless changed): see [`SampleWeigher`].
    pub fn with_weight_cap(mut self, periods: f64) -> Self {
        self.weigher = SampleWeigher::new(self.weigher.last.len() as u32, self.period_ns, periods);
        self
    }

    /// CPU time between two timing samples, ns.
    pub fn period_ns(&self) -> u64 {
        self.period_ns
    }

    fn ioctl_all(&self, req: libc::c_ulong) {
        for b in &self.bufs {
            // SAFETY: the fds are ours; ENABLE/DISABLE take no argument.
            unsafe { libc::ioctl(b.fd, req as _, 0) };
        }
    }

    /// Start sampling.
    pub fn enable(&self) {
        self.ioctl_all(PERF_EVENT_IOC_ENABLE);
    }
    /// Stop sampling.
    pub fn disable(&self) {
        self.ioctl_all(PERF_EVENT_IOC_DISABLE);
    }

    /// Hand every sample waiting in the buffers to `f`.
    pub fn drain(&mut self, f: &mut dyn FnMut(&Sample)) {
        let mut sample = Sample {
            cpu: 0,
            pid: 0,
            tid: 0,
            user: false,
            weight_ns: 0,
            ip: 0,
            callchain: Vec::with_capacity(64),
            timing: true,
        };
        for i in 0..self.bufs.len() {
            let (base, page, len) = (self.bufs[i].base, self.bufs[i].page, self.bufs[i].len);
            let (chains, timing) = (self.bufs[i].chains, self.bufs[i].timing);
            let data_size = (len - page) as u64;
            // SAFETY: data_head/data_tail live at offsets 1024/1032 of the
            // first (metadata) page, which is mapped and 8-byte aligned; the
            // kernel writes head, we write tail, as the ABI prescribes.
            let head_ptr = unsafe { base.add(1024) } as *const u64;
            let tail_ptr = unsafe { base.add(1032) } as *mut u64;
            let head = unsafe { std::ptr::read_volatile(head_ptr) };
            fence(Ordering::Acquire);
            let mut tail = unsafe { std::ptr::read_volatile(tail_ptr) };
            while tail < head {
                let mut hdr = [0u8; 8];
                copy_ring(base, page, data_size, tail, &mut hdr);
                let ty = u32::from_ne_bytes(hdr[0..4].try_into().expect("4 bytes"));
                let misc = u16::from_ne_bytes(hdr[4..6].try_into().expect("2 bytes"));
                let size = u16::from_ne_bytes(hdr[6..8].try_into().expect("2 bytes")) as u64;
                if size < 8 {
                    break;
                }
                self.scratch.resize(size as usize - 8, 0);
                copy_ring(base, page, data_size, tail + 8, &mut self.scratch);
                tail += size;
                let rd = |b: &[u8], o: usize| {
                    u64::from_ne_bytes(b[o..o + 8].try_into().expect("8 bytes"))
                };
                match ty {
                    PERF_RECORD_SAMPLE if self.scratch.len() >= 32 + 8 * chains as usize => {
                        let b = &self.scratch;
                        sample.ip = rd(b, 0);
                        sample.pid = u32::from_ne_bytes(b[8..12].try_into().expect("4"));
                        sample.tid = u32::from_ne_bytes(b[12..16].try_into().expect("4"));
                        let time = rd(b, 16);
                        sample.cpu = u32::from_ne_bytes(b[24..28].try_into().expect("4"));
                        sample.timing = timing;
                        sample.weight_ns = 0;
                        if timing {
                            sample.weight_ns = self.weigher.weigh(sample.cpu, time);
                        }
                        sample.user = misc & PERF_RECORD_MISC_CPUMODE_MASK == PERF_RECORD_MISC_USER;
                        sample.callchain.clear();
                        if chains {
                            let nr = rd(b, 32) as usize;
                            for k in 0..nr.min((b.len() - 40) / 8) {
                                let ip = rd(b, 40 + 8 * k);
                                if ip < 0xffff_ffff_ffff_f000 {
                                    sample.callchain.push(ip);
                                }
                            }
                        }
                        f(&sample);
                    }
                    PERF_RECORD_LOST if self.scratch.len() >= 16 => {
                        self.lost += rd(&self.scratch, 8)
                    }
                    PERF_RECORD_THROTTLE => self.throttled += 1,
                    _ => {}
                }
            }
            fence(Ordering::Release);
            // SAFETY: see above; publishing how far we have read.
            unsafe { std::ptr::write_volatile(tail_ptr, tail) };
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        for b in &self.bufs {
            // SAFETY: unmapping and closing what open() mapped and opened.
            unsafe {
                libc::munmap(b.base.cast(), b.len);
                libc::close(b.fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CPU busy for 1 ms, halted for 3 ms with its timer held back, then
    /// busy 1 ms again, sampled every 100 µs: the late sample after the halt
    /// must not carry the 3 ms; busy time stays 2 ms (within a period) and
    /// all 5 ms are accounted, busy or late.
    /// Two CPUs over a 1 ms window sampled every 100 µs: one sampled
    /// throughout, one idle with its timer stopped (no sample at all, as on
    /// a 16-vCPU Firecracker guest): the idle one's whole window is
    /// unsampled, the busy one's is covered.
    #[test]
    fn a_cpu_that_gave_no_samples_is_unsampled_not_lost() {
        let mut w = SampleWeigher::new(2, 100_000, 2.0);
        let mut covered = 0;
        for k in 1..=10u64 {
            covered += w.weigh(0, k * 100_000);
        }
        assert_eq!(covered, 1_000_000);
        assert_eq!(w.unsampled_ns(1_000_000), 1_000_000);
        w.weigh(1, 500_000);
        assert_eq!(w.unsampled_ns(1_000_000), 900_000);
    }

    #[test]
    fn a_late_sample_after_an_idle_gap_is_not_charged_the_gap() {
        let mut w = SampleWeigher::new(1, 100_000, 1.5);
        let mut busy = 0;
        let mut t = 1_000_000;
        w.weigh(0, t); // the window's first sample
        for _ in 0..10 {
            t += 100_000;
            busy += w.weigh(0, t);
        }
        t += 3_000_000; // halted: no sample, the next one is late
        for _ in 0..10 {
            busy += w.weigh(0, t);
            t += 100_000;
        }
        let late = w.late_ns;
        assert!((1_900_000..=2_100_000).contains(&busy), "busy {busy}");
        assert_eq!(busy + late + 100_000, t - 1_000_000, "every ns accounted");
        // A skipped period while busy (timer held back by irqs-off) is kept.
        let mut w = SampleWeigher::new(1, 100_000, 1.5);
        w.weigh(0, 1_000);
        assert_eq!(w.weigh(0, 151_000), 150_000);
        assert_eq!(w.late_ns, 0);
    }

    #[test]
    fn attr_has_the_kernels_ver5_size() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 112);
    }

    #[test]
    fn samples_arrive_when_permitted() {
        let mut s = match Sampler::open(1, 100_000, 4) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skipped: perf_event_open refused: {e}");
                return;
            }
        };
        s.enable();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(100) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        s.disable();
        let (mut timing, mut chained) = (0, 0);
        s.drain(&mut |x| {
            if x.timing {
                timing += 1;
                assert!(x.callchain.is_empty() && x.weight_ns > 0);
            } else {
                chained += 1;
                assert_eq!(x.weight_ns, 0);
            }
        });
        assert!(timing > 0, "no samples in 100 ms");
        // One chain sample per 4 timing samples, give or take the edges.
        assert!(
            chained > 0 && chained <= timing / 2,
            "{chained} chained, {timing} timing"
        );
    }
}
