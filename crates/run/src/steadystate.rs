//! fio's `steadystate` / `steadystate_duration` / `steadystate_ramp_time`
//! in `ssdready run`, at the level of the run loop: the workers' hot loops
//! know nothing of it. Once a second the run loop reads the live counters
//! of each steady-state unit — one clone of a job, or a whole reporting
//! group with `group_reporting`, as in fio — turns them into one sample of
//! IOPS and bytes per second (integers, as fio truncates them) and feeds
//! the criterion ([`ssdready_core::steady::FioSteady`]). When it holds, the
//! unit's workers are told to end, exactly as when their runtime is up; the
//! other jobs go on.
//!
//! Samples cover whole seconds after the job's start delay plus the longer
//! of `ramp_time` and `steadystate_ramp_time` (fio starts one second after
//! its steady-state ramp; its own counters are reset at `ramp_time`).
//!
//! Each worker gets its own end flag ([`EndFlags`]) so that one unit can end
//! without the others; ending the phase (a failed engine, `exitall`, a
//! panicking worker) still ends all of them.

use crate::live::Live;
use ssdready_core::result::JobResult;
use ssdready_core::spec::JobSpec;
use ssdready_core::steady::{FioSteady, FioSteadyReport};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// One end flag per worker of a phase.
pub struct EndFlags {
    flags: Vec<Arc<AtomicBool>>,
    /// Flags set on purpose for some workers only (their steady state was
    /// reached, or an `exitall` ended their reporting group).
    by_steady_state: Vec<bool>,
}

impl EndFlags {
    pub fn new(workers: usize) -> Self {
        EndFlags {
            flags: (0..workers)
                .map(|_| Arc::new(AtomicBool::new(false)))
                .collect(),
            by_steady_state: vec![false; workers],
        }
    }

    /// Worker `i`'s flag, for its context.
    pub fn flag(&self, i: usize) -> Arc<AtomicBool> {
        self.flags[i].clone()
    }

    /// End every worker of the phase.
    pub fn end_all(&self) {
        self.flags.iter().for_each(|f| f.store(true, Relaxed));
    }

    /// End some workers only: those of a unit whose steady state was
    /// reached, or of a reporting group that an `exitall` ends.
    pub fn end_steady(&mut self, workers: &[usize]) {
        for &w in workers {
            self.by_steady_state[w] = true;
            self.flags[w].store(true, Relaxed);
        }
    }

    /// A worker that set its own flag (a panic) ends the phase, as the one
    /// shared flag did before steady state needed one per worker.
    pub fn propagate(&self) {
        let raised = self
            .flags
            .iter()
            .zip(&self.by_steady_state)
            .any(|(f, &ss)| !ss && f.load(Relaxed));
        if raised {
            self.end_all();
        }
    }
}

/// What one unit covers and where its samples stand.
pub struct Unit {
    /// Indexes into the phase's workers.
    workers: Vec<usize>,
    /// Jobs (indexes into the run's jobs) and, for a single clone, which.
    jobs: Vec<usize>,
    clone: Option<usize>,
    check: FioSteady,
    ramp_s: f64,
    /// Samples cover seconds that start at or after this (clock ns).
    from_ns: u64,
    prev: Option<(u64, u64, u64)>,
}

/// The units of a phase. `workers` lists each worker's job, in the order
/// of the phase's workers; `specs` are the run's jobs; `groups` their
/// reporting groups; `t0` the clock when I/O started.
pub fn units(workers: &[usize], specs: &[&JobSpec], groups: &[u32], t0: u64) -> Vec<Unit> {
    let start = |s: &JobSpec| {
        let ramp = s.ramp_time_ns.max(s.ss_ramp_ns);
        (
            t0.saturating_add(s.startdelay_ns).saturating_add(ramp),
            s.ss_ramp_ns as f64 / 1e9,
        )
    };
    let mut out: Vec<Unit> = Vec::new();
    let mut clones: Vec<usize> = vec![0; specs.len()];
    for (w, &ji) in workers.iter().enumerate() {
        let s = specs[ji];
        if s.ss_dur_ns == 0 {
            continue;
        }
        let (from_ns, ramp_s) = start(s);
        let clone = clones[ji];
        clones[ji] += 1;
        if s.group_reporting {
            if let Some(u) = out
                .iter_mut()
                .find(|u| u.clone.is_none() && groups[u.jobs[0]] == groups[ji])
            {
                u.workers.push(w);
                if !u.jobs.contains(&ji) {
                    u.jobs.push(ji);
                }
                u.from_ns = u.from_ns.min(from_ns);
                continue;
            }
        }
        out.push(Unit {
            workers: vec![w],
            jobs: vec![ji],
            clone: (!s.group_reporting).then_some(clone),
            check: FioSteady::new(s.steadystate, s.ss_dur_ns / 1_000_000_000),
            ramp_s,
            from_ns,
            prev: Some((t0, 0, 0)),
        });
    }
    out
}

