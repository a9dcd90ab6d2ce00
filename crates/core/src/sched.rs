//! Where and how a job's I/O is scheduled, beyond queue depth and rate:
//!
//! * **I/O priorities** (Linux `ioprio`): a value is a class (1 real-time,
//!   2 best-effort, 3 idle) and a level 0–7, `class << 13 | level`.
//!   `prioclass`/`prio` set the worker thread's priority (`ioprio_set`),
//!   which every I/O inherits; fio's cmdprio family gives some I/Os their
//!   own priority in the request itself (io_uring's `sqe->ioprio`, libaio's
//!   `aio_reqprio` with `IOCB_FLAG_IOPRIO`): `cmdprio_percentage` of them
//!   with `cmdprio_class`/`cmdprio`, or per block size with
//!   `cmdprio_bssplit`. As in fio, completion latencies are then also
//!   kept per priority ([`CmdPrio::values`]).
//! * **NUMA placement**: `numa_cpu_nodes` (the worker runs on the CPUs of
//!   those nodes) and `numa_mem_policy` (its memory, buffers included,
//!   comes from them: `set_mempolicy`).
//! * **Submission**: `io_submit_mode=offload` (fio's pool of submitter
//!   threads, one I/O each at a time) and `rate_process=poisson`
//!   (exponential gaps between rate-limited I/Os).
//! * **Latency target**: fio's search for the deepest queue whose
//!   `latency_percentile` of completions in each `latency_window` stay
//!   under `latency_target` ([`LatencyTarget`]).

use serde::{Deserialize, Serialize};

/// `IOPRIO_CLASS_RT`: cmdprio's default class.
pub const CLASS_RT: u8 = 1;

/// A Linux I/O priority: class and level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IoPrio {
    /// 0 none, 1 real-time, 2 best-effort, 3 idle.
    pub class: u8,
    /// 0 (highest) to 7.
    pub level: u8,
    /// A hint for the device (`cmdprio_bssplit`'s fifth field: a command
    /// duration limit descriptor where the drive has them; 0 none).
    #[serde(default)]
    pub hint: u8,
}

impl IoPrio {
    /// The kernel's value, `class << 13 | hint << 3 | level`.
    pub fn value(self) -> u16 {
        (u16::from(self.class) << 13) | (u16::from(self.hint) << 3) | u16::from(self.level)
    }
}

/// One `cmdprio_bssplit` entry: I/Os of `bs` bytes get `prio` with
/// probability `percent` %.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsPrio {
    pub bs: u32,
    pub percent: u8,
    /// None: the job's `cmdprio_class`/`cmdprio`.
    pub prio: Option<IoPrio>,
}

/// fio's cmdprio options, per direction (read, write).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdPrio {
    /// `cmdprio_percentage`.
    pub percentage: [u8; 2],
    /// `cmdprio_class` (None: real-time, fio's default).
    pub class: [Option<u8>; 2],
    /// `cmdprio` (None: 0).
    pub level: [Option<u8>; 2],
    /// `cmdprio_bssplit` (wins over `cmdprio_percentage`), sorted by size.
    pub bssplit: Option<[Vec<BsPrio>; 2]>,
}

impl CmdPrio {
    /// Whether any I/O gets a priority of its own.
    pub fn on(&self) -> bool {
        match &self.bssplit {
            Some(b) => b.iter().flatten().any(|e| e.percent > 0),
            None => self.percentage.iter().any(|&p| p > 0),
        }
    }

    /// The priority `cmdprio_class`/`cmdprio` give direction `d`.
    pub fn implicit(&self, d: usize) -> IoPrio {
        IoPrio {
            class: self.class[d].unwrap_or(CLASS_RT),
            level: self.level[d].unwrap_or(0),
            hint: 0,
        }
    }

    /// The priorities I/Os of direction `d` (0 read, 1 write) may carry,
    /// `default` (the thread's) first, each once, in fio's order: the
    /// index of a priority here is where its latencies are kept.
    pub fn values(&self, d: usize, default: IoPrio) -> Vec<IoPrio> {
        let mut v = vec![default];
        let mut add = |p: IoPrio| {
            if !v.contains(&p) {
                v.push(p);
            }
        };
        match &self.bssplit {
            Some(b) => b[d]
                .iter()
                .filter(|e| e.percent > 0)
                .for_each(|e| add(e.prio.unwrap_or(self.implicit(d)))),
            None if self.percentage[d] > 0 => add(self.implicit(d)),
            None => {}
        }
        v
    }

