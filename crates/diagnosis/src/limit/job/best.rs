//! The job's best configuration: every change of the application's I/O
//! mechanics that gained beyond the noise on its own (the best value of
//! each option; never a change of its workload, [`super::gain`]) and
//! every change of the host that helped, applied together and run in turns against the job as written — the
//! job first, then the changed one first, pair by pair, so that a drift
//! through the runs favours neither — with the gain of the set, judged
//! as every trial and set of the study is ([`judge`]), and whether it
//! beat the best single change. The user's job file comes
//! back with those options changed (`job-best.fio`), its header giving
//! the measured gain, and the lines that changed.

use super::{self as job, VariantResult};
use crate::levers::Metric;
use crate::trials::combination::Member;
use crate::trials::{Gain, Outcome, Trial, Turn};
use serde::{Deserialize, Serialize};
use ssdready_core::options::Section;

/// Pairs of turns the set runs: as many as every trial of the study
/// takes at least, so that it is judged as they are.
pub const PAIRS: usize = crate::trials::MIN_PAIRS;

/// The set of the variants `chosen` and the host's changes that `helped`,
/// not yet measured: judged on the job's own metric (bandwidth where
/// `by_bandwidth`: every direction of the job streams), the best single
/// change's gain on it kept for the comparison.
pub fn of(chosen: &[&VariantResult], helped: &[Trial], by_bandwidth: bool) -> Best {
    let own = metric(by_bandwidth);
    let host_gains = helped
        .iter()
        .filter_map(|t| t.main_gain())
        .filter(|g| g.metric == own)
        .map(|g| g.change_pct);
    Best {
        options: chosen.iter().map(|v| v.option.clone()).collect(),
        asks: chosen.iter().map(|v| v.asks.clone()).collect(),
        host: helped.iter().map(Trial::change).collect(),
        by_bandwidth,
        best_single_pct: chosen
            .iter()
            .filter_map(|v| v.gain_pct)
            .chain(host_gains)
            .fold(f64::MIN, f64::max),
        ..Default::default()
    }
}

impl Best {
    /// Every change of the set, the job's options then the host's.
    pub fn changes(&self) -> Vec<String> {
        self.options.iter().chain(&self.host).cloned().collect()
    }

    /// The set in words ([`crate::trials::set_words`]).
    pub fn set_words(&self) -> String {
        crate::trials::set_words(&self.changes())
    }
}

/// The set of changes, measured together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Best {
    /// The options changed (`iodepth=32`), the best value of each: the
    /// application's I/O mechanics only.
    pub options: Vec<String>,
    /// What each asks of the application (`numjobs=2: the application
    /// issues from 2 threads`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asks: Vec<String>,
    /// The host's changes that helped on the job, made with them
    /// (`scheduler mq-deadline → none`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<String>,
    /// Each turn's runs: the job as written, and with the changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<Turn>,
    /// Judged on bandwidth (the job's metric: every direction streams),
    /// not IOPS.
    pub by_bandwidth: bool,
    /// Each pair's change against the job, percent.
    pub pairs_pct: Vec<f64>,
    /// Their mean.
    pub gain_pct: Option<f64>,
    /// Better beyond the noise, as a trial or a set of the device study is
    /// judged ([`judge`]).
    pub beyond_noise: bool,
    /// What the turns say, judged as every trial and set is.
    #[serde(default)]
    pub outcome: Outcome,
    /// The gains on each metric, with the intervals they rest on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gains: Vec<Gain>,
    /// Where the search kept other than the whole set as measured (a
    /// subset, or the best change of the host alone), or a cap that
    /// bought nothing alone behind the change in front of it: the choice
    /// in words ([`super::best_set::kept`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instead_of: Option<String>,
    /// The best single change's gain, for the comparison.
    pub best_single_pct: f64,
    /// The job file with the options changed.
    pub file: String,
    /// The lines that changed, as a diff would show them (`+iodepth=32`).
    pub diff: Vec<String>,
    pub error: Option<String>,
    /// fio's A/B of the same changes, each pair's change against fio's
    /// job as written, percent on the job's metric, where fio ran it
    /// ([`super::fio`]), and their mean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fio_pairs_pct: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_gain_pct: Option<f64>,
    /// The whole set as measured, where the search kept another
    /// ([`super::best_set::kept`]): its figures, and fio's A/B of it,
    /// stay checkable against fio's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<Box<Best>>,
}

