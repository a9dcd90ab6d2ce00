//! The host's changes tried on the job as written
//! (`study --job FILE --try-changes`, root), on the host the job runs on
//! (its device and its stack's members, its queue as read and what may be
//! changed: [`setting`]): each lever planned purely
//! ([`ssdready_diagnosis::trials::plan::for_job`]) in turns — the job, then the job with the change,
//! then the change first, pair by pair, so that a drift favours neither —
//! the change made before its run and put back after it, through the
//! same [`Hands`] as the device study's trials (each original journaled
//! and restored, the study's process moved to groups of its own and
//! back). Each trial is judged as the device study judges its own
//! ([`trials::judge_trial`]). A change that could not be put back stops
//! the trials. The changes that helped are made together for the job's
//! best configuration ([`together`]). What was tried, what helped and the
//! section's words are the diagnosis's ([`ssdready_diagnosis::trials::on_job`]).

use crate::job::request;
use crate::job::RunFigures;
use crate::trials::{turns, Change, Hands, Together};
use ssdready_core::options::Section;
use ssdready_diagnosis::levers;
use ssdready_diagnosis::levers::Consent;
use ssdready_diagnosis::trials::{self, Measured, Outcome, Reason, Trial, Turn, Untested};
use ssdready_measured::limits::Inventory;
use ssdready_run::RunFn;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

pub use ssdready_diagnosis::trials::on_job::{for_fio, helped, on_host, words, HostSection};
pub use ssdready_diagnosis::trials::plan::{for_job, job_point, Planned, Setting};

/// What the host's trials run with: the setting they were planned on and
/// the hands that make each change.
pub struct Host<'a> {
    pub setting: Setting,
    pub hands: &'a mut dyn Hands,
    /// The runs' budget, where the study has one.
    pub budget: Option<crate::clock::RunBudget>,
}

/// The setting of the job's levers on this host: the devices under its
/// first target and the first one's queue as read, the limits read of
/// the study's groups, and what `hands` and the user allow. `command`
/// is the one that would try what is not asked.
pub fn setting(
    sections: &[Section],
    limits: Option<Inventory>,
    asked: bool,
    hands: &dyn crate::trials::Hands,
    command: String,
) -> Setting {
    let disks = disks(sections);
    let first = disks.first();
    Setting {
        queue: first
            .map(|d| crate::trials::queue_files(d))
            .unwrap_or_default(),
        queue_depth: first.and_then(|d| ssdready_probe::blockdev::driver_depth(d)),
        limits,
        consent: Consent {
            root: ssdready_io::kdev::is_root(),
            asked,
            made_by_study: false,
            device: first.is_some(),
            queue_unavailable: hands.queue_unavailable(),
            escape_unavailable: hands.escape_unavailable(),
            pm_qos: std::path::Path::new(ssdready_run::awake::PM_QOS).exists(),
        },
        disks,
        command,
        // Known once the job has run (`session_run`).
        others_apart: false,
    }
}

/// The devices under the job's first target (its first file as fio names
/// it, the device that file is on): the whole disk, and the whole disks
/// under it for md and device-mapper.
pub fn disks(sections: &[Section]) -> Vec<String> {
    let j = sections.iter().position(|s| !s.global).unwrap_or(0);
    let file = ssdready_diagnosis::limit::job::first_file(sections, j);
    // An emulated drive, or an engine's own target, has no device here:
    // the file system of the working directory is not the job's.
    let own = |f: &String| matches!(f.split(':').next(), Some("emu" | "external"));
    let devno = file.filter(|f| !own(f)).and_then(|f| device_of(&f));
    let root = ssdready_probe::sys::Sys::new(std::path::Path::new("/"));
    devno.map_or_else(Vec::new, |d| {
        ssdready_probe::limits_dev::stack_disks(root, d)
    })
}

/// The device `file` is on, or the one it would be made on.
fn device_of(file: &str) -> Option<(u32, u32)> {
    let p = std::path::absolute(file).ok()?;
    let on = p.ancestors().find(|a| a.exists())?;
    ssdready_probe::limits_dev::device_of_path(on).ok()?
}

/// The runs the trials of `planned` take.
pub fn runs(planned: &[Planned]) -> usize {
    planned.len() * 2 * trials::MIN_PAIRS
}

/// The change of the host a planned lever makes (a limit of the study's
/// groups lifts its own, the others kept): the device study's
/// [`crate::trials::change_of`]. Behind `front` (the trial of the limit
/// that hides it), both changes at once, in the trials' one order.
fn change_of(
    host: &mut Host,
    p: &Planned,
    front: Option<&Trial>,
) -> Result<Box<dyn Change>, String> {
    if let Some(f) = front {
        let both = [
            (f.lever.clone(), f.to.clone()),
            (p.lever.id.clone(), p.candidate().value.clone()),
        ];
        return together_of(host, &both);
    }
    let lift = p.lever.lifted(host.setting.limits.as_ref());
    let disks = host.setting.disks.clone();
    crate::trials::change_of(host.hands, (&p.lever, &lift), &disks, p.candidate())
}