    /// The priority an I/O of direction `d` and `len` bytes gets for the
    /// draw `roll` (0–99), as fio's `fio_cmdprio_set_ioprio`: None when
    /// it keeps the thread's.
    pub fn pick(&self, d: usize, len: u32, roll: u32) -> Option<IoPrio> {
        match &self.bssplit {
            None => (roll < u32::from(self.percentage[d])).then(|| self.implicit(d)),
            Some(b) => {
                let mut acc = 0u32;
                for e in b[d].iter().filter(|e| e.bs == len && e.percent > 0) {
                    acc += u32::from(e.percent);
                    if roll < acc {
                        return Some(e.prio.unwrap_or(self.implicit(d)));
                    }
                }
                None
            }
        }
    }
}

/// `numa_mem_policy`'s mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemPolicy {
    /// The system's default policy.
    Default,
    /// Prefer one node, fall back to others.
    Prefer(u32),
    /// Only these nodes.
    Bind(Vec<u32>),
    /// Pages spread round-robin over these nodes.
    Interleave(Vec<u32>),
    /// The node the thread runs on.
    Local,
}

impl MemPolicy {
    /// The nodes the policy names.
    pub fn nodes(&self) -> Vec<u32> {
        match self {
            MemPolicy::Default | MemPolicy::Local => Vec::new(),
            MemPolicy::Prefer(n) => vec![*n],
            MemPolicy::Bind(v) | MemPolicy::Interleave(v) => v.clone(),
        }
    }
}

/// fio's latency target search (`latency_target` and friends).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    /// `latency_target`, ns.
    pub target_ns: u64,
    /// `latency_window`, ns (fio's default: 5 s is not a default; 0 means
    /// each check covers the I/Os since the last).
    pub window_ns: u64,
    /// `latency_percentile` (default 100).
    pub percentile: f64,
    /// `latency_run`: keep searching until the job ends instead of
    /// stopping at the depth found.
    pub keep_running: bool,
}

/// The job's scheduling options (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SchedSpec {
    /// `prioclass`, `prio`: the worker thread's priority (None: unset).
    pub prioclass: Option<u8>,
    pub prio: Option<u8>,
    pub cmdprio: CmdPrio,
    /// `log_prio`: the logs' last column is the I/O's priority value
    /// (fio's `0x%04x`) rather than 1 for real-time, 0 otherwise.
    pub log_prio: bool,
    /// `numa_cpu_nodes`.
    pub numa_cpu_nodes: Option<Vec<u32>>,
    /// `numa_mem_policy`.
    pub numa_mem_policy: Option<MemPolicy>,
    /// `io_submit_mode=offload`.
    pub offload: bool,
    /// `rate_process=poisson`.
    pub poisson: bool,
    /// `lat_from=schedule`: latency from each I/O's intended issue time
    /// ([`crate::arrivals`]); false: from its issue (fio's).
    #[serde(default)]
    pub lat_from_schedule: bool,
    /// `latency_target` and friends (None: no search).
    pub latency: Option<LatencyTarget>,
    /// `latency_window`, `latency_percentile`, `latency_run` as given,
    /// kept until `latency_target` turns the search on.
    pub latency_window_ns: u64,
    pub latency_percentile: Option<f64>,
    pub latency_run: bool,
    /// `cpu_latency_us` (ssdready's): the CPU wake-up latency held while
    /// the job runs, as a PM QoS request (None: none held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_latency_us: Option<u32>,
}

impl SchedSpec {
    /// The thread's priority (what I/Os without one of their own carry),
    /// as fio's `ioprio_value(prioclass, prio)`; None when neither is set.
    pub fn thread_prio(&self) -> Option<IoPrio> {
        if self.prioclass.is_none() && self.prio.is_none() {
            return None;
        }
        Some(IoPrio {
            // As fio's ioprio_value: no class (or 0) is best-effort.
            class: self.prioclass.filter(|&c| c > 0).unwrap_or(2),
            level: self.prio.unwrap_or(0),
            hint: 0,
        })
    }

    /// Whether latencies are kept per priority (cmdprio in use).
    pub fn per_prio(&self) -> bool {
        self.cmdprio.on()
    }

    /// Turn the latency search on or refresh it from the options given.
    pub fn update_latency(&mut self, target_ns: u64) {
        self.latency = (target_ns > 0).then_some(LatencyTarget {
            target_ns,
            window_ns: self.latency_window_ns,
            percentile: self.latency_percentile.unwrap_or(100.0),
            keep_running: self.latency_run,
        });
    }
}