/// The options of the variants of the application's I/O mechanics that
/// gained beyond the noise, the best value of each option; none when
/// fewer than one gained. A change of the workload is never chosen, nor
/// one fio's A/B of it does not confirm.
pub fn chosen(variants: &[VariantResult]) -> Vec<&VariantResult> {
    let mut best: Vec<&VariantResult> = Vec::new();
    for v in variants.iter().filter(|v| {
        v.beyond_noise
            && v.gain_pct.is_some_and(|g| g > 0.0)
            && super::gain::mechanic(&v.option)
            && v.fio_gain_pct.is_none_or(super::fio::confirms)
    }) {
        let key = v.option.split('=').next().unwrap_or_default();
        match best
            .iter()
            .position(|b| b.option.starts_with(&format!("{key}=")))
        {
            Some(i) if best[i].gain_pct < v.gain_pct => best[i] = v,
            Some(_) => {}
            None => best.push(v),
        }
    }
    best
}

/// The job's sections with `options` (`key=value`) set on every job, by
/// fio's own name of each option, after what the job wrote (under any
/// of its names) so that it wins. A value of `×2`, `×4` or `×½` scales
/// each job's own `iodepth` or `numjobs` (at least 1): the jobs of a
/// file that differ in it each keep their own, changed alike.
pub fn apply(sections: &[Section], options: &[String]) -> Vec<Section> {
    let mut out = sections.to_vec();
    for o in options {
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        job::set_all(&mut out, k, |i, all| match scale(v) {
            Some((num, den)) => (own(all, i, k) * num / den).max(1).to_string(),
            None => v.to_string(),
        });
    }
    out
}

/// The factor a scaling value (`×2`, `×½`) stands for, as a fraction.
pub fn scale(v: &str) -> Option<(u64, u64)> {
    match v.strip_prefix('×')? {
        "½" => Some((1, 2)),
        n => Some((n.parse().ok()?, 1)),
    }
}

/// Job `i`'s own value of `key` (`iodepth` or `numjobs`) as fio runs it.
pub fn own(sections: &[Section], i: usize, key: &str) -> u64 {
    let s = job::spec(sections, i);
    match job::canonical(key) {
        "numjobs" => u64::from(s.numjobs),
        _ => u64::from(s.iodepth),
    }
}

/// The job file as sections: each `[name]` with its options, the ones a
/// later option of the same name or of fio's other name for it
/// (`readwrite`, `rw`) replaces left out; includes come out expanded.
pub fn render(sections: &[Section], header: &str) -> String {
    let mut s = String::new();
    for line in header.lines() {
        s.push_str(&format!("# {line}\n"));
    }
    for sec in sections {
        let mut body = String::new();
        for (i, o) in sec.options.iter().enumerate() {
            let name = job::canonical(&o.key);
            let replaced = sec.options[i + 1..]
                .iter()
                .any(|x| job::canonical(&x.key) == name);
            if replaced {
                continue;
            }
            match &o.value {
                Some(v) => body.push_str(&format!("{}={v}\n", o.key)),
                None => body.push_str(&format!("{}\n", o.key)),
            }
        }
        // The command line's empty globals are no section of the file.
        if !(sec.global && body.is_empty()) {
            s.push_str(&format!("\n[{}]\n{body}", sec.name));
        }
    }
    s
}

