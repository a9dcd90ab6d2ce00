//! Each layer's CPU in words ([`lines`]), over the figures of
//! [`super::layer_cpu`] (re-exported here): each layer's kernel threads
//! and the kernel profile's stack layers, per run.

pub use super::layer_cpu::*;

use super::judge::{RunFigures, StackJudgement};

/// Each layer's CPU in words, for the terminal and the report: its
/// threads' over the busiest run that had any, and the profile's stack
/// layers over the busiest profiled run.
pub fn lines(j: &StackJudgement) -> Vec<String> {
    let most = |r: &&RunFigures| r.members.iter().map(|m| m.ios).max().unwrap_or(0);
    let at_work = || j.runs.iter().filter(|r| r.alone.is_none());
    let mut out = Vec::new();
    if let Some(r) = at_work()
        .filter(|r| !r.layers_cpu.is_empty())
        .max_by_key(most)
    {
        let each: Vec<String> = r
            .layers_cpu
            .iter()
            .map(|c| {
                format!(
                    "{} ({}) {:.2} CPUs, busiest thread {:.2}, {:.1} µs per I/O",
                    c.disk,
                    c.works.join(", "),
                    c.cpus,
                    c.busiest_thread_cpus,
                    c.ns_per_io / 1e3
                )
            })
            .collect();
        out.push(format!(
            "each layer's kernel threads over {} (/proc/*/task/*/schedstat): {}",
            r.run,
            each.join("; ")
        ));
    }
    if let Some(r) = at_work().filter(|r| !r.profile.is_empty()).max_by_key(most) {
        let each: Vec<String> = r
            .profile
            .iter()
            .map(|(l, share, ns)| {
                format!(
                    "{l} {share:.1} % of the busy CPU, {:.2} µs per I/O",
                    ns / 1e3
                )
            })
            .collect();
        out.push(format!(
            "the kernel profile's stack layers over {}: {}",
            r.run,
            each.join("; ")
        ));
    }
    out
}

#[cfg(test)]
#[path = "cpu_tests.rs"]
mod tests;