/// Why a scheduling option's value (NUMA nodes, memory policy, priorities)
/// could not be read. The text is the reason the user reads after the
/// option's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchedError {
    #[error("'{0}' is not a NUMA node list (e.g. 0 or 0-1 or 0,2)")]
    NotNodes(String),
    #[error("'{value}': {mode} needs a node list after ':' (e.g. {mode}:0)")]
    NeedsNodes { value: String, mode: &'static str },
    #[error("'{value}': {mode} takes no node list")]
    NoNodes { value: String, mode: String },
    #[error("'{0}': prefer takes exactly one node")]
    OneNode(String),
    #[error("'{0}' is not a memory policy (default, prefer, bind, interleave, local)")]
    NotAPolicy(String),
    /// A priority class, level, hint or percentage out of its range.
    #[error("'{value}' is not {what} (0 to {max})")]
    NotSmall {
        value: String,
        what: &'static str,
        max: u8,
    },
    #[error("'{0}' is not a priority class (1 to 3)")]
    NotAClass(String),
    #[error("'{0}': at most read,write values")]
    TooManyValues(String),
    #[error("'{0}' is not bs/percent[/class/level[/hint]]")]
    NotBsPrio(String),
    #[error("the percentages for {bs} bytes add up to {total}, over 100")]
    Over100 { bs: u32, total: u32 },
    #[error("'{0}': at most read,write lists")]
    TooManyLists(String),
}

impl From<SchedError> for String {
    fn from(e: SchedError) -> String {
        e.to_string()
    }
}

/// A NUMA node list (`0`, `0-1`, `0,2-3`), sorted, each node once.
pub fn parse_nodes(v: &str) -> Result<Vec<u32>, SchedError> {
    let cpus = crate::units::parse_cpu_list(v).map_err(|_| SchedError::NotNodes(v.to_string()))?;
    Ok(cpus.into_iter().map(|n| n as u32).collect())
}

/// `numa_mem_policy=mode[:nodelist]`: `default`, `local`, `prefer:N`,
/// `bind:LIST`, `interleave:LIST`.
pub fn parse_mem_policy(v: &str) -> Result<MemPolicy, SchedError> {
    let (mode, nodes) = match v.split_once(':') {
        Some((m, n)) => (m.trim(), Some(n.trim())),
        None => (v.trim(), None),
    };
    let need = |mode: &'static str| {
        nodes
            .filter(|n| !n.is_empty())
            .ok_or_else(|| SchedError::NeedsNodes {
                value: v.to_string(),
                mode,
            })
    };
    Ok(match mode {
        "default" | "local" if nodes.is_some_and(|n| !n.is_empty()) => {
            return Err(SchedError::NoNodes {
                value: v.to_string(),
                mode: mode.to_string(),
            })
        }
        "default" => MemPolicy::Default,
        "local" => MemPolicy::Local,
        "prefer" => {
            let n = parse_nodes(need("prefer")?)?;
            if n.len() != 1 {
                return Err(SchedError::OneNode(v.to_string()));
            }
            MemPolicy::Prefer(n[0])
        }
        "bind" => MemPolicy::Bind(parse_nodes(need("bind")?)?),
        "interleave" => MemPolicy::Interleave(parse_nodes(need("interleave")?)?),
        _ => return Err(SchedError::NotAPolicy(mode.to_string())),
    })
}

/// An I/O priority class 0–3 or level 0–7.
pub fn parse_small(v: &str, max: u8, what: &'static str) -> Result<u8, SchedError> {
    v.trim()
        .parse::<u8>()
        .ok()
        .filter(|&n| n <= max)
        .ok_or_else(|| SchedError::NotSmall {
            value: v.to_string(),
            what,
            max,
        })
}

/// A per-direction value `r[,w]`: one value for both, or one each.
pub fn per_rw<T: Copy>(
    v: &str,
    each: impl Fn(&str) -> Result<T, SchedError>,
) -> Result<[T; 2], SchedError> {
    let parts: Vec<&str> = v.split(',').collect();
    match parts.as_slice() {
        [a] => {
            let x = each(a)?;
            Ok([x, x])
        }
        [a, b] | [a, b, _] => {
            let r = each(a)?;
            let w = if b.trim().is_empty() { r } else { each(b)? };
            Ok([r, w])
        }
        _ => Err(SchedError::TooManyValues(v.to_string())),
    }
}