/// Try each planned lever on the job as written, into the host section
/// (with the levers not tried, `untested`): the trials' one loop
/// ([`turns::each`]) at the job as written.
pub fn run(
    sections: &[Section],
    host: &mut Host,
    planned: Vec<Planned>,
    untested: Vec<Untested>,
    run: &mut RunFn,
    stop: &Arc<AtomicBool>,
    tell: &mut dyn FnMut(String),
) -> HostSection {
    let mut s = HostSection {
        asked: host.setting.consent.asked,
        at: "the job as written".into(),
        untested,
        ..Default::default()
    };
    let mut bench = OnJob {
        sections,
        host,
        run,
        stop,
        tell,
    };
    turns::each(&mut bench, &planned, &mut s.trials, &mut s.untested);
    trials::rank(&mut s.trials);
    s
}

/// The job as written as the trials' point: its runs through the
/// caller's run function, each lever's change made by the host's hands.
struct OnJob<'a, 'h, 'r> {
    sections: &'a [Section],
    host: &'a mut Host<'h>,
    run: &'a mut RunFn<'r>,
    stop: &'a Arc<AtomicBool>,
    tell: &'a mut dyn FnMut(String),
}

impl turns::Bench for OnJob<'_, '_, '_> {
    type Item = Planned;

    fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
    /// The least pairs (the job's runs are long); past the named limits'
    /// changes, only where the best configuration's turns still fit after.
    fn pairs(&self, p: &Planned) -> usize {
        let keep = 2 * (trials::MIN_PAIRS + ssdready_diagnosis::limit::job::best::PAIRS);
        let first = p.pointed || p.behind.is_some();
        let fits = self.host.budget.as_ref().is_none_or(|b| b.fits(keep));
        usize::from(first || fits) * trials::MIN_PAIRS
    }
    fn no_time(&self, _: &Planned) -> String {
        // Past the named limits a change's turns leave the best configuration's.
        match (self.host.budget.as_ref()).is_some_and(|b| b.fits(2 * trials::MIN_PAIRS)) {
            true => "not tried past the named limits: its turns would take the time kept for the best configuration's turns against the job as written".into(),
            false => "no time left in the budget for its turns".into(),
        }
    }
    fn untested(&self, p: &Planned, reason: Reason, why: String) -> Untested {
        let l = (p.lever.id.as_str(), p.lever.what.as_str());
        Untested::of(l, &p.candidate().value, reason, why)
    }
    fn try_one(&mut self, p: &Planned, pairs: usize, done: &[Trial]) -> (Trial, bool) {
        // A hidden limit is tried behind the one in front where lifting
        // that one gained beyond the noise. Where it gained nothing, it
        // held nothing back, hid nothing, and the other is tried alone.
        let front = p.behind.as_ref().and_then(|(f, _)| {
            done.iter()
                .find(|t| &t.lever == f && t.outcome == Outcome::Better && t.moved.is_none())
        });
        (self.tell)(format!(
            "the job with {} → {}{}, in turns against it as written, put back after each run",
            p.lever.id,
            p.candidate().value,
            match front {
                Some(f) => format!(" behind {} → {}", f.lever, f.to),
                None => String::new(),
            }
        ));
        let (sections, run, stop) = (self.sections, &mut *self.run, self.stop);
        one(sections, self.host, (p, front), (run, stop), pairs)
    }
}