/// The lines of `after` not in `before` (`+`) and of `before` not in
/// `after` (`-`), option lines only, each compared within its section;
/// where more than one section changed, each line names its section
/// (`[read] +iodepth=4`).
pub fn diff(before: &str, after: &str) -> Vec<String> {
    let opts = |t: &str| -> Vec<(String, String)> {
        let mut section = String::new();
        let mut out = Vec::new();
        for l in t.lines().map(str::trim) {
            match l {
                "" => {}
                l if l.starts_with('#') || l.starts_with(';') => {}
                l if l.starts_with('[') => section = l.to_string(),
                l => out.push((section.clone(), l.to_string())),
            }
        }
        out
    };
    let (b, a) = (opts(before), opts(after));
    let mut out: Vec<(&str, String)> = b
        .iter()
        .filter(|l| !a.contains(l))
        .map(|(s, l)| (s.as_str(), format!("-{l}")))
        .collect();
    out.extend(
        a.iter()
            .filter(|l| !b.contains(l))
            .map(|(s, l)| (s.as_str(), format!("+{l}"))),
    );
    let one = out.windows(2).all(|w| w[0].0 == w[1].0);
    out.into_iter()
        .map(|(s, l)| match one {
            true => l,
            false => format!("{s} {l}"),
        })
        .collect()
}

/// The set judged from its turns as every trial and set of the study is
/// ([`crate::trials::combination::judge_set`]: the mean change on the
/// job's metric and the interval it rests on; better beyond the noise,
/// or by every pair clearly), each pair's change kept for the words.
pub fn judge(best: &mut Best) {
    let m = metric(best.by_bandwidth);
    best.pairs_pct = pairs_pct(&best.turns, best.by_bandwidth);
    let mut set = crate::trials::combination::Set {
        turns: best.turns.clone(),
        ..Default::default()
    };
    crate::trials::combination::judge_set(&mut set, m);
    best.gain_pct = set
        .gains
        .iter()
        .find(|g| g.metric == m)
        .map(|g| g.change_pct);
    best.outcome = set.outcome;
    best.beyond_noise = set.outcome == Outcome::Better;
    best.gains = set.gains;
}

/// Each turn's change against the job as written, percent, on the job's
/// metric: bandwidth (`by_bandwidth`) or IOPS.
pub fn pairs_pct(turns: &[Turn], by_bandwidth: bool) -> Vec<f64> {
    let m = metric(by_bandwidth);
    let pct = |t: &Turn| Some(100.0 * (t.change.get(m)? / t.baseline.get(m)?.max(1e-9) - 1.0));
    turns.iter().filter_map(pct).collect()
}

/// The metric a job is judged on: bandwidth where every direction
/// streams, else IOPS.
fn metric(by_bandwidth: bool) -> Metric {
    match by_bandwidth {
        true => Metric::Bandwidth,
        false => Metric::Iops,
    }
}

/// The answer in words.
pub fn words(b: &Best) -> String {
    let Some(g) = b.gain_pct else {
        return format!(
            "the best configuration ({}) was not measured: {}",
            b.set_words(),
            b.error.as_deref().unwrap_or("no time left")
        );
    };
    let m = if b.by_bandwidth { "bandwidth" } else { "IOPS" };
    let each = b
        .pairs_pct
        .iter()
        .map(|p| format!("{p:+.0} %"))
        .collect::<Vec<_>>()
        .join(", ");
    // Less than the best single change only beyond the noise floor.
    let less = g < b.best_single_pct - job::GAIN_PCT;
    // `beyond_noise` is the set's word in a document of any build (one
    // before the outcome was kept says it alone).
    let verdict = match (b.beyond_noise, b.outcome, less) {
        (true, _, true) => "beyond the noise, but less than the best single change alone",
        (true, _, false) => "beyond the noise",
        (false, Outcome::Worse, _) => "worse than the job as written, beyond the noise",
        _ => "not beyond the noise",
    };
    let asks = match b.asks.is_empty() {
        true => String::new(),
        false => format!("; what it asks of the application: {}", b.asks.join("; ")),
    };
    let fio = b
        .fio_gain_pct
        .map_or(String::new(), |f| format!("; by fio, in turns: {f:+.1} %"));
    let instead = b
        .instead_of
        .as_ref()
        .map_or(String::new(), |w| format!("; {w}"));
    let dirs = crate::trials::direction_words(&b.turns)
        .map_or(String::new(), |d| format!("; each direction: {d}"));
    let how = match b.changes().len() {
        1 => "alone",
        _ => "together",
    };
    // A set that did not gain is no configuration to keep (no job file is
    // written for it): the job as written stands.
    let lead = match b.beyond_noise {
        true => "the best configuration:",
        false => "no configuration beat the job as written beyond the noise; the best tried:",
    };
    format!(
        "{lead} {} {how}, {m} {g:+.1} % ({each} in {} pairs in turns against the job as written), {verdict}{dirs}{fio}{asks}{instead}",
        b.set_words(),
        b.pairs_pct.len()
    )
}

