//! The options of CPU affinity (`cpus_allowed`, `cpumask`), I/O
//! priorities, NUMA placement, submission offload,
//! poisson arrivals, the latency-target search ([`crate::sched`]) and
//! deduplication over a working set (`ssdready_workload::buffers`): a table
//! beside [`crate::option_table::OPTIONS`], searched by the same machinery
//! ([`crate::options::all`]).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::sched::*;
use crate::spec::CpusPolicy;
use crate::units::{parse_bool, parse_cpu_list, parse_time_ns};

/// A time in fio's unit for the latency options: microseconds unless a
/// suffix says otherwise; ns.
fn usec_ns(v: &str) -> Result<u64, crate::units::UnitError> {
    parse_time_ns(v, 1000)
}

/// The table. Keep it sorted by name.
pub static SCHED_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "cmdprio",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a priority level 0 to 7; per direction read,write",
        help: "level of the I/Os cmdprio_percentage / cmdprio_bssplit pick (default 0)",
        set: |s, v| {
            let l = per_rw(v, |p| parse_small(p, 7, "a priority level"))?;
            s.sched.cmdprio.level = l.map(Some);
            Ok(())
        },
    },
    OptionDef {
        name: "cmdprio_bssplit",
        aliases: &[],
        arity: Arity::Value,
        allowed: "bs/percent[/class/level[/hint]]:… per direction read,write, e.g. 64k/40:1m/10/1/0",
        help: "per block size, the share of I/Os issued with their own priority (io_uring, libaio)",
        set: |s, v| {
            s.sched.cmdprio.bssplit = Some(parse_cmdprio_bssplit(v, s.kb_base)?);
            Ok(())
        },
    },
    OptionDef {
        name: "cmdprio_class",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a priority class 1 (real-time), 2 (best-effort) or 3 (idle); per direction read,write",
        help: "class of the I/Os cmdprio_percentage / cmdprio_bssplit pick (default 1)",
        set: |s, v| {
            let c = per_rw(v, |p| match parse_small(p, 3, "a priority class")? {
                0 => Err(SchedError::NotAClass(p.to_string())),
                c => Ok(c),
            })?;
            s.sched.cmdprio.class = c.map(Some);
            Ok(())
        },
    },
    OptionDef {
        name: "cmdprio_percentage",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a percentage 0 to 100; per direction read,write",
        help: "share of I/Os issued with the cmdprio_class / cmdprio priority (io_uring, libaio)",
        set: |s, v| {
            s.sched.cmdprio.percentage = per_rw(v, |p| parse_small(p, 100, "a percentage"))?;
            Ok(())
        },
    },
    OptionDef {
        name: "cpu_latency_us",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0..=2000000000 µs (root: a PM QoS request through /dev/cpu_dma_latency)",
        help: "ssdready: while the job runs, keep idle CPUs out of idle states slower than this \
               to leave (0: they poll instead of halting)",
        set: |s, v| {
            s.sched.cpu_latency_us = Some(ranged_u32(v, 0, 2_000_000_000)?);
            Ok(())
        },
    },
    OptionDef {
        name: "cpumask",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a bit mask of online CPUs, e.g. 0x3 or 3",
        help: "CPUs the job's workers may run on, as a mask",
        set: |s, v| {
            let m = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16),
                None => v.parse::<u64>(),
            }
            .map_err(|_| format!("'{v}' is not a mask"))?;
            let cpus: Vec<usize> = (0..64).filter(|b| m >> b & 1 == 1).collect();
            if cpus.is_empty() {
                return Err("empty mask".into());
            }
            s.cpus_allowed = Some(cpus);
            Ok(())
        },
    },
    OptionDef {
        name: "cpus_allowed",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a list of online CPUs, e.g. 0-3,6",
        help: "CPUs the job's workers may run on",
        set: |s, v| {
            s.cpus_allowed = Some(parse_cpu_list(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "cpus_allowed_policy",
        aliases: &[],
        arity: Arity::Value,
        allowed: "shared or split",
        help: "shared: every clone on all listed CPUs; split: one CPU per clone",
        set: |s, v| {
            s.cpus_allowed_policy = match v {
                "shared" => CpusPolicy::Shared,
                "split" => CpusPolicy::Split,
                _ => return Err(format!("'{v}' is not shared or split")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "dedupe_global",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "with dedupe_mode=working_set: the working set is shared by every such job",
        set: |s, v| {
            s.buffers.dedupe_global = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "dedupe_mode",
        aliases: &[],
        arity: Arity::Value,
        allowed: "repeat or working_set",
        help: "what a deduplicated write repeats: the last fresh one, or one of the working set",
        set: |s, v| {
            s.buffers.working_set = match v.trim() {
                "repeat" => false,
                "working_set" => true,
                other => return Err(format!("'{other}' is not repeat or working_set")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "dedupe_working_set_percentage",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a percentage 0 to 100 (default 5)",
        help: "the working set: this share of the job's size, in its first fresh writes",
        set: |s, v| {
            s.buffers.working_set_percentage = Some(percent(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "io_submit_mode",
        aliases: &[],
        arity: Arity::Value,
        allowed: "inline or offload",
        help: "offload: I/Os are handed to a pool of iodepth submitter threads, one I/O each at a time",
        set: |s, v| {
            s.sched.offload = match v.trim() {
                "inline" => false,
                "offload" => true,
                other => return Err(format!("'{other}' is not inline or offload")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "lat_from",
        aliases: &[],
        arity: Arity::Value,
        allowed: "issue or schedule",
        help: "latency measured from each I/O's issue (fio's) or from its intended issue time under the rate (open loop, no coordinated omission)",
        set: |s, v| {
            s.sched.lat_from_schedule = match v.trim() {
                "issue" => false,
                "schedule" => true,
                other => return Err(format!("'{other}' is not issue or schedule")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "latency_percentile",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a percentage above 0, up to 100 (default 100)",
        help: "the share of I/Os in a latency_window that must meet latency_target",
        set: |s, v| {
            let p: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
                .ok_or_else(|| format!("'{v}' is not a percentage above 0, up to 100"))?;
            s.sched.latency_percentile = Some(p);
            let t = s.sched.latency.map_or(0, |l| l.target_ns);
            s.sched.update_latency(t);
            Ok(())
        },
    },
    OptionDef {
        name: "latency_run",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "keep adjusting the queue depth to latency_target until the job ends",
        set: |s, v| {
            s.sched.latency_run = parse_bool(v)?;
            let t = s.sched.latency.map_or(0, |l| l.target_ns);
            s.sched.update_latency(t);
            Ok(())
        },
    },
    OptionDef {
        name: "latency_target",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time (microseconds without a suffix), e.g. 500 or 2ms; 0: off",
        help: "find the deepest queue (up to iodepth) whose latencies meet this target",
        set: |s, v| {
            let t = usec_ns(v)?;
            s.sched.update_latency(t);
            Ok(())
        },
    },
    OptionDef {
        name: "latency_window",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time (microseconds without a suffix), e.g. 5000000 or 5s",
        help: "how long each queue depth is tried against latency_target",
        set: |s, v| {
            s.sched.latency_window_ns = usec_ns(v)?;
            let t = s.sched.latency.map_or(0, |l| l.target_ns);
            s.sched.update_latency(t);
            Ok(())
        },
    },
    OptionDef {
        name: "log_prio",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "the logs' last column is each I/O's priority value (0xCLVL) instead of 1 for real-time",
        set: |s, v| {
            s.sched.log_prio = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "numa_cpu_nodes",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a list of NUMA nodes, e.g. 0 or 0-1",
        help: "the workers run on the CPUs of these nodes",
        set: |s, v| {
            s.sched.numa_cpu_nodes = Some(parse_nodes(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "numa_mem_policy",
        aliases: &[],
        arity: Arity::Value,
        allowed: "default, local, prefer:NODE, bind:NODES or interleave:NODES",
        help: "where the workers' memory (their I/O buffers) comes from",
        set: |s, v| {
            s.sched.numa_mem_policy = Some(parse_mem_policy(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "prio",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a priority level 0 (highest) to 7",
        help: "the workers' I/O priority level (ioprio_set)",
        set: |s, v| {
            s.sched.prio = Some(parse_small(v, 7, "a priority level")?);
            Ok(())
        },
    },
    OptionDef {
        name: "prioclass",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a priority class 0 (none: best-effort), 1 (real-time), 2 (best-effort) or 3 (idle)",
        help: "the workers' I/O priority class (ioprio_set)",
        set: |s, v| {
            s.sched.prioclass = Some(parse_small(v, 3, "a priority class")?);
            Ok(())
        },
    },
    OptionDef {
        name: "rate_process",
        aliases: &[],
        arity: Arity::Value,
        allowed: "linear or poisson",
        help: "gaps between rate-limited I/Os: even (linear) or exponential (poisson)",
        set: |s, v| {
            s.sched.poisson = match v.trim() {
                "linear" | "0" => false,
                "poisson" | "1" => true,
                other => return Err(format!("'{other}' is not linear or poisson")),
            };
            Ok(())
        },
    },
];