/// `cmdprio_bssplit=bs/pct[/class/level[/hint]]:…[,…]` for reads and
/// writes (one list: both); entries of 0 % are dropped, as in fio, and a
/// block size's percentages may not exceed 100.
pub fn parse_cmdprio_bssplit(v: &str, kb_base: u64) -> Result<[Vec<BsPrio>; 2], SchedError> {
    let one = |list: &str| -> Result<Vec<BsPrio>, SchedError> {
        let mut out = Vec::new();
        for e in list.split(':').map(str::trim).filter(|e| !e.is_empty()) {
            let f: Vec<&str> = e.split('/').collect();
            let bad = || SchedError::NotBsPrio(e.to_string());
            if !(f.len() == 2 || f.len() == 4 || f.len() == 5) {
                return Err(bad());
            }
            let bs = crate::units::parse_fio_size(f[0], kb_base).map_err(|_| bad())?;
            let percent = parse_small(f[1], 100, "a percentage")?;
            let prio = (f.len() >= 4)
                .then(|| -> Result<IoPrio, SchedError> {
                    Ok(IoPrio {
                        class: parse_small(f[2], 3, "a priority class")?,
                        level: parse_small(f[3], 7, "a priority level")?,
                        hint: match f.get(4) {
                            Some(h) => parse_small(h, 7, "a priority hint")?,
                            None => 0,
                        },
                    })
                })
                .transpose()?;
            if percent > 0 {
                out.push(BsPrio {
                    bs: u32::try_from(bs).map_err(|_| bad())?,
                    percent,
                    prio,
                });
            }
        }
        out.sort_by_key(|e| e.bs);
        for e in &out {
            let total: u32 = out
                .iter()
                .filter(|x| x.bs == e.bs)
                .map(|x| u32::from(x.percent))
                .sum();
            if total > 100 {
                return Err(SchedError::Over100 { bs: e.bs, total });
            }
        }
        Ok(out)
    };
    let parts: Vec<&str> = v.split(',').collect();
    Ok(match parts.as_slice() {
        [a] => {
            let x = one(a)?;
            [x.clone(), x]
        }
        [a, b] | [a, b, _] => [one(a)?, one(b)?],
        _ => return Err(SchedError::TooManyLists(v.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdprio_bssplit_keeps_nonzero_entries_per_direction() {
        let b = parse_cmdprio_bssplit("64k/25/1/1:64k/75/3/2:1024k/0,1024k/0", 1024).unwrap();
        assert_eq!(b[0].len(), 2);
        assert_eq!(
            b[0][1].prio,
            Some(IoPrio {
                class: 3,
                level: 2,
                hint: 0
            })
        );
        assert!(b[1].is_empty());
        assert!(parse_cmdprio_bssplit("4k/60:4k/50", 1024).is_err());
        assert!(parse_cmdprio_bssplit("4k/60/1", 1024).is_err());
        let h = parse_cmdprio_bssplit("1M/10/2/0/1", 1024).unwrap();
        assert_eq!(h[0][0].prio.map(IoPrio::value), Some(0x4008));
    }

    #[test]
    fn cmdprio_pick_follows_the_cumulative_percentages() {
        let c = CmdPrio {
            bssplit: Some(parse_cmdprio_bssplit("64k/25/1/1:64k/75/3/2", 1024).unwrap()),
            ..CmdPrio::default()
        };
        assert_eq!(
            c.pick(0, 65536, 24),
            Some(IoPrio {
                class: 1,
                level: 1,
                hint: 0
            })
        );
        assert_eq!(
            c.pick(0, 65536, 25),
            Some(IoPrio {
                class: 3,
                level: 2,
                hint: 0
            })
        );
        assert_eq!(c.pick(0, 4096, 0), None);
        let default = IoPrio {
            class: 2,
            level: 7,
            hint: 0,
        };
        assert_eq!(c.values(0, default).len(), 3);
        let p = CmdPrio {
            percentage: [20, 0],
            ..CmdPrio::default()
        };
        assert_eq!(
            p.pick(0, 4096, 19),
            Some(IoPrio {
                class: 1,
                level: 0,
                hint: 0
            })
        );
        assert_eq!(p.pick(0, 4096, 20), None);
        assert_eq!(p.pick(1, 4096, 0), None);
        assert_eq!(
            IoPrio {
                class: 3,
                level: 0,
                hint: 0
            }
            .value(),
            0x6000
        );
    }

    #[test]
    fn mem_policy_names_its_nodes() {
        assert_eq!(
            parse_mem_policy("bind:0").unwrap(),
            MemPolicy::Bind(vec![0])
        );
        assert_eq!(
            parse_mem_policy("interleave:0-1").unwrap().nodes(),
            vec![0, 1]
        );
        assert_eq!(parse_mem_policy("local").unwrap(), MemPolicy::Local);
        assert!(parse_mem_policy("bind").is_err());
        assert!(parse_mem_policy("prefer:0-1").is_err());
        assert!(parse_mem_policy("spread:0").is_err());
    }

    #[test]
    fn the_cpus_wake_up_latency_is_a_whole_number_of_microseconds_in_range() {
        let mut s = crate::spec::JobSpec::default();
        crate::options::apply(&mut s, "cpu_latency_us", Some("0")).unwrap();
        assert_eq!(s.sched.cpu_latency_us, Some(0));
        for bad in ["-5", "abc", "99999999999", "1.5", ""] {
            let e = crate::options::apply(&mut s, "cpu_latency_us", Some(bad)).unwrap_err();
            assert!(e.to_string().contains("0..=2000000000"), "{bad}: {e}");
        }
        assert_eq!(
            s.sched.cpu_latency_us,
            Some(0),
            "a refused value changes nothing"
        );
    }
}
