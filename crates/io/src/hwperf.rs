//! Hardware performance counters in counting mode: unhalted core cycles and
//! retired instructions on every CPU, system-wide (every process, kernel and
//! user). Per CPU the two events form one group, so the PMU schedules them
//! together and their ratio (IPC) covers the same instants. No sampling, no
//! ring buffer: the counts are read once at the end of the window.
//!
//! A machine without a performance-monitoring unit — most virtual machines
//! without a virtual PMU — refuses the events (ENOENT or EOPNOTSUPP); the
//! error goes back to the caller, which says so. System-wide counting needs
//! `perf_event_paranoid` ≤ 0 or CAP_PERFMON/root (EACCES otherwise).

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd};

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
/// Apply an ENABLE/DISABLE ioctl to the whole group.
const PERF_IOC_FLAG_GROUP: libc::c_ulong = 1;

/// One event's count and how long it was enabled and actually on the PMU
/// (less than enabled when the PMU was multiplexed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    pub value: u64,
    pub enabled_ns: u64,
    pub running_ns: u64,
}

impl Reading {
    /// Parse the three u64 of a `read(2)` with
    /// TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING.
    fn from_bytes(b: &[u8; 24]) -> Reading {
        let u = |i: usize| u64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        Reading {
            value: u(0),
            enabled_ns: u(1),
            running_ns: u(2),
        }
    }
}

/// Cycles and instructions of one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuReading {
    pub cpu: u32,
    pub cycles: Reading,
    pub instructions: Reading,
}

/// One group per CPU: cycles (the leader) and instructions.
struct Group {
    cpu: u32,
    cycles: File,
    instructions: File,
}

/// Open one counting event and own its fd.
fn counter(config: u64, cpu: u32, leader: Option<&File>) -> io::Result<File> {
    let group = leader.map_or(-1, |l| l.as_raw_fd());
    let fd = crate::perf::open_counter(PERF_TYPE_HARDWARE, config, cpu, group)?;
    // SAFETY: fd was just returned by perf_event_open and nothing else owns
    // it; the File closes it once.
    Ok(unsafe { File::from_raw_fd(fd) })
}

fn read_event(f: &File) -> io::Result<Reading> {
    let mut b = [0u8; 24];
    (&*f).read_exact(&mut b)?;
    Ok(Reading::from_bytes(&b))
}

/// Cycles and instructions counters on a set of CPUs, disabled until
/// [`HwCounters::enable`].
pub struct HwCounters {
    groups: Vec<Group>,
}

impl HwCounters {
    /// Open the counters on each of `cpus`; the first refusal is returned.
    pub fn open(cpus: &[u32]) -> io::Result<HwCounters> {
        let mut groups = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let cycles = counter(PERF_COUNT_HW_CPU_CYCLES, cpu, None)?;
            let instructions = counter(PERF_COUNT_HW_INSTRUCTIONS, cpu, Some(&cycles))?;
            groups.push(Group {
                cpu,
                cycles,
                instructions,
            });
        }
        Ok(HwCounters { groups })
    }

    fn ioctl_all(&self, req: libc::c_ulong) {
        for g in &self.groups {
            // SAFETY: the fd is ours and open; ENABLE/DISABLE take an integer
            // flag argument.
            unsafe { libc::ioctl(g.cycles.as_raw_fd(), req as _, PERF_IOC_FLAG_GROUP) };
        }
    }

    /// Start counting (the window opens).
    pub fn enable(&self) {
        self.ioctl_all(PERF_EVENT_IOC_ENABLE);
    }

    /// Stop counting (the window closes).
    pub fn disable(&self) {
        self.ioctl_all(PERF_EVENT_IOC_DISABLE);
    }

    /// The counts so far, per CPU.
    pub fn read(&self) -> io::Result<Vec<CpuReading>> {
        self.groups
            .iter()
            .map(|g| {
                Ok(CpuReading {
                    cpu: g.cpu,
                    cycles: read_event(&g.cycles)?,
                    instructions: read_event(&g.instructions)?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_is_value_enabled_running_in_that_order() {
        let mut b = [0u8; 24];
        b[0..8].copy_from_slice(&7u64.to_ne_bytes());
        b[8..16].copy_from_slice(&100u64.to_ne_bytes());
        b[16..24].copy_from_slice(&50u64.to_ne_bytes());
        assert_eq!(
            Reading::from_bytes(&b),
            Reading {
                value: 7,
                enabled_ns: 100,
                running_ns: 50
            }
        );
    }

    /// Where the machine has counters (and we may count system-wide), a
    /// loop of ten million additions retires at least that many
    /// instructions on some CPU; elsewhere the refusal is an OS error, never
    /// a panic or a silent zero.
    #[test]
    fn counters_count_a_busy_loop_or_refuse() {
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
        let cpus: Vec<u32> = ssdready_core::units::parse_cpu_list(online.trim())
            .unwrap_or_else(|_| vec![0])
            .into_iter()
            .map(|c| c as u32)
            .collect();
        let c = match HwCounters::open(&cpus) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("no hardware counters here: {e}");
                assert!(e.raw_os_error().is_some());
                return;
            }
        };
        c.enable();
        let mut x = 0u64;
        for i in 0..10_000_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        c.disable();
        let r = c.read().expect("read");
        assert_eq!(r.len(), cpus.len());
        if r.iter()
            .all(|c| c.instructions.running_ns == c.instructions.enabled_ns)
        {
            let instructions: u64 = r.iter().map(|c| c.instructions.value).sum();
            let cycles: u64 = r.iter().map(|c| c.cycles.value).sum();
            assert!(instructions >= 10_000_000, "{instructions} instructions");
            assert!(cycles > 0);
        }
    }
}
