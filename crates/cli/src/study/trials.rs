//! `study`'s trials: after the sweeps are judged, the changes the findings
//! point at tried in turns on this machine (`ssdready_study::trials`),
//! through this binary's run function; a queue setting of the host only
//! as root with `--try-changes` (or on a device the study made), each
//! limit of the study's own cgroups lifted alone as root, the
//! application's own options always. The configuration they keep is
//! written into the study's directory as the files that make it last
//! ([`write_files`]).

use super::StudyArgs;
use crate::say;
use ssdready_diagnosis::trials::Section;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile};
use ssdready_study::plan::Plan;
use ssdready_study::trials::{self, Options, Trials};
use ssdready_study::trials_hands::HostHands;
use ssdready_study::{real, Judgement};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// What the study ran, for its trials.
pub(super) struct Ran<'a> {
    pub targets: &'a [TargetProfile],
    pub plan: &'a Plan,
    pub runs: &'a [RunRecord],
    pub machine: &'a Machine,
    /// The target is the drive the study put behind the kernel.
    pub made_by_study: bool,
    /// Why the devices' settings may not be changed (another process
    /// holds their lock), if so.
    pub refused: Option<String>,
    /// The study's clock: the trials get what it has left.
    pub clock: &'a ssdready_study::clock::Clock,
    /// What can cap the study's I/O, read before its runs: the limits of
    /// its groups, each lifted on its own.
    pub limits: &'a ssdready_measured::limits::Inventory,
}

/// Try the levers; returns the section (None when none applies or the
/// study was stopped) and what putting the changes back said.
pub(super) fn run(
    a: &StudyArgs,
    ran: &Ran,
    j: &mut Judgement,
    stop: &Arc<AtomicBool>,
) -> (Option<Section>, Vec<String>) {
    let Some(t) = ran.targets.first() else {
        return (None, Vec::new());
    };
    if stop.load(Relaxed) {
        return (None, Vec::new());
    }
    let disks = trials::queue_disks(t);
    let mut hands = HostHands::new(disks.clone(), ran.machine.root);
    if let Some(why) = &ran.refused {
        hands.refuse_queue(why.clone());
    }
    let (run_stop, allow) = (stop.clone(), a.allow_destructive);
    let run_fn = move |r: &ssdready_run::RunRequest| {
        crate::progress::run_request(r, run_stop.clone(), allow)
    };
    let mut runner = real::RealRunner::new(stop.clone(), ran.targets, Box::new(run_fn));
    let o = Options {
        quick: a.quick,
        root: ran.machine.root,
        asked: a.try_changes,
        made_by_study: ran.made_by_study,
        budget_s: trials::budget_s(ran.plan, a.quick, ran.clock),
        queue: disks
            .first()
            .map(|d| trials::queue_files(d))
            .unwrap_or_default(),
        limits: Some(ran.limits.clone()),
    };
    if !a.quiet {
        say("trying the changes the findings point at, each in turns against the baseline and put back after");
    }
    let section = trials::run(
        &mut Trials {
            targets: ran.targets,
            plan: ran.plan,
            runs: ran.runs,
            runner: &mut runner,
            hands: &mut hands,
        },
        j,
        &o,
    );
    let mut notes = hands.finish();
    if let Err(w) = runner.restore() {
        notes.push(w.to_string());
    }
    (section, notes)
}

/// Whether the study may change the target device's settings, with the
/// locks it then holds for its whole length: as root, asked with
/// `--try-changes` or on a device the study made, and no other process
/// changing the device (else the refusal, said once).
pub(super) fn consent(
    a: &StudyArgs,
    targets: &[TargetProfile],
    made_by_study: bool,
    root: bool,
) -> (Vec<ssdready_tune::lock::DeviceLock>, Option<String>) {
    let wanted = root && (a.try_changes || made_by_study);
    let Some(t) = targets.first().filter(|_| wanted) else {
        return (Vec::new(), None);
    };
    match ssdready_study::trials_hands::hold(&trials::queue_disks(t)) {
        Ok(locks) => (locks, None),
        Err(why) => {
            say(&why);
            (Vec::new(), Some(why))
        }
    }
}

/// Write the configuration's files (udev rules, a systemd drop-in, the
/// fio job) into the study's directory, each atomically, saying on
/// stderr which; nothing where the trials kept no configuration. A file
/// that cannot be written is said, and the study goes on.
pub(super) fn write_files(doc: &ssdready_diagnosis::model::StudyDoc, dir: &Path) {
    use ssdready_diagnosis::combination_files::{self as files, FIO, SYSTEMD, UDEV};
    let Some(c) = doc.trials.as_ref().and_then(|t| t.combination.as_ref()) else {
        return;
    };
    let date = files::date_of(doc.started_unix_ms);
    for f in files::files(c, &date, doc.limits.as_ref()) {
        let what = match f.name {
            UDEV => "the configuration's queue settings, as udev rules",
            SYSTEMD => "the configuration's control-group properties, as a systemd drop-in",
            FIO => "the configuration's job",
            _ => "",
        };
        match crate::output::write_in(dir, f.name, &f.text) {
            Ok(p) => eprintln!("ssdready: wrote {} ({what})", p.display()),
            Err(e) => say(&format!("{} was not written: {e}", f.name)),
        }
    }
}
