//! fio beside the study of a job file, purely: fio's own figures of the
//! same job, read from its JSON output (`fio --output-format=json`), and
//! what they say of the study's. ssdready's engines are not fio's: where
//! they differ on this job (under a CPU quota the rate follows each
//! engine's CPU per I/O; an engine's own cost differs), a figure of
//! ssdready's alone would credit the host, or the application's
//! mechanics, with what is the engines' difference. So the job as
//! written is run by fio too and set against the study's repeats; each
//! mechanic the best configuration would carry is confirmed by fio's A/B
//! of it, or left out; and the best configuration's gain is set beside
//! fio's A/B of the same changes, the difference said.

use super::{Dir, JobFigures, RunFigures, GAIN_PCT};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ssdready_measured::curve::mean;

/// Why fio's output could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FioJsonError {
    #[error("fio's output holds no JSON document")]
    NoJson,
    #[error("fio's JSON: {0}")]
    Json(String),
    #[error("fio's JSON has no jobs")]
    NoJobs,
    #[error("fio's job {job} failed with error {code}")]
    JobError { job: String, code: i64 },
}

/// fio beside the study: its version, its run of the job as written,
/// whether the study agrees with it there and on the best
/// configuration, the lines; or why it did not run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FioBeside {
    /// `fio-3.33`.
    pub version: String,
    /// The job as written, by fio, once, before the variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_written: Option<RunFigures>,
    /// Whether the study's repeats agree with it ([`as_written_line`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_written_agrees: Option<bool>,
    /// Whether the best configuration's gain agrees with fio's A/B of it
    /// ([`best_line`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_agrees: Option<bool>,
    /// The host's change that gained most, by fio in pairs of A/B turns:
    /// the change, fio's mean gain on the trial's measure, and whether the
    /// study's trial agrees ([`host_line`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostByFio>,
    /// The study's figures against fio's, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
    /// Why fio did not run, or stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl FioBeside {
    /// In words: its lines, and why it stopped or did not run.
    pub fn words(&self) -> String {
        let mut s = String::new();
        if !self.lines.is_empty() {
            s.push_str("fio beside the study (the same job files, run by fio):\n");
        }
        for l in &self.lines {
            s.push_str(&format!("  {l}\n"));
        }
        match (&self.error, self.lines.is_empty()) {
            (Some(e), true) => s.push_str(&format!("fio beside the study: {e}\n")),
            (Some(e), false) => s.push_str(&format!(
                "  then it stopped, its later checks not made: {e}\n"
            )),
            (None, _) => {}
        }
        s
    }
}

/// The host's change that gained most, as fio's A/B turns measured it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostByFio {
    /// The change in words (`nr-requests 4 → 128`).
    pub change: String,
    pub fio_gain_pct: f64,
    pub agrees: bool,
    /// fio's turns: each pair's run as written and changed (their rates
    /// on the trial's metric), so that fio's gain can be read back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<crate::trials::Turn>,
}