/// What the job file's header adds where the set has host changes: they
/// come with it, in the files beside it.
pub fn host_note(b: &Best) -> String {
    match b.host.is_empty() {
        true => String::new(),
        false => format!(
            "\nwith the host's changes ({}): apply the files written beside this file first (udev rules, systemd drop-in or service)",
            crate::trials::set_words(&b.host)
        ),
    }
}

/// The files that make the best configuration's host changes last, each
/// with its measured gain in its header (the device study's:
/// `combination_files`, the udev rules of the queue settings and the
/// systemd drop-in of the limits lifted): none where the set has no host
/// change, or gained nothing beyond the noise. `at` says what the set ran
/// on; `trials` are the host's trials its changes come from.
pub fn host_files(
    b: &Best,
    trials: &[Trial],
    at: &str,
    date: &str,
    limits: Option<&ssdready_measured::limits::Inventory>,
) -> Vec<crate::trials::files::File> {
    use crate::trials::combination::{Combination, Set};
    use crate::trials::files::{self as files, FIO};
    if b.host.is_empty() || !b.beyond_noise {
        return Vec::new();
    }
    let changes: Vec<Member> = trials
        .iter()
        .filter(|t| b.host.contains(&t.change()))
        .map(member_of)
        .collect();
    let measure = metric(b.by_bandwidth);
    let kept = Set {
        levers: changes.iter().map(|m| m.lever.clone()).collect(),
        turns: b.turns.clone(),
        baseline_options: vec!["the job as written".into()],
        change_options: vec!["job-best.fio".into()],
        // The set's own judgement ([`judge`]), not a second one.
        outcome: b.outcome,
        gains: b.gains.clone(),
        ..Default::default()
    };
    let c = Combination {
        at: at.into(),
        measure,
        changes,
        sets: vec![kept.clone()],
        kept,
        ..Default::default()
    };
    files::files(&c, date, limits)
        .into_iter()
        .filter(|f| f.name != FIO)
        .collect()
}

/// The member of a trial `t` of the host's changes.
pub fn member_of(t: &Trial) -> Member {
    let table = crate::levers::shipped();
    Member {
        lever: t.lever.clone(),
        kind: t.kind,
        change: t.change(),
        attr: table
            .iter()
            .find(|l| l.id == t.lever)
            .and_then(|l| l.attr.clone()),
        devices: t.devices.clone(),
        value: t.to.clone(),
        options: Vec::new(),
        permanent: t.permanent.clone(),
        alone: t.main_gain().cloned(),
        alone_at: t.at.clone(),
        behind: false,
    }
}

