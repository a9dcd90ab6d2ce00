//! Where a worker runs and what priority its I/O has, set on the worker's
//! own thread before its engine allocates buffers:
//!
//! * NUMA: the CPUs of `numa_cpu_nodes` (from
//!   `/sys/devices/system/node/nodeN/cpulist`), and the memory policy of
//!   `numa_mem_policy` (`set_mempolicy(2)`: `MPOL_DEFAULT`, `MPOL_PREFERRED`,
//!   `MPOL_BIND`, `MPOL_INTERLEAVE`, `MPOL_LOCAL`) — fio calls libnuma for
//!   the same system calls. A node this machine lacks is refused, naming
//!   the nodes it has.
//! * I/O priority: `ioprio_set(IOPRIO_WHO_PROCESS, 0, value)` for the
//!   calling thread (`prioclass`/`prio`), which its I/O inherits.

use ssdready_core::sched::{IoPrio, MemPolicy};

const NODE_DIR: &str = "/sys/devices/system/node";

/// Why a NUMA node or an I/O priority could not be had; each message
/// names the option.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    /// A node this machine lacks.
    #[error(
        "option '{option}': NUMA node {node} does not exist on this machine \
         (/sys/devices/system/node/node{node} is missing; nodes here: {})",
        list(.online)
    )]
    NoSuchNode {
        option: &'static str,
        node: u32,
        online: Vec<u32>,
    },
    /// A node's CPU list could not be read.
    #[error("option 'numa_cpu_nodes': cannot read {path}")]
    CpuList { path: String },
    /// The nodes named have no CPUs.
    #[error("option 'numa_cpu_nodes': the nodes have no CPUs")]
    NoCpus,
    /// `set_mempolicy(2)` refused.
    #[error("option 'numa_mem_policy': set_mempolicy failed: {err}")]
    MemPolicy { err: std::io::Error },
    /// `ioprio_set(2)` refused.
    #[error(
        "option 'prioclass'/'prio': ioprio_set(class {class}, level {level}) failed: {err}{}",
        realtime_note(*.class)
    )]
    IoPrio {
        class: u8,
        level: u8,
        err: std::io::Error,
    },
}

fn list(nodes: &[u32]) -> String {
    nodes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn realtime_note(class: u8) -> &'static str {
    if class == 1 {
        " (the real-time class needs CAP_SYS_ADMIN)"
    } else {
        ""
    }
}

/// The NUMA nodes this machine has (from sysfs; `[0]` when the kernel has
/// no NUMA support, as on a one-node machine).
pub fn online_nodes() -> Vec<u32> {
    std::fs::read_to_string(format!("{NODE_DIR}/online"))
        .ok()
        .and_then(|s| ssdready_core::units::parse_cpu_list(s.trim()).ok())
        .map(|v| v.into_iter().map(|n| n as u32).collect())
        .unwrap_or_else(|| vec![0])
}

/// Refuse nodes the machine lacks: one line naming the option, the node
/// and the nodes there are.
pub fn check_nodes(option: &'static str, nodes: &[u32]) -> Result<(), PlacementError> {
    let online = online_nodes();
    match nodes.iter().find(|n| !online.contains(n)) {
        None => Ok(()),
        Some(&node) => Err(PlacementError::NoSuchNode {
            option,
            node,
            online,
        }),
    }
}