/// fio's JSON output (`--output-format=json`) as a run's figures: each
/// job's reads and writes (IOPS, bytes per second, mean, p99 and p99.9
/// completion latency) and together, as [`RunFigures::of`] gives the
/// study's. Text before the document (fio's notes) is skipped.
pub fn figures(out: &str) -> Result<RunFigures, FioJsonError> {
    let at = out.find('{').ok_or(FioJsonError::NoJson)?;
    let doc: Value =
        serde_json::from_str(&out[at..]).map_err(|e| FioJsonError::Json(e.to_string()))?;
    let jobs = doc["jobs"].as_array().ok_or(FioJsonError::NoJobs)?;
    if jobs.is_empty() {
        return Err(FioJsonError::NoJobs);
    }
    let mut figs = Vec::new();
    let (mut cpu_ns, mut ios) = (0.0, 0.0);
    for j in jobs {
        let f = |k: &str| j[k].as_f64().unwrap_or(0.0);
        let job_ns = (f("usr_cpu") + f("sys_cpu")) / 100.0 * f("job_runtime") * 1e6;
        let job_ios = j["read"]["total_ios"].as_f64().unwrap_or(0.0)
            + j["write"]["total_ios"].as_f64().unwrap_or(0.0);
        (cpu_ns, ios) = (cpu_ns + job_ns, ios + job_ios);
        let name = j["jobname"].as_str().unwrap_or_default().to_string();
        let code = j["error"].as_i64().unwrap_or(0);
        if code != 0 {
            return Err(FioJsonError::JobError { job: name, code });
        }
        figs.push(JobFigures {
            name,
            read: dir(&j["read"]),
            write: dir(&j["write"]),
            cpu_per_io_ns: (job_ios > 0.0 && job_ns > 0.0).then(|| job_ns / job_ios),
        });
    }
    Ok(RunFigures {
        cpu_per_io_ns: (ios > 0.0 && cpu_ns > 0.0).then(|| cpu_ns / ios),
        ..RunFigures::of_jobs(figs)
    })
}

/// One direction of a fio job, where it moved any bytes.
fn dir(d: &Value) -> Option<Dir> {
    (d["io_bytes"].as_u64().unwrap_or(0) > 0).then(|| {
        let pct = |p: &str| d["clat_ns"]["percentile"][p].as_u64();
        Dir {
            iops: d["iops"].as_f64().unwrap_or(0.0),
            bw_bytes_per_s: d["bw_bytes"].as_f64().unwrap_or(0.0),
            lat_mean_ns: d["clat_ns"]["mean"].as_f64().unwrap_or(0.0),
            lat_p99_ns: pct("99.000000"),
            lat_p999_ns: pct("99.900000"),
        }
    })
}

/// A direction's rate on the job's own metric.
fn rate(d: &Dir, by_bandwidth: bool) -> f64 {
    match by_bandwidth {
        true => d.bw_bytes_per_s,
        false => d.iops,
    }
}

/// `changed` against `base` on the job's own metric, percent, as the
/// study judges its variants: the least of the directions `base` does (a
/// change must gain in each), or, where one gained [`GAIN_PCT`] and the
/// others held within it, the directions together.
pub fn gain_pct(base: &RunFigures, changed: &RunFigures, by_bandwidth: bool) -> Option<f64> {
    let pairs = [
        (&base.together.read, &changed.together.read),
        (&base.together.write, &changed.together.write),
    ];
    let each: Vec<(f64, f64)> = (pairs.into_iter())
        .filter_map(|(b, c)| {
            let b = rate(b.as_ref()?, by_bandwidth);
            let c = c.as_ref().map_or(0.0, |c| rate(c, by_bandwidth));
            (b > 0.0).then_some((b, c))
        })
        .collect();
    let pct = |(b, c): (f64, f64)| 100.0 * (c / b - 1.0);
    let least = each.iter().copied().map(pct).reduce(f64::min)?;
    let gained = each.iter().copied().map(pct).any(|g| g >= GAIN_PCT);
    let together = (
        each.iter().map(|x| x.0).sum(),
        each.iter().map(|x| x.1).sum(),
    );
    Some(match gained && (-GAIN_PCT..GAIN_PCT).contains(&least) {
        true => pct(together),
        false => least,
    })
}

/// Whether fio's A/B of a change confirms a gain: fio too gains at least
/// [`GAIN_PCT`] on the job's metric.
pub fn confirms(fio_gain_pct: f64) -> bool {
    fio_gain_pct >= GAIN_PCT
}

