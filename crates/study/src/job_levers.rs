//! Which changes of the host a study of a job file tries
//! (`study --job FILE --try-changes`), purely: the queue settings of the
//! job's target device and each limit of the study's own control groups
//! lifted alone (the levers of the device study, `levers.table`), each at
//! the job as written, its point. The job's own options are its variants
//! ([`crate::job`]), not levers here.
//!
//! A lever is tried only where its limit can bind for this job
//! ([`ssdready_diagnosis::levers::binding`]: a request queue that admits more than
//! the job keeps in flight cannot fill, a request size no smaller than the
//! job's blocks splits nothing, read-ahead does nothing for direct or
//! random I/O, a cpuset as large as the job's threads withholds nothing,
//! a throttle that counts none of the job's directions holds nothing;
//! writeback throttling acts only on writes). A limit of the study's
//! groups is a lever only where the inventory shows it set. The first
//! candidate of each lever is tried (the job's runs are long). What is
//! not tried is listed with why, and, where a command lifts the reason,
//! the command that would try it.

use crate::job;
use ssdready_core::options::Section;
use ssdready_diagnosis::levers::{self, Candidate, Context, Lever, Point};
use ssdready_diagnosis::trials::plan::{self as trials_plan, Consent};
use ssdready_diagnosis::trials::{Reason, Untested};
use ssdready_measured::group_limits;
use ssdready_measured::limits::Inventory;
use std::collections::BTreeMap;

/// What the job's levers are planned from: the job's device, its queue
/// as read, the limits of the study's groups, and what may be changed.
#[derive(Clone, Debug, Default)]
pub struct Setting {
    /// The job's target device and, for md and device-mapper, its members
    /// (never the disk a loop device's file is on).
    pub disks: Vec<String>,
    /// The first device's queue files as read.
    pub queue: BTreeMap<String, String>,
    /// The most requests its driver takes at once.
    pub queue_depth: Option<u64>,
    pub limits: Option<Inventory>,
    pub consent: Consent,
    /// The command that tries what `--try-changes` would.
    pub command: String,
}

/// A lever to try on the job, with the value tried.
#[derive(Clone, Debug)]
pub struct Planned {
    pub lever: Lever,
    pub candidate: Candidate,
    /// Its limit binds only once another limit of the study's groups is
    /// lifted ([`levers::binding::hidden_by`]): that limit's lever, and why
    /// it cannot bind alone. Tried behind that lever's change, the two
    /// together against the job as written, never alone.
    pub behind: Option<(String, String)>,
}

impl Setting {
    /// The levers' context: the queue, its depth, the limits.
    pub fn context(&self) -> Context {
        Context {
            queue: self.queue.clone(),
            queue_depth: self.queue_depth,
            limits: self.limits.clone(),
            may_raise_priority: self.consent.root,
            ..Default::default()
        }
    }
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
        queue_depth: first.and_then(|d| crate::trials::device_depth(d)),
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
    }
}

/// The devices under the job's first target (its `filename`, the device
/// its file is on): the whole disk, and the whole disks under it for md
/// and device-mapper.
pub fn disks(sections: &[Section]) -> Vec<String> {
    let j = sections.iter().position(|s| !s.global).unwrap_or(0);
    let Some(file) = job::spec(sections, j).filename.into_iter().next() else {
        return Vec::new();
    };
    // An emulated drive, or an engine's own target, has no device here:
    // the file system of the working directory is not the job's.
    if ["emu", "external"]
        .iter()
        .any(|p| file.starts_with(&format!("{p}:")) || file == *p)
    {
        return Vec::new();
    }
    let Ok(p) = std::path::absolute(&file) else {
        return Vec::new();
    };
    let Some(on) = p.ancestors().find(|a| a.exists()) else {
        return Vec::new();
    };
    let whole = |maj: u32, min: u32| {
        ssdready_io::target::sysfs::DevNode::from_major_minor(maj, min).map(|d| d.disk)
    };
    let Some(disk) = ssdready_probe::limits_dev::device_of_path(on)
        .ok()
        .flatten()
        .and_then(|(a, b)| whole(a, b))
    else {
        return Vec::new();
    };
    let mut out = vec![disk.clone()];
    if disk.starts_with("md") || disk.starts_with("dm-") {
        let slaves = std::fs::read_dir(format!("/sys/block/{disk}/slaves"));
        for e in slaves.into_iter().flatten().flatten() {
            let dev = std::fs::read_to_string(e.path().join("dev")).unwrap_or_default();
            let Some((a, b)) = dev.trim().split_once(':') else {
                continue;
            };
            if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                if let Some(d) = whole(a, b).filter(|d| !out.contains(d)) {
                    out.push(d);
                }
            }
        }
    }
    out
}