/// What one worker has done so far, for a sample: completed I/Os and
/// bytes since its start (ramp included), and whether it has finished.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub ios: u64,
    pub bytes: u64,
    pub done: bool,
}

/// Take one sample of every unit at clock `now` (about once a second);
/// units whose criterion now holds end their workers.
pub fn sample(units: &mut [Unit], now: u64, lives: &[Arc<Live>], ends: &mut EndFlags) {
    let counts = |w: usize| {
        let l = &lives[w];
        Counts {
            ios: (0..3).map(|d| l.ios[d].load(Relaxed)).sum(),
            bytes: (0..3).map(|d| l.bytes[d].load(Relaxed)).sum(),
            done: l.done.load(Relaxed),
        }
    };
    sample_counts(units, now, counts, |workers| ends.end_steady(workers));
}

/// Take one sample of every unit at clock `now` from each worker's counts
/// (a real run's live counters, or virtual time's); `end` is given the
/// workers of each unit whose criterion now holds.
pub fn sample_counts(
    units: &mut [Unit],
    now: u64,
    counts: impl Fn(usize) -> Counts,
    mut end: impl FnMut(&[usize]),
) {
    for u in units.iter_mut() {
        if u.check.attained() || u.workers.iter().all(|&w| counts(w).done) {
            continue;
        }
        let (mut ios, mut bytes) = (0u64, 0u64);
        for &w in &u.workers {
            let c = counts(w);
            ios += c.ios;
            bytes += c.bytes;
        }
        if let Some((t, i0, b0)) = u.prev {
            let ms = now.saturating_sub(t) / 1_000_000;
            if t >= u.from_ns && ms > 0 {
                // fio: 1000 × change / milliseconds, in integers.
                let iops = 1000 * ios.saturating_sub(i0) / ms;
                let bw = 1000 * bytes.saturating_sub(b0) / ms;
                if u.check.push(iops, bw) {
                    end(&u.workers);
                }
            }
        }
        u.prev = Some((now, ios, bytes));
    }
}

/// Whether no unit needs another sample: each has attained its criterion
/// or has all its workers `done`.
pub fn all_settled(units: &[Unit], done: impl Fn(usize) -> bool) -> bool {
    units
        .iter()
        .all(|u| u.check.attained() || u.workers.iter().all(|&w| done(w)))
}

/// The earliest clock at which a unit's samples count (None: no unit).
pub fn first_counted(units: &[Unit]) -> Option<u64> {
    units.iter().map(|u| u.from_ns).min()
}

/// Each job's steady-state reports (indexed like the jobs the units were
/// made of; empty for a job without steady state): one per clone, or one
/// for a reporting group.
pub fn reports(units: &[Unit], jobs: usize) -> Vec<Vec<FioSteadyReport>> {
    let mut out = vec![Vec::new(); jobs];
    for u in units {
        let report: FioSteadyReport = u.check.report(u.ramp_s);
        for &ji in &u.jobs {
            let r: &mut Vec<FioSteadyReport> = &mut out[ji];
            match u.clone {
                Some(c) => {
                    if r.len() <= c {
                        r.resize(c + 1, FioSteadyReport::default());
                    }
                    r[c] = report.clone();
                }
                None => *r = vec![report.clone()],
            }
        }
    }
    out
}

/// Put each unit's report on its jobs' results (indexed like the run's
/// jobs).
pub fn attach(units: &[Unit], results: &mut [Option<JobResult>]) {
    for (ji, r) in reports(units, results.len()).into_iter().enumerate() {
        if let (false, Some(res)) = (r.is_empty(), results[ji].as_mut()) {
            res.steadystate = r;
        }
    }
}

/// Two jobs of one reporting group that judge steady state differently.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "job '{job}': steadystate options differ from job '{other}' of the same reporting group \
     (group_reporting judges the group as one: give its jobs the same steadystate, \
     steadystate_duration and steadystate_ramp_time)"
)]
pub struct SteadyGroupError {
    pub job: String,
    pub other: String,
}

