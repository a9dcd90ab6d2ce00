//! The study of one machine as one call ([`study`]): what the command line
//! asks checked ([`crate::ask`]), the built-in drive put behind the kernel
//! when there is no target (and its reference device beside it), the
//! targets detected, the devices' locks taken when the study may change
//! their settings, the plan fitted to the budget and kept by its
//! [`Clock`] from the call's start, the limits inventory read, the sweeps
//! and the capacity at a latency target run, the drive's transport
//! measured and taken out, the runs judged, the applications section and
//! the trials (what to change) run, and the document made
//! (`session_run` holds those steps).
//!
//! The caller hands in how a run is executed (its run function, with the
//! targets' safety checks as `run` makes them), the hands that change the
//! host for the trials, and an [`Observer`] that hears the study's
//! progress; it writes the files. Nothing here exits the process: bad
//! input is a [`StudyError`] (its exit code said by
//! [`StudyError::exit_code`]) and the stop flag ends the study after the
//! current run.

use crate::ask::{Ask, AskError};
use crate::clock::Clock;
use crate::model::StudyDoc;
pub use crate::session_parts::{host_hands, Allowed, MakeHands, Observer, Options, Run};
use crate::session_run::{self as steps, Steps};
use crate::{detect, kdrive};
use ssdready_measured::record::TargetProfile;
use ssdready_measured::schema::{SCHEMA, SCHEMA_VERSION};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Why the study did not run.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error(transparent)]
    Ask(#[from] AskError),
    #[error(transparent)]
    Target(Box<detect::DetectError>),
    /// A signal came while the built-in drive was being attached.
    #[error("{0}")]
    DriveInterrupted(kdrive::StartError),
    #[error("interrupted before the study's first run (nothing written)")]
    Interrupted,
    #[error("option '--output': creating {}: {source}", dir.display())]
    Output {
        dir: PathBuf,
        source: std::io::Error,
    },
}

impl StudyError {
    /// The command's exit code: 130 after a signal, 2 for bad input.
    pub fn exit_code(&self) -> i32 {
        match self {
            StudyError::DriveInterrupted(_) | StudyError::Interrupted => 130,
            _ => 2,
        }
    }
}

/// A study done: its document and the directory its files go to.
pub struct Studied {
    pub doc: StudyDoc,
    pub dir: PathBuf,
    /// What was studied.
    pub of: Of,
}

/// What a study studied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Of {
    /// This machine.
    Machine,
    /// A fleet (`--client`); partial when a host did not finish every run.
    Fleet { partial: bool },
}

/// The command line checked, the budget's clock started, the targets
/// detected (the built-in drive's among them when there is no target).
struct Checked {
    budget_s: f64,
    targets: Vec<TargetProfile>,
    dir: PathBuf,
    drive: Option<kdrive::Drive>,
}

/// Run the study of this machine (see the module's documentation), or of
/// a fleet when the options name its hosts ([`fleet`]).
pub fn study(
    o: &Options,
    run: &Run,
    hands: &MakeHands,
    obs: &mut dyn Observer,
) -> Result<Studied, StudyError> {
    if !o.ask.clients.is_empty() {
        return fleet(o, obs);
    }
    // The budget's clock counts from here, the drive's attach included.
    let started = std::time::Instant::now();
    let started_ms = now_ms();
    let Checked {
        budget_s,
        targets,
        dir,
        mut drive,
    } = validate(o, obs)?;
    let clock = Clock::since(started, budget_s);
    let machine = detect::machine(None);
    // Held to the end: a second study changes none of these devices.
    let (_locks, refused) = consent(o, &targets, drive.is_some(), machine.root, obs);
    let ask = Ask {
        host_changes: machine.root && (o.try_changes || drive.is_some()) && refused.is_none(),
        ..o.ask.clone()
    };
    let p = ask.plan(budget_s, &targets, &machine);
    obs.block(&crate::text::plan(&targets, &p, o.ask.quick));
    make_output(&dir, &o.stop)?;
    let limits = inventory(&targets, obs);
    let s = Steps {
        o,
        run,
        targets,
        plan: p,
        dir: &dir,
        clock: &clock,
        machine,
        refused,
        made_by_study: drive.is_some(),
        limits,
    };
    let mut doc = steps::run_all(s, hands, obs);
    doc.warnings.extend(drive.as_mut().and_then(stop_drive));
    close_stacks(&mut doc.targets, started_ms);
    let doc = header(o, started_ms, budget_s, doc);
    Ok(Studied {
        doc,
        dir,
        of: Of::Machine,
    })
}