/// The study's repeats of the job as written against fio's run of the
/// same file: the line, and whether they agree (within the repeats'
/// spread or [`GAIN_PCT`], whichever is larger). `quota` is the limits'
/// line of a CPU quota the job runs under (`a CPU quota of 0.20 CPUs:
/// …`), if any: where the rate follows each engine's CPU per I/O, said
/// as the condition it is, not as a finding. `sessions` names the other
/// work at a lower priority in the study's own autogroup, where fio runs
/// the job as processes ([`super::super::others::lower_in_own_group`]):
/// each of fio's job processes starts a session of its own, so that work
/// competes with it as another group, at its own weight, while it gives
/// way to ssdready's threads (beside two loops at nice 10 in the same
/// session, on 2 vCPUs: fio 160–218K IOPS, ssdready 223–311K, ssdready
/// run under `setsid` 197–213K). ssdready's `run` and `study` now measure
/// in a session of their own, so this holds only where they were kept in
/// the caller's.
pub fn as_written_line(
    (median, spread_pct): (f64, f64),
    (fio, study_cpu_ns): (&RunFigures, Option<f64>),
    version: &str,
    (quota, sessions): (Option<&str>, Option<&str>),
) -> (String, bool) {
    let theirs = fio.iops();
    let apart = 100.0 * (median / theirs.max(1e-9) - 1.0);
    let noise = spread_pct.max(GAIN_PCT);
    let head = format!(
        "{version} on the same file: {} IOPS; the study's median {} IOPS is {apart:+.1} % from it",
        si(theirs),
        si(median)
    );
    if apart.abs() <= noise {
        return (format!("{head}, within the noise ({noise:.0} %)"), true);
    }
    let sessions = sessions.filter(|_| apart > 0.0);
    let why = match (quota, sessions, same_cpu(median, study_cpu_ns, fio)) {
        // The CPU per I/O of jobs held by different things, summed, sets
        // no rate: each job's is set against its own (`jobs_line`).
        (Some(q), _, _) if several(fio) => format!(
            ": the job runs under {q}, where a job's rate follows each engine's CPU per I/O (each job's below)"
        ),
        (Some(q), _, _) => format!(
            ": the job runs under {q}, where the rate follows each engine's CPU per I/O{}",
            cpu_words(fio.cpu_per_io_ns, study_cpu_ns, (apart, noise))
        ),
        (None, Some(others), _) => sessions_words(others),
        (None, None, Some(both)) => format!(
            ": both engines kept the same CPU busy ({both}), each at its own cost per I/O, so their rates part as their CPU per I/O does{}",
            cpu_words(fio.cpu_per_io_ns, study_cpu_ns, (apart, noise))
        ),
        (None, None, None) => {
            ": ssdready's engine and fio's differ on this job (cause not identified)".into()
        }
    };
    (
        format!("{head}, beyond the noise ({noise:.0} %){why}; fio's figure is the one to expect from fio"),
        false,
    )
}