/// The CPUs of `nodes`, sorted.
pub fn node_cpus(nodes: &[u32]) -> Result<Vec<usize>, PlacementError> {
    check_nodes("numa_cpu_nodes", nodes)?;
    let mut cpus = Vec::new();
    for n in nodes {
        let path = format!("{NODE_DIR}/node{n}/cpulist");
        let list = std::fs::read_to_string(&path);
        match list
            .ok()
            .and_then(|s| ssdready_core::units::parse_cpu_list(s.trim()).ok())
        {
            Some(c) => cpus.extend(c),
            // A kernel without NUMA has no node directory: node 0 is the
            // whole machine.
            None if *n == 0 => cpus.extend(0..num_cpus()),
            None => return Err(PlacementError::CpuList { path }),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(PlacementError::NoCpus);
    }
    Ok(cpus)
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

const MPOL_DEFAULT: i32 = 0;
const MPOL_PREFERRED: i32 = 1;
const MPOL_BIND: i32 = 2;
const MPOL_INTERLEAVE: i32 = 3;
const MPOL_LOCAL: i32 = 4;

/// Set the calling thread's memory policy.
pub fn set_mem_policy(policy: &MemPolicy) -> Result<(), PlacementError> {
    check_nodes("numa_mem_policy", &policy.nodes())?;
    let mode = match policy {
        MemPolicy::Default => MPOL_DEFAULT,
        MemPolicy::Prefer(_) => MPOL_PREFERRED,
        MemPolicy::Bind(_) => MPOL_BIND,
        MemPolicy::Interleave(_) => MPOL_INTERLEAVE,
        MemPolicy::Local => MPOL_LOCAL,
    };
    let nodes = policy.nodes();
    let words = nodes
        .iter()
        .map(|&n| n as usize / 64 + 1)
        .max()
        .unwrap_or(1);
    let mut mask = vec![0 as libc::c_ulong; words];
    for n in nodes {
        mask[n as usize / 64] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if matches!(policy, MemPolicy::Default | MemPolicy::Local) {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), words * 64 + 1)
    };
    // SAFETY: set_mempolicy reads `maxnode - 1` bits from `ptr`, which
    // points at `words` initialised words we own (or is null with 0).
    let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode as libc::c_ulong) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return Err(PlacementError::MemPolicy { err });
    }
    Ok(())
}

/// The calling thread's memory policy mode (for tests): `MPOL_*`.
pub fn mem_policy_mode() -> Result<i32, std::io::Error> {
    let mut mode: i32 = -1;
    // SAFETY: get_mempolicy writes one int to `mode`; the node mask
    // pointer is null with maxnode 0, addr 0 and flags 0 (the thread's
    // policy).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut i32,
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(mode)
}

const IOPRIO_WHO_PROCESS: i32 = 1;

/// Give the calling thread I/O priority `prio` (`ioprio_set`).
pub fn set_thread_ioprio(prio: IoPrio) -> Result<(), PlacementError> {
    // SAFETY: ioprio_set takes three integers; 0 is the calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            i32::from(prio.value()),
        )
    };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return Err(PlacementError::IoPrio {
            class: prio.class,
            level: prio.level,
            err,
        });
    }
    Ok(())
}

/// The calling thread's I/O priority value (`ioprio_get`).
pub fn thread_ioprio() -> Result<u16, std::io::Error> {
    // SAFETY: ioprio_get takes two integers; 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(rc as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_numa_nodes_are_refused_naming_the_nodes_there_are() {
        let e = check_nodes("numa_cpu_nodes", &[4095])
            .unwrap_err()
            .to_string();
        assert!(e.contains("NUMA node 4095 does not exist"), "{e}");
        assert!(e.contains("nodes here: 0"), "{e}");
        assert!(node_cpus(&[0]).is_ok_and(|c| !c.is_empty()));
    }

    #[test]
    fn mem_policy_and_ioprio_apply_to_the_calling_thread() {
        std::thread::spawn(|| {
            set_mem_policy(&MemPolicy::Bind(vec![0])).unwrap();
            assert_eq!(mem_policy_mode().unwrap(), MPOL_BIND);
            set_mem_policy(&MemPolicy::Interleave(vec![0])).unwrap();
            assert_eq!(mem_policy_mode().unwrap(), MPOL_INTERLEAVE);
            set_mem_policy(&MemPolicy::Default).unwrap();
            assert_eq!(mem_policy_mode().unwrap(), MPOL_DEFAULT);
            let idle = IoPrio {
                class: 3,
                ..IoPrio::default()
            };
            set_thread_ioprio(idle).unwrap();
            assert_eq!(thread_ioprio().unwrap(), 0x6000);
        })
        .join()
        .unwrap();
    }
}