/// The study of a fleet (`crate::fleet_run`: what is measured): its
/// command line checked and its hosts probed, its plan said, its runs on
/// every host, its document.
pub fn fleet(o: &Options, obs: &mut dyn Observer) -> Result<Studied, StudyError> {
    let started_ms = now_ms();
    let p = o.ask.fleet(&o.stop)?;
    let n_runs = p.runs();
    obs.note(&format!(
        "study of a fleet of {} hosts ({}): 4 KiB random reads at QD {:?}, each host alone for {:.1} s, then 1…{} hosts together with the same I/Os each; {n_runs} runs, about {:.0} s (up to {:.0} s if a host is slow)",
        p.hosts.len(),
        p.target.as_deref().unwrap_or("null engine"),
        p.depths,
        p.runtime_s,
        p.hosts.len(),
        n_runs as f64 * (p.runtime_s + 1.5),
        n_runs as f64 / 2.0 * (5.0 * p.runtime_s + 3.0)
    ));
    std::fs::create_dir_all(&p.dir).map_err(|source| StudyError::Output {
        dir: p.dir.clone(),
        source,
    })?;
    let obs = std::cell::RefCell::new(obs);
    let tell = |m: String| obs.borrow_mut().note(&format!("fleet: {m}"));
    let (section, interrupted) = crate::fleet_run::measure(&p, o.ask.quick, &o.stop, &tell);
    let started_by = crate::fleet_run::Started {
        unix_ms: started_ms,
        tool: o.tool.clone(),
        command: o.command.clone(),
        quick: o.ask.quick,
    };
    let machine = detect::machine(None);
    let (doc, partial) =
        crate::fleet_run::document(&p, section, interrupted, started_by, now_ms(), machine);
    Ok(Studied {
        doc,
        dir: p.dir,
        of: Of::Fleet { partial },
    })
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Check the command line, start the drive behind the kernel when the
/// study has no target, and detect the targets.
fn validate(o: &Options, obs: &mut dyn Observer) -> Result<Checked, StudyError> {
    let (budget_s, dir) = o.ask.check()?;
    let mut drive = default_drive(&o.ask, &o.stop, obs)?;
    let specs = match &drive {
        Some(d) => vec![d.device.clone()],
        None => detect::split_targets(o.ask.target.as_deref().unwrap_or("emu:")),
    };
    let mut targets: Vec<TargetProfile> = specs
        .iter()
        .map(|s| {
            detect::detect(s, o.ask.allow_destructive).map_err(|e| StudyError::Target(Box::new(e)))
        })
        .collect::<Result<_, _>>()?;
    if let Some(d) = drive.as_mut() {
        targets.extend(reference(d, &targets[0], obs));
    }
    Ok(Checked {
        budget_s,
        targets,
        dir,
        drive,
    })
}

/// Beside the drive behind the kernel, the study's reference: a loop
/// device over /dev/shm on the same kernel path without the drive's daemon,
/// where the platform's own peak is measured (the daemon, ssdready's
/// apparatus, would otherwise hold it on a machine with few CPUs).
fn reference(
    d: &mut kdrive::Drive,
    drive: &TargetProfile,
    obs: &mut dyn Observer,
) -> Option<TargetProfile> {
    d.make_reference(drive.logical_block_size.clamp(512, 4096) as u32);
    let Some(l) = &d.reference else {
        obs.warn(&format!(
            "no reference device for the platform's own peak ({}): the study reads the platform from the drive alone",
            d.no_reference.clone().unwrap_or_default()
        ));
        return None;
    };
    match detect::detect(&l.device, false) {
        Ok(mut t) => {
            t.reference = true;
            obs.note(&format!(
                "and beside it {}, a loop device over /dev/shm: the same kernel path without the drive's daemon, for the platform's own peak",
                l.device
            ));
            Some(t)
        }
        Err(e) => {
            obs.warn(&format!(
                "no reference device for the platform's own peak: {e}"
            ));
            None
        }
    }
}

/// With no target: the built-in drive behind the kernel where this machine
/// allows it (root, FUSE and loop devices) unless `--in-process`; None
/// means the in-process drive, and the study says what it leaves out.
fn default_drive(
    a: &Ask,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> Result<Option<kdrive::Drive>, StudyError> {
    if a.target.is_some() {
        return Ok(None);
    }
    let missing = match a.in_process {
        true => None,
        false => kdrive::unavailable(),
    };
    if a.in_process || missing.is_some() {
        obs.note(&ssdready_emu::kernel::daemon::study_note(
            missing.as_deref(),
        ));
        return Ok(None);
    }
    Ok(match kdrive::start(stop) {
        Ok(d) => {
            obs.note(&format!(
                "studying the built-in drive ({}) behind the kernel at {}: every layer from the \
                 system call to the drive's transport is on the path, and the device's timing is \
                 the model's (--in-process studies the device alone)",
                d.spec, d.device
            ));
            Some(d)
        }
        Err(e) if stop.load(Relaxed) => return Err(StudyError::DriveInterrupted(e)),
        // The main job must still run: the drive inside ssdready, saying why.
        Err(e) => {
            obs.warn(&format!(
                "could not put the built-in drive behind the kernel ({e}); studying it in-process \
                 (the device alone) instead"
            ));
            None
        }
    })
}

/// Whether the study may change the target device's settings, with the
/// locks it then holds for its whole length: as root, asked with
/// `--try-changes` or on a device the study made, and no other process
/// changing the device (else the refusal, said once).
fn consent(
    o: &Options,
    targets: &[TargetProfile],
    made_by_study: bool,
    root: bool,
    obs: &mut dyn Observer,
) -> (Vec<ssdready_tune::lock::DeviceLock>, Option<String>) {
    let wanted = root && (o.try_changes || made_by_study);
    let Some(t) = targets.first().filter(|_| wanted) else {
        return (Vec::new(), None);
    };
    match crate::trials_hands::hold(&crate::trials::queue_disks(t)) {
        Ok(locks) => (locks, None),
        Err(why) => {
            obs.warn(&why);
            (Vec::new(), Some(why))
        }
    }
}

/// The output directory, made before the first run (nothing written when
/// a signal came first or it cannot be made).
fn make_output(dir: &Path, stop: &AtomicBool) -> Result<(), StudyError> {
    if stop.load(Relaxed) {
        return Err(StudyError::Interrupted);
    }
    std::fs::create_dir_all(dir).map_err(|source| StudyError::Output {
        dir: dir.to_path_buf(),
        source,
    })
}

/// What can cap the study's I/O, read before its runs: its control groups'
/// limits, the CPUs it may use and the queues of the devices its targets
/// are on; the ones that hold below the machine's own are said.
fn inventory(
    targets: &[TargetProfile],
    obs: &mut dyn Observer,
) -> ssdready_measured::limits::Inventory {
    // A file the study is to create is on the device of the directory it
    // will be made in.
    let devices: Vec<(u32, u32)> = targets
        .iter()
        .filter(|t| t.kind != ssdready_measured::record::TargetKind::Emulator)
        .filter_map(|t| {
            let p = std::path::absolute(Path::new(&t.spec)).ok()?;
            let on = p.ancestors().find(|a| a.exists())?;
            ssdready_probe::limits_dev::device_of_path(on)
                .ok()
                .flatten()
        })
        .collect();
    let inv = ssdready_probe::limits::inventory(std::process::id(), &devices);
    let caps = ssdready_diagnosis::limit::caps::Caps::of(&inv);
    for line in caps.lines() {
        obs.note(&format!("a limit on this study's I/O: {line}"));
    }
    inv
}

/// Stop the built-in drive's daemon; its last words, if any, as a warning.
fn stop_drive(d: &mut kdrive::Drive) -> Option<String> {
    let line = d.stop();
    (!line.is_empty()).then(|| format!("the emulated drive's daemon: {line}"))
}

/// Each stacked target's counters, closed at the end of the study.
fn close_stacks(targets: &mut [TargetProfile], started_ms: u64) {
    for s in targets.iter_mut().filter_map(|t| t.stack.as_mut()) {
        let now = ssdready_probe::stack::snapshot(&s.disks());
        s.close(&now, now_ms().saturating_sub(started_ms));
    }
}

/// The document's header: what made it, when, with what budget, over the
/// study's `body`.
fn header(o: &Options, started_ms: u64, budget_s: f64, body: StudyDoc) -> StudyDoc {
    StudyDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: o.tool.clone(),
        command: o.command.clone(),
        started_unix_ms: started_ms,
        finished_unix_ms: now_ms(),
        quick: o.ask.quick,
        budget_s,
        ..body
    }
}