/// Each job of a file of several against fio's run of it (matched by
/// name, on IOPS), in one line: `each job against fio's: [seq-read]
/// 66.5K IOPS against 62.0K (+7.3 %), …`, the jobs apart beyond the
/// noise (their repeats' spread, at least [`GAIN_PCT`]) named after; None
/// for a file of one job. Together the rates of jobs that run in turn
/// add up to no moment's, so each is checked on its own. Under a CPU
/// `quota` a job's rate follows its threads' CPU per I/O: where both
/// engines' are known, a job apart says how far their ratio parts them.
pub fn jobs_line(repeats: &[RunFigures], fio: &RunFigures, quota: bool) -> Option<String> {
    // fio reports each of a job's `numjobs` clones apart, under the job's
    // name; the study's figures are the job's, its clones together (their
    // CPU per I/O weighted by their rates).
    let mut named: Vec<(&str, f64, Option<f64>)> = Vec::new();
    for j in &fio.jobs {
        let cpu = j.cpu_per_io_ns.map(|c| c * j.iops());
        match named.iter_mut().find(|(n, _, _)| *n == j.name) {
            Some((_, iops, c)) => (*iops, *c) = (*iops + j.iops(), c.zip(cpu).map(|(a, b)| a + b)),
            None => named.push((&j.name, j.iops(), cpu)),
        }
    }
    if named.len() < 2 {
        return None;
    }
    let (mut each, mut apart) = (Vec::new(), Vec::new());
    for (name, theirs, their_cpu) in named {
        let of = |r: &'_ RunFigures| r.jobs.iter().find(|j| j.name == name).cloned();
        let ours: Vec<JobFigures> = repeats.iter().filter_map(of).collect();
        let rates: Vec<f64> = ours.iter().map(JobFigures::iops).collect();
        let Some((median, spread)) = super::median_spread(&rates) else {
            continue;
        };
        let pct = 100.0 * (median / theirs.max(1e-9) - 1.0);
        each.push(format!(
            "[{name}] {} IOPS against {} ({pct:+.1} %)",
            si(median),
            si(theirs)
        ));
        if pct.abs() > spread.max(GAIN_PCT) {
            let cpu: Vec<f64> = ours.iter().filter_map(|j| j.cpu_per_io_ns).collect();
            let theirs_ns = their_cpu.map(|c| c / theirs.max(1e-9));
            let ns = (quota, theirs_ns, ssdready_measured::curve::median(&cpu));
            let why = match ns {
                (true, Some(f), Some(s)) => job_cpu_words((f, s), (pct, spread.max(GAIN_PCT))),
                _ => String::new(),
            };
            apart.push(format!("[{name}]{why}"));
        }
    }
    let verdict = match apart.is_empty() {
        true => "each within the noise".to_string(),
        false => format!("beyond the noise: {}", apart.join(", ")),
    };
    (!each.is_empty()).then(|| format!("each job against fio's: {}; {verdict}", each.join(", ")))
}

/// How far fio's CPU per I/O against the study's (`f`, `s`) would part
/// the two rates, percent, and whether that meets the gap measured
/// (`apart`) within the `noise`: where the CPU sets the rate, it explains it.
fn ratio_explains((f, s): (f64, f64), (apart, noise): (f64, f64)) -> (f64, bool) {
    let explains = 100.0 * (f / s.max(1e-9) - 1.0);
    (explains, (apart - explains).abs() <= noise)
}

/// Whether fio ran jobs of several names (its clones share one).
fn several(fio: &RunFigures) -> bool {
    fio.jobs.iter().any(|j| j.name != fio.jobs[0].name)
}

/// A job's threads' CPU per I/O by fio and by the study (`f`, `s`, ns),
/// and whether their ratio explains the job's rates `apart` (percent,
/// against the `noise`), in words.
fn job_cpu_words((f, s): (f64, f64), (apart, noise): (f64, f64)) -> String {
    let (explains, explained) = ratio_explains((f, s), (apart, noise));
    let verdict = match explained {
        true => "which explains it under the quota",
        false => "which does not explain it: the rest is not identified",
    };
    format!(
        " (its threads' CPU per I/O {:.2} µs fio's, {:.2} µs the study's: {explains:+.1} %, {verdict})",
        f / 1e3,
        s / 1e3
    )
}

/// Why fio, running each job as a process of a session of its own, got
/// less beside other work that gives way to ssdready's threads.
fn sessions_words(others: &str) -> String {
    format!(
        ": fio runs each job as a process that starts a session of its own (it calls setsid unless the job sets `thread`), so the other work at a lower priority in this session ({others}) competes with it as another scheduling group, at its own weight, and gives way to ssdready's threads, which share this session's group with it; an application whose processes lead sessions of their own meets that work as fio does; ssdready measures so by itself unless `SSDREADY_SESSION=caller` keeps it in the caller's session or it leads its session already (`setsid -w ssdready …` then)"
    )
}

/// The CPUs' worth each engine's threads used (rate × CPU per I/O) may
/// differ by this much, percent, and count as the same CPU.
pub const SAME_CPU_PCT: f64 = 15.0;