/// What fio says of the whole set the search did not keep
/// ([`Best::whole`]), against the configuration kept `b`, both by fio's
/// pairs: more beyond fio's pairs (each of the whole set's above every
/// one of the kept's), or no more, as the study found. Under a CPU
/// `quota` the engines' CPU per I/O sets each one's rate, said as the
/// condition it is. None where fio ran either not at all.
pub fn whole_line(b: &Best, quota: Option<&str>) -> Option<String> {
    let w = b.whole.as_deref()?;
    let (kept, whole) = (b.fio_gain_pct?, w.fio_gain_pct?);
    let low = w.fio_pairs_pct.iter().copied().fold(f64::MAX, f64::min);
    let high = b.fio_pairs_pct.iter().copied().fold(f64::MIN, f64::max);
    let set = w.set_words();
    if low <= high {
        return Some(format!(
            "the whole set ({set}) by fio bought {whole:+.1} %, no more than the configuration kept ({kept:+.1} %) beyond fio's pairs: as the study found"
        ));
    }
    let why = match quota {
        Some(q) => format!("the job runs under {q}, where each engine's CPU per I/O sets its rate: fio's job and the study's part as their engines' costs do, so expect fio's figure where the application spends as fio does"),
        None => "why the study's runs found nothing more in it is not identified".into(),
    };
    Some(format!(
        "the whole set ({set}) by fio bought {whole:+.1} %, more than the configuration kept ({kept:+.1} %) in every pair: {why}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::options::RawOption;

    fn v(option: &str, gain: f64, beyond: bool) -> VariantResult {
        VariantResult {
            what: option.into(),
            option: option.into(),
            gain_pct: Some(gain),
            beyond_noise: beyond,
            ..Default::default()
        }
    }

    #[test]
    fn the_set_is_the_best_value_of_each_option_that_gained_beyond_the_noise() {
        let vs = [
            v("iodepth=32", 20.0, true),
            v("iodepth=64", 25.0, true),
            v("iodepth=8", -20.0, true),
            v("numjobs=4", 22.0, true),
            v("ioengine=io_uring", 3.0, false),
        ];
        let c: Vec<&str> = chosen(&vs).iter().map(|x| x.option.as_str()).collect();
        assert_eq!(c, ["iodepth=64", "numjobs=4"]);
        assert!(chosen(&vs[4..]).is_empty());
    }

    #[test]
    fn the_file_comes_back_with_the_options_changed_and_the_gain_in_its_header() {
        let sections = vec![
            Section {
                name: "global".into(),
                global: true,
                options: vec![
                    RawOption::cli("iodepth", Some("16")),
                    RawOption::cli("bs", Some("8k")),
                ],
            },
            Section {
                name: "oltp".into(),
                global: false,
                options: vec![
                    RawOption::cli("rw", Some("randrw")),
                    RawOption::cli("numjobs", Some("2")),
                ],
            },
        ];
        let before = render(&sections, "the job as written");
        let after = render(
            &apply(&sections, &["iodepth=64".into(), "numjobs=4".into()]),
            "measured together: IOPS +40.0 %",
        );
        assert!(
            after.starts_with("# measured together: IOPS +40.0 %\n"),
            "{after}"
        );
        // The job's own iodepth (none: the global's) is set on the job.
        assert!(
            after.contains("[oltp]\nrw=randrw\niodepth=64\nnumjobs=4\n"),
            "{after}"
        );
        let d = diff(&before, &after);
        assert_eq!(d, ["-numjobs=2", "+iodepth=64", "+numjobs=4"], "{d:?}");
    }

    #[test]
    fn a_change_to_several_sections_names_each_line_s_section() {
        let before = "[global]\nbs=4k\n\n[fill]\nrw=write\n\n[read]\nrw=read\n";
        let after =
            "[global]\nbs=4k\n\n[fill]\nrw=write\niodepth=4\n\n[read]\nrw=read\niodepth=4\n";
        assert_eq!(
            diff(before, after),
            ["[fill] +iodepth=4", "[read] +iodepth=4"]
        );
        // The same line in one section only: no section named.
        let after = "[global]\nbs=4k\n\n[fill]\nrw=write\n\n[read]\nrw=read\niodepth=4\n";
        assert_eq!(diff(before, after), ["+iodepth=4"]);
    }

    /// Turns of the job as written and changed, IOPS.
    fn turns(pairs: &[(f64, f64)]) -> Vec<Turn> {
        let m = |iops: f64| crate::trials::Measured {
            iops,
            bw_bytes_per_s: 4096.0 * iops,
            ..Default::default()
        };
        pairs
            .iter()
            .map(|&(a, b)| Turn {
                baseline: m(a),
                change: m(b),
            })
            .collect()
    }

    #[test]
    fn the_set_is_judged_as_every_trial_is_beyond_the_noise_of_its_pairs() {
        let mut b = Best {
            options: vec!["iodepth=64".into(), "numjobs=4".into()],
            best_single_pct: 25.0,
            turns: turns(&[(100.0, 140.0), (100.0, 136.0), (100.0, 138.0)]),
            ..Default::default()
        };
        judge(&mut b);
        assert!(b.beyond_noise);
        assert_eq!(b.outcome, Outcome::Better);
        assert!((b.gain_pct.unwrap() - 38.0).abs() < 1e-9);
        assert_eq!(b.pairs_pct.len(), 3);
        assert!(words(&b).ends_with("beyond the noise"), "{}", words(&b));
        b.turns = turns(&[(100.0, 120.0), (100.0, 121.0), (100.0, 119.0)]);
        judge(&mut b);
        assert!(!words(&b).contains("less than"), "{}", words(&b));
        b.best_single_pct = 40.0;
        assert!(
            words(&b).contains("less than the best single change"),
            "{}",
            words(&b)
        );
        // Pairs that disagree: within the noise, as a trial's would be.
        b.turns = turns(&[(100.0, 150.0), (100.0, 95.0), (100.0, 104.0)]);
        judge(&mut b);
        assert!(!b.beyond_noise);
        assert!(words(&b).contains("not beyond the noise"));
        assert!(
            words(&b).starts_with("no configuration beat the job as written beyond the noise"),
            "{}",
            words(&b)
        );
        // The same turns as a set of the device study's: the same answer.
        let mut set = crate::trials::combination::Set {
            turns: b.turns.clone(),
            ..Default::default()
        };
        crate::trials::combination::judge_set(&mut set, Metric::Iops);
        assert_eq!(set.outcome, b.outcome);
        // A document of a build that kept no outcome reads as it was said.
        let mut old = b.clone();
        (old.outcome, old.beyond_noise) = (Outcome::default(), true);
        assert!(
            words(&old).contains(", beyond the noise"),
            "{}",
            words(&old)
        );
        // Worse in every pair is said so, not only "not beyond the noise".
        b.turns = turns(&[(100.0, 70.0), (100.0, 72.0), (100.0, 71.0)]);
        judge(&mut b);
        assert_eq!(b.outcome, Outcome::Worse);
        assert!(
            words(&b).contains("worse than the job as written"),
            "{}",
            words(&b)
        );
    }

    #[test]
    fn the_whole_set_not_kept_is_set_beside_the_kept_one_by_fios_pairs() {
        use ssdready_measured::curve::mean;
        let kept = |pairs: &[f64], whole: Option<&[f64]>| Best {
            host: vec!["scheduler bfq → none".into()],
            fio_gain_pct: Some(mean(pairs)),
            fio_pairs_pct: pairs.to_vec(),
            whole: whole.map(|w| {
                Box::new(Best {
                    host: vec![
                        "scheduler bfq → none".into(),
                        "cpu-quota 1.00 → none".into(),
                    ],
                    fio_gain_pct: Some(mean(w)),
                    fio_pairs_pct: w.to_vec(),
                    ..Default::default()
                })
            }),
            ..Default::default()
        };
        // A CPU quota and a scheduler: fio's job, costlier per I/O, stays held
        // by the quota once the scheduler is changed (+58/+49 % kept, +85/+80 %
        // whole, as fio measured them on a RAM loop device).
        let q = "a CPU quota of 1.00 CPUs";
        let line = whole_line(&kept(&[58.3, 49.3], Some(&[85.0, 80.0])), Some(q)).unwrap();
        assert!(
            line.contains("more than the configuration kept (+53.8 %)"),
            "{line}"
        );
        assert!(line.contains(q) && line.contains("+82.5 %"), "{line}");
        let line = whole_line(&kept(&[58.3, 49.3], Some(&[85.0, 80.0])), None).unwrap();
        assert!(line.ends_with("is not identified"), "{line}");
        // Overlapping pairs: no more, as the study found.
        let line = whole_line(&kept(&[58.3, 49.3], Some(&[55.0, 62.0])), Some(q)).unwrap();
        assert!(line.ends_with("as the study found"), "{line}");
        assert_eq!(whole_line(&kept(&[58.3, 49.3], None), Some(q)), None);
        let mut unmeasured = kept(&[58.3], Some(&[80.0]));
        unmeasured.whole.as_mut().unwrap().fio_gain_pct = None;
        assert_eq!(whole_line(&unmeasured, Some(q)), None);
    }
}