/// fio refuses a reporting group whose jobs judge steady state differently
/// ("steadystate options must be consistent within reporting groups").
pub fn check_groups(specs: &[JobSpec], groups: &[u32]) -> Result<(), SteadyGroupError> {
    let key = |s: &JobSpec| (s.steadystate, s.ss_dur_ns, s.ss_ramp_ns);
    for (i, s) in specs.iter().enumerate() {
        if !s.group_reporting {
            continue;
        }
        if let Some((_, o)) = specs
            .iter()
            .enumerate()
            .take(i)
            .find(|(j, o)| groups[*j] == groups[i] && key(o) != key(s))
        {
            return Err(SteadyGroupError {
                job: s.name.clone(),
                other: o.name.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, dur_s: u64, grouped: bool) -> JobSpec {
        JobSpec {
            name: name.into(),
            ss_dur_ns: dur_s * 1_000_000_000,
            steadystate: ssdready_core::steady::SsCriterion::parse("iops:5%", 1024).unwrap(),
            group_reporting: grouped,
            ..JobSpec::default()
        }
    }

    fn bump(l: &Live, ios: u64) {
        l.ios[0].fetch_add(ios, Relaxed);
        l.bytes[0].fetch_add(ios * 4096, Relaxed);
    }

    #[test]
    fn a_steady_clone_ends_alone_and_reports_its_samples() {
        let (a, b) = (spec("a", 2, false), spec("b", 0, false));
        let specs = [&a, &b];
        // Two clones of a, one worker of b (no steady state).
        let workers = [0, 0, 1];
        let mut us = units(&workers, &specs, &[0, 0], 0);
        assert_eq!(us.len(), 2);
        let lives: Vec<Arc<Live>> = (0..3).map(|_| Arc::new(Live::default())).collect();
        let mut ends = EndFlags::new(3);
        for sec in 0..=4u64 {
            // Clone 0 is steady at 1000/s; clone 1 doubles every second.
            bump(&lives[0], 1000);
            bump(&lives[1], 1 << sec);
            sample(&mut us, sec * 1_000_000_000, &lives, &mut ends);
        }
        assert!(ends.flag(0).load(Relaxed), "the steady clone ends");
        assert!(!ends.flag(1).load(Relaxed) && !ends.flag(2).load(Relaxed));
        ends.propagate();
        assert!(
            !ends.flag(1).load(Relaxed),
            "a steady end is not a phase end"
        );
        let mut results = vec![Some(JobResult::default()), Some(JobResult::default())];
        attach(&us, &mut results);
        let r = &results[0].as_ref().unwrap().steadystate;
        assert_eq!(r.len(), 2);
        assert!(r[0].attained && !r[1].attained);
        assert_eq!(r[0].data.iops, vec![1000, 1000]);
        assert!(results[1].as_ref().unwrap().steadystate.is_empty());
    }

    #[test]
    fn a_reporting_group_is_one_unit_and_samples_after_its_ramp() {
        let mut a = spec("a", 2, true);
        a.ss_ramp_ns = 1_500_000_000;
        let specs = [&a];
        let mut us = units(&[0, 0], &specs, &[0], 0);
        assert_eq!(us.len(), 1);
        let lives: Vec<Arc<Live>> = (0..2).map(|_| Arc::new(Live::default())).collect();
        let mut ends = EndFlags::new(2);
        for sec in 0..=3u64 {
            bump(&lives[0], 100);
            bump(&lives[1], 300);
            sample(&mut us, sec * 1_000_000_000, &lives, &mut ends);
        }
        // Ramp 1.5 s: the seconds from 2 s on count, so only [2, 3] so far.
        assert!(!ends.flag(0).load(Relaxed));
        bump(&lives[0], 100);
        bump(&lives[1], 300);
        sample(&mut us, 4_000_000_000, &lives, &mut ends);
        assert!(ends.flag(0).load(Relaxed) && ends.flag(1).load(Relaxed));
        let mut results = vec![Some(JobResult::default())];
        attach(&us, &mut results);
        let r = &results[0].as_ref().unwrap().steadystate[0];
        assert_eq!(r.data.iops, vec![400, 400]);
        assert_eq!(r.ramp_time_s, 1.5);
    }

    #[test]
    fn a_panicking_worker_still_ends_the_phase() {
        let ends = EndFlags::new(3);
        ends.flag(1).store(true, Relaxed);
        ends.propagate();
        assert!((0..3).all(|i| ends.flag(i).load(Relaxed)));
    }

    #[test]
    fn a_group_with_different_criteria_is_refused() {
        let a = spec("a", 2, true);
        let b = spec("b", 3, true);
        let e = check_groups(&[a.clone(), b], &[0, 0])
            .unwrap_err()
            .to_string();
        assert!(e.contains("job 'b'") && e.contains("job 'a'"), "{e}");
        assert!(check_groups(&[a.clone(), a], &[0, 0]).is_ok());
    }
}