/// Where the study's engine (at `median` IOPS, `study_ns` of CPU per I/O)
/// and fio's kept the same CPU busy, in words (`1.02 CPUs the study's
/// threads, 1.00 fio's`): the rate was what that CPU buys at each
/// engine's cost per I/O (a CPU-bound job; an emulated guest whose one
/// thread was busy all the time: 89.0K IOPS at 11.5 µs against fio's
/// 59.2K at 16.9 µs).
fn same_cpu(median: f64, study_ns: Option<f64>, fio: &RunFigures) -> Option<String> {
    let ours = median * study_ns? / 1e9;
    let theirs = fio.iops() * fio.cpu_per_io_ns? / 1e9;
    let apart = 100.0 * (ours / theirs.max(1e-9) - 1.0);
    (ours > 0.0 && theirs > 0.0 && apart.abs() <= SAME_CPU_PCT)
        .then(|| format!("{ours:.2} CPUs the study's threads, {theirs:.2} fio's"))
}

/// Each engine's CPU per I/O where both are known, in words: the
/// evidence that under a CPU quota the engines part (`; fio's threads
/// spent 4.80 µs of CPU per I/O, the study's 3.21 µs`).
/// The two engines' CPU per I/O, and how much of the rates' gap
/// (`apart`, percent, against the `noise`) the ratio of the two explains:
/// the rest, beyond the noise, is said as not identified.
fn cpu_words(fio_ns: Option<f64>, study_ns: Option<f64>, (apart, noise): (f64, f64)) -> String {
    let (Some(f), Some(s)) = (fio_ns, study_ns) else {
        return String::new();
    };
    let (explains, explained) = ratio_explains((f, s), (apart, noise));
    let rest = match explained {
        true => String::new(),
        false => format!(
            ": by that the rates would part by {explains:+.1} %, not the {apart:+.1} % measured; the difference is not identified"
        ),
    };
    format!(
        "; fio's threads spent {:.2} µs of CPU per I/O, the study's {:.2} µs{rest}",
        f / 1e3,
        s / 1e3
    )
}

/// A loss this deep, percent, is a run that measured next to nothing.
pub const NEXT_TO_NOTHING_PCT: f64 = 99.0;

/// A mechanic's gain by the study against fio's A/B of it: the line, and
/// fio's gain as the check that keeps the mechanic in the best
/// configuration or leaves it out — none where fio's run with it measured
/// next to nothing (its time spent before its first I/O, as when its
/// start waits for dirty pages under a write throttle): not checked.
pub fn mechanic_line(what: &str, study_pct: f64, fio_pct: f64) -> (String, Option<f64>) {
    if fio_pct <= -NEXT_TO_NOTHING_PCT {
        return (format!("{what}: {study_pct:+.1} % by the study; fio's run with it measured next to nothing ({fio_pct:+.1} %): not checked"), None);
    }
    let line = match confirms(fio_pct) {
        true => format!("{what}: {study_pct:+.1} % by the study, {fio_pct:+.1} % by fio: confirmed"),
        false => format!(
            "{what}: {study_pct:+.1} % by the study, {fio_pct:+.1} % by fio, under {GAIN_PCT:.0} %: not confirmed, left out of the best configuration (the gain is ssdready's engines', not the application's)"
        ),
    };
    (line, Some(fio_pct))
}

/// The best configuration's gain by the study (its pairs, their mean
/// `claimed_pct`) against fio's A/B of the same changes (its pairs): the
/// line, and whether they agree — fio's range of pairs, widened by
/// [`GAIN_PCT`] of the job's rate (its runs are few), meets the study's.
pub fn best_line(
    (what, pairs_pct): (&str, &[f64]),
    claimed_pct: f64,
    fio_pairs_pct: &[f64],
    quota: Option<&str>,
) -> (String, bool) {
    let fio_pct = mean(fio_pairs_pct);
    let (lo, hi) = range(pairs_pct, claimed_pct);
    let (flo, fhi) = range(fio_pairs_pct, fio_pct);
    let head = format!(
        "{what} by fio, in {} pair(s) of turns with the same changes: {fio_pct:+.1} % ({flo:+.1} … {fhi:+.1} %), against the study's {claimed_pct:+.1} % ({lo:+.1} … {hi:+.1} %)",
        fio_pairs_pct.len()
    );
    judged(head, (lo, hi), (flo, fhi), quota)
}