/// One lever in `pairs` turns (behind `front`, the trial of the limit
/// that hid it, where there is one). Returns the trial and whether the
/// trials must stop (its change could not be put back).
fn one(
    sections: &[Section],
    host: &mut Host,
    (p, front): (&Planned, Option<&Trial>),
    (run, stop): (&mut RunFn, &Arc<AtomicBool>),
    pairs: usize,
) -> (Trial, bool) {
    let l = &p.lever;
    let disks = match l.ops().on_queue() {
        true => host.setting.disks.clone(),
        false => Vec::new(),
    };
    let cx = host.setting.context();
    let point = p.point.clone();
    let table = levers::shipped();
    let from = match l.ops().of_host() {
        true => levers::replaced(l, &cx, &point),
        false => "as written".into(),
    };
    let written = (point, "the job as written".to_string());
    let mut trial = Trial {
        to: front
            .and_then(|f| table.iter().find(|x| x.id == f.lever))
            .and_then(|f| levers::lifted_behind(l, f, host.setting.limits.as_ref()))
            .unwrap_or_else(|| p.candidate().value.clone()),
        behind: front.map(|f| f.lever.clone()),
        ..crate::trials::trial_of(l, p.candidate(), (from, disks.clone()), written)
    };
    let mut change = match change_of(host, p, front) {
        Ok(c) => c,
        Err(e) => {
            trial.outcome = Outcome::Failed;
            trial.error = Some(e);
            return (trial, false);
        }
    };
    // A lever of the job's own options (its threads' priority) changes
    // the job's side, not the host.
    let mut changed = sections.to_vec();
    for (k, v) in p.candidate().options.iter().filter(|_| !l.ops().of_host()) {
        crate::job::set_all(&mut changed, k, |_, _| v.clone());
    }
    let mut sides = JobSides {
        jobs: (sections, &changed),
        run,
        stop,
    };
    let fatal = crate::trials::measure_trial(&mut trial, &mut sides, change.as_mut(), pairs);
    trials::judge_trial(&mut trial);
    ssdready_diagnosis::levers::binding::after_turns(&mut trial, l, &cx);
    if let Some(f) = front {
        ssdready_diagnosis::trials::combination::behind_front(&mut trial, f);
    }
    (trial, fatal)
}

/// The job study's sides: the job as written and the changed job, each
/// run through the caller's run function.
struct JobSides<'a, 'r> {
    jobs: (&'a [Section], &'a [Section]),
    run: &'a mut RunFn<'r>,
    stop: &'a Arc<AtomicBool>,
}

impl crate::trials::Sides for JobSides<'_, '_> {
    fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
    fn measure(&mut self, changed: bool) -> Result<Measured, String> {
        let job = if changed { self.jobs.1 } else { self.jobs.0 };
        match (self.run)(&request(job, self.stop)) {
            Ok(r) => Ok(RunFigures::of(&r).measured()),
            Err(e) => Err(e.message().to_string()),
        }
    }
}

/// `pairs` turns of the job as written (`jobs.0`) against the changed
/// job (`jobs.1`, `change` made around its run) by the trials' one
/// [`crate::trials::in_turns`]: the turns, and an error that ended them.
pub fn in_turns(
    jobs: (&[Section], &[Section]),
    change: &mut dyn Change,
    (run, stop): (&mut RunFn, &Arc<AtomicBool>),
    pairs: usize,
) -> (Vec<Turn>, Option<String>) {
    let mut sides = JobSides { jobs, run, stop };
    let done = crate::trials::in_turns(&mut sides, change, pairs);
    (done.turns, done.error)
}

/// The change trial `t` made: its lever's, with the change of the trial
/// it was tried behind (in `s`) where it was.
pub fn change_for(host: &mut Host, s: &HostSection, t: &Trial) -> Result<Box<dyn Change>, String> {
    let front = t
        .behind
        .as_ref()
        .and_then(|f| s.trials.iter().find(|x| &x.lever == f));
    let mut each: Vec<&Trial> = front.into_iter().collect();
    each.push(t);
    together(host, &each)
}

/// The host's changes that helped, as one change, in the trials' one
/// order ([`Together::made`]: the scheduler first, a switch resets
/// `nr_requests`), the limits of the study's groups lifted by one move.
pub fn together(host: &mut Host, helped: &[&Trial]) -> Result<Box<dyn Change>, String> {
    let each: Vec<(String, String)> = helped
        .iter()
        .map(|t| (t.lever.clone(), t.to.clone()))
        .collect();
    together_of(host, &each)
}

/// [`together`] of each lever (by its id) set to its value.
fn together_of(host: &mut Host, each: &[(String, String)]) -> Result<Box<dyn Change>, String> {
    let table = levers::shipped();
    let limits = host.setting.limits.as_ref();
    let changes = each
        .iter()
        .filter_map(|(id, value)| {
            let l = table.iter().find(|l| &l.id == id)?;
            let c = levers::Candidate {
                value: value.clone(),
                options: Vec::new(),
            };
            l.ops()
                .of_host()
                .then(|| (l, l.apply(&c, &l.lifted(limits))))
        })
        .collect();
    let set = Together::made(host.hands, &host.setting.disks, changes)?;
    Ok(Box::new(set))
}

#[cfg(test)]
#[path = "on_job_tests.rs"]
mod tests;

#[cfg(test)]
mod host_tests {
    #[test]
    fn an_emulated_drive_has_no_device_of_the_host() {
        // Not the file system of the working directory that `emu` would name.
        let opt =
            ssdready_core::options::RawOption::cli("filename", Some("emu:nvm-lowlat,size=64m"));
        let emu = vec![ssdready_core::options::Section {
            name: "db".into(),
            global: false,
            options: vec![opt],
        }];
        assert!(super::disks(&emu).is_empty());
    }
}