/// The job as written as a lever's point: its I/O (the first job's, or
/// mixed I/O where its jobs differ), its block (the largest size of the
/// directions it does, as fio resolves `bs`, `blocksize` and their values
/// per direction), its threads (every job's `numjobs` together) and the
/// I/Os they keep in flight shared among them (one each on a synchronous
/// engine).
pub fn point(sections: &[Section]) -> Point {
    let jobs: Vec<usize> = (0..sections.len())
        .filter(|&i| !sections[i].global)
        .collect();
    let first = jobs.first().copied().unwrap_or(0);
    let spec = |j| job::spec(sections, j);
    let own = spec(first);
    let rw = match jobs.iter().all(|&j| spec(j).rw == own.rw) {
        true => own.rw.name().to_string(),
        false => "randrw".into(),
    };
    let (mut threads, mut in_flight) = (0u64, 0u64);
    for &j in &jobs {
        let s = spec(j);
        let n = u64::from(s.numjobs.max(1));
        let qd = match s.engine().caps.synchronous {
            true => 1,
            false => u64::from(s.iodepth.max(1)),
        };
        threads += n;
        in_flight += n * qd;
    }
    let threads = threads.max(1);
    Point {
        rw,
        bs: u64::from(job::largest_block(&own)),
        qd: in_flight.div_ceil(threads).max(1) as u32,
        threads: threads as u32,
        engine: Some(job::engine_named(&own)),
        direct: own.direct,
    }
}

fn untested(l: &Lever, what: String, reason: Reason, why: String, s: &Setting) -> Untested {
    let command = matches!(reason, Reason::NotAsked | Reason::NotRoot).then(|| s.command.clone());
    Untested {
        lever: l.id.clone(),
        what,
        reason,
        why,
        estimate: None,
        command,
    }
}

/// Why a lever cannot be tried on the job (its reason and words), or its
/// candidate.
fn assess(l: &Lever, cx: &Context, p: &Point) -> Result<Candidate, (Reason, String)> {
    l.ops().offered(l, cx, "on the job's device")?;
    if let Some(why) = l.ops().idle_for_job(l, p) {
        return Err((Reason::CannotBind, why));
    }
    if let Some(why) = levers::cannot_bind(l, cx, p) {
        return Err((
            Reason::CannotBind,
            format!("its limit cannot bind for this job: {why}"),
        ));
    }
    let Some(first) = levers::candidates(l, cx, p).into_iter().next() else {
        return Err((
            Reason::NoCandidate,
            "nothing to try: it is already at the value the study would try".into(),
        ));
    };
    Ok(first)
}

/// Whether a lever of this kind may be tried on the job: the device
/// study's gate ([`trials_plan::gate`]), and the job's own rule that a
/// limit of the study's groups is lifted only when asked too.
fn gate(l: &Lever, s: &Setting) -> Result<(), (Reason, String)> {
    if !s.consent.asked && s.consent.root && l.ops().lifts_group() {
        return Err((
            Reason::NotAsked,
            "a limit of the study's control group: run with --try-changes to measure the job \
             without it (from a group of ssdready's own; the user's groups unchanged)"
                .into(),
        ));
    }
    trials_plan::gate(l, Default::default(), &s.consent)
}

/// The levers to try on the job as written and those not tried, from
/// `table` (the shipped levers).
pub fn plan(table: &[Lever], sections: &[Section], s: &Setting) -> (Vec<Planned>, Vec<Untested>) {
    let cx = s.context();
    let p = point(sections);
    let (mut todo, mut not) = (Vec::new(), Vec::new());
    for l in table {
        if !l.ops().of_host() {
            continue;
        }
        let held = match (l.ops().lifts_group(), l.lift(), &s.limits) {
            (true, Some(g), Some(inv)) => group_limits::holds(g, inv),
            (lifts, ..) => !lifts,
        };
        // A limit the groups do not set is nothing to lift.
        if !held {
            continue;
        }
        if l.ops().on_queue() && !s.consent.device {
            let why = "the job's target has no device queue of its own".to_string();
            not.push(untested(l, l.what.clone(), Reason::NoDevice, why, s));
            continue;
        }
        let c = match assess(l, &cx, &p) {
            Ok(c) => c,
            Err((r, why)) => {
                not.push(untested(l, l.what.clone(), r, why, s));
                continue;
            }
        };
        let what = format!("{} → {}", l.what, c.value);
        let behind =
            levers::binding::hidden_by(l, &cx, &p).map(|(f, why)| (f.word().to_string(), why));
        match gate(l, s) {
            Ok(()) => todo.push(Planned {
                lever: l.clone(),
                candidate: c,
                behind,
            }),
            Err((r, why)) => not.push(untested(l, what, r, why, s)),
        }
    }
    // A limit hidden behind another is tried after the one in front.
    todo.sort_by_key(|p| p.behind.is_some());
    (todo, not)
}

#[cfg(test)]
#[path = "job_levers_tests.rs"]
mod tests;