/// A change of the host, its trial's gain (`study_pct`, its interval
/// `lo`..`hi`) against fio's A/B turns of the same change at the same
/// point (`fio_pairs_pct`, one gain per pair): the line, and whether they
/// agree, as [`best_line`] judges it.
pub fn host_line(
    change: &str,
    (study_pct, lo, hi): (f64, f64, f64),
    fio_pairs_pct: &[f64],
    quota: Option<&str>,
) -> (String, bool) {
    let fio_pct = mean(fio_pairs_pct);
    let (flo, fhi) = range(fio_pairs_pct, fio_pct);
    let head = format!(
        "{change}: {study_pct:+.1} % ({lo:+.1} … {hi:+.1} %) by the study, {fio_pct:+.1} % ({flo:+.1} … {fhi:+.1} %) by fio in {} pair(s) of turns at the same point",
        fio_pairs_pct.len()
    );
    judged(head, (lo, hi), (flo, fhi), quota)
}

/// The lowest and highest of `v` and `at`.
fn range(v: &[f64], at: f64) -> (f64, f64) {
    let lo = v.iter().copied().fold(at, f64::min);
    let hi = v.iter().copied().fold(at, f64::max);
    (lo, hi)
}

/// `head` with its verdict: the study's range `lo`..`hi` agrees with
/// fio's `flo`..`fhi` where fio's, widened by [`GAIN_PCT`] of the job's
/// rate (its pairs are few), meets it; else the study over- or
/// under-claims. Percent gains; whether they agree. `quota` is the
/// limits' line of a CPU quota the job runs under, if any: the study
/// claiming more there is said with that condition (a rate the change
/// lifts onto the quota follows each engine's CPU per I/O).
fn judged(
    head: String,
    (lo, hi): (f64, f64),
    (flo, fhi): (f64, f64),
    quota: Option<&str>,
) -> (String, bool) {
    let ratio = |pct: f64| 1.0 + pct / 100.0;
    let widen = GAIN_PCT / 100.0;
    if both_ways(&[flo, fhi]) {
        return (
            format!("{head}: fio's pairs went both ways, each beyond {GAIN_PCT:.0} %: its turns judge nothing (a run that measured next to nothing, or a state that changed between them)"),
            false,
        );
    }
    let side = match () {
        _ if ratio(fhi) * (1.0 + widen) < ratio(lo) => match quota {
            Some(q) => format!(
                "the study over-claims: expect fio's figure (the job runs under {q}, where the rate the change lifts follows each engine's CPU per I/O)"
            ),
            None => "the study over-claims: expect fio's figure".into(),
        },
        _ if ratio(flo) * (1.0 - widen) > ratio(hi) => "the study under-claims: fio gains more".into(),
        _ => return (format!("{head}: they agree"), true),
    };
    (format!("{head}: {side}"), false)
}

/// Whether pairs of turns went both ways, one losing and one gaining
/// [`GAIN_PCT`] or more: together they measure no gain.
pub fn both_ways(pairs_pct: &[f64]) -> bool {
    pairs_pct.iter().any(|&p| p <= -GAIN_PCT) && pairs_pct.iter().any(|&p| p >= GAIN_PCT)
}

/// The gain of pairs of turns, their mean; None where they went both ways.
pub fn pairs_gain(pairs_pct: &[f64]) -> Option<f64> {
    (!both_ways(pairs_pct)).then(|| mean(pairs_pct))
}

/// A rate in words: `93.6K`.
fn si(x: f64) -> String {
    match x {
        x if x >= 1e6 => format!("{:.2}M", x / 1e6),
        x if x >= 1e3 => format!("{:.1}K", x / 1e3),
        x => format!("{x:.0}"),
    }
}

#[cfg(test)]
#[path = "fio_tests.rs"]
mod tests;
