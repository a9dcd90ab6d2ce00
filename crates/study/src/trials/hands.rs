//! The host's changes of the trials, made through `ssdready-tune`: a queue
//! setting on the target's device and its stack's members by the study's
//! [`Tuner`] (each original journaled under /run/ssdready before the write,
//! put back after the run, on Ctrl-C, on a panic, and by the next command
//! after a kill), and the study's own process moved to control groups of
//! its own for a run ([`Escape`]: only the hierarchies of the limit a
//! trial lifts, the others kept; the user's groups are never changed).
//!
//! A queue setting can move another: switching the scheduler resets
//! `nr_requests` to the new scheduler's default. Each other setting a
//! write moved is put back before the run, journaled
//! ([`Tuner::set_keeping`]); one that cannot be is said
//! ([`Change::moved`]) and the trial is not credited to the change alone.

use crate::trials::{Change, Hands};
use ssdready_tune::escape::{Escape, Lift};
use ssdready_tune::{Restored, Tuner};
use std::cell::RefCell;
use std::rc::Rc;

/// The real host's hands: a [`Tuner`] for the allowed devices, made when
/// first needed, and the escape.
pub struct HostHands {
    allowed: Vec<String>,
    tuner: Option<Rc<RefCell<Tuner>>>,
    root: bool,
    /// Why the devices' settings may not be changed in this study (another
    /// process holds their lock), if so.
    refused: Option<String>,
    /// What was put back or left, one line each, for the study's warnings.
    pub notes: Rc<RefCell<Vec<String>>>,
}

impl HostHands {
    /// Hands for the devices `allowed` (the target's and its stack's).
    pub fn new(allowed: Vec<String>, root: bool) -> Self {
        HostHands {
            allowed,
            tuner: None,
            root,
            refused: None,
            notes: Rc::new(RefCell::new(Vec::new())),
        }
    }

    /// No queue setting is changed: `why` is said instead.
    pub fn refuse_queue(&mut self, why: String) {
        self.refused = Some(why);
    }

    fn tuner(&mut self) -> Result<Rc<RefCell<Tuner>>, String> {
        if self.tuner.is_none() {
            let table = ssdready_diagnosis::levers::shipped();
            let attrs = ssdready_diagnosis::levers::kind_queue::attrs(&table);
            let t = Tuner::new(self.allowed.clone()).map_err(|e| e.to_string())?;
            let t = t.allowing(attrs);
            self.tuner = Some(Rc::new(RefCell::new(t)));
        }
        Ok(self.tuner.clone().expect("made above"))
    }

    /// Put back whatever is still changed (the trials revert each change
    /// after its run; this is the last word), each line not clean returned.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out: Vec<String> = self.notes.borrow_mut().drain(..).collect();
        if let Some(t) = self.tuner.take() {
            let mut t = t.borrow_mut();
            out.extend(t.take_notes().iter().map(|u| u.to_string()));
            out.extend(
                t.restore_all()
                    .iter()
                    .filter(|r| !r.is_original())
                    .map(|r| r.to_string()),
            );
        }
        out
    }
}

impl Hands for HostHands {
    fn finish(&mut self) -> Vec<String> {
        HostHands::finish(self)
    }

    fn queue_unavailable(&self) -> Option<String> {
        match self.root {
            false => Some("changing a device's queue settings needs root".into()),
            true => self.refused.clone(),
        }
    }

    fn escape_unavailable(&self) -> Option<String> {
        (!self.root).then(|| "measuring from a cgroup of ssdready's own needs root".into())
    }

    fn queue(
        &mut self,
        disks: &[String],
        attr: &str,
        value: &str,
    ) -> Result<Box<dyn Change>, String> {
        if disks.is_empty() {
            return Err("the target has no device of its own to set".into());
        }
        if let Some(why) = &self.refused {
            return Err(why.clone());
        }
        let tuner = self.tuner()?;
        // Each device read on its own: the kernel may not offer the file on
        // one of them (refused at once), and a stack's members need not
        // agree; each is put back to its own value.
        let mut before = Vec::new();
        for d in disks {
            let v = tuner.borrow().get(d, attr).map_err(|e| e.to_string())?;
            before.push((d.clone(), v));
        }
        Ok(Box::new(QueueChange {
            tuner,
            before,
            disks: disks.to_vec(),
            attr: attr.into(),
            value: value.into(),
            notes: self.notes.clone(),
            kept: Vec::new(),
            moved: Vec::new(),
        }))
    }

    fn escape(&mut self, lift: &Lift) -> Result<Box<dyn Change>, String> {
        Ok(Box::new(EscapeChange {
            lift: lift.clone(),
            held: None,
            notes: self.notes.clone(),
        }))
    }
}

/// One queue setting on each of the devices.
struct QueueChange {
    tuner: Rc<RefCell<Tuner>>,
    /// Each device's value as read before the change.
    before: Vec<(String, String)>,
    disks: Vec<String>,
    attr: String,
    value: String,
    notes: Rc<RefCell<Vec<String>>>,
    /// The other settings the write moved and that were put back, each
    /// (device, setting), to restore before the change's own.
    kept: Vec<(String, String)>,
    /// The other settings the write moved that could not be put back.
    moved: Vec<String>,
}

impl Change for QueueChange {
    fn apply(&mut self) -> Result<(), String> {
        let mut t = self.tuner.borrow_mut();
        self.moved.clear();
        for d in &self.disks {
            let (kept, moved) = t
                .set_keeping(d, &self.attr, &self.value)
                .map_err(|e| e.to_string())?;
            self.kept.extend(kept.into_iter().map(|a| (d.clone(), a)));
            self.moved.extend(moved);
        }
        let notes: Vec<String> = t.take_notes().iter().map(|u| u.to_string()).collect();
        self.notes.borrow_mut().extend(notes);
        Ok(())
    }

    fn before(&self) -> Vec<(String, String)> {
        self.before.clone()
    }

    fn moved(&self) -> Vec<String> {
        self.moved.clone()
    }

    fn revert(&mut self) -> Result<(), String> {
        let mut t = self.tuner.borrow_mut();
        let mut bad = Vec::new();
        // The settings put back after the write first, then the change's
        // own (a scheduler's restore puts back what its switch resets).
        let kept = std::mem::take(&mut self.kept);
        let own = self.disks.iter().map(|d| (d.clone(), self.attr.clone()));
        for (d, a) in kept.into_iter().rev().chain(own) {
            match t.restore(&d, &a) {
                Some(r @ Restored::ChangedByOther { .. }) | Some(r @ Restored::Failed { .. }) => {
                    bad.push(r.to_string())
                }
                _ => {}
            }
        }
        match bad.is_empty() {
            true => Ok(()),
            false => Err(bad.join("; ")),
        }
    }
}

/// The study's process in groups of its own for the changed run: those
/// of the hierarchies that hold the limits lifted, the others kept.
struct EscapeChange {
    lift: Lift,
    held: Option<Escape>,
    notes: Rc<RefCell<Vec<String>>>,
}

impl Change for EscapeChange {
    fn apply(&mut self) -> Result<(), String> {
        let e = Escape::enter_lifting(&self.lift).map_err(|e| e.to_string())?;
        if e.groups().is_empty() {
            drop(e.leave());
            return Err(
                "the study already runs at the root of every group that could hold this limit: nothing to lift"
                    .into(),
            );
        }
        self.held = Some(e);
        Ok(())
    }

    fn revert(&mut self) -> Result<(), String> {
        let Some(e) = self.held.take() else {
            return Ok(());
        };
        let mut bad = Vec::new();
        for u in e.leave() {
            if !u.is_clean() {
                bad.push(u.to_string());
            }
        }
        if bad.is_empty() {
            return Ok(());
        }
        self.notes.borrow_mut().extend(bad.iter().cloned());
        Err(bad.join("; "))
    }
}

/// The locks of the devices a study may change (the target's and its
/// stack's), held for the study's whole length so that a second study, or
/// a second ssdready, changes none of them meanwhile; the refusal's line
/// when another process holds one (the study then changes none).
pub fn hold(disks: &[String]) -> Result<Vec<ssdready_tune::lock::DeviceLock>, String> {
    ssdready_tune::lock::acquire_all(disks).map_err(|e| {
        format!("{e}: this study changes none of its settings (no scheduler sweep, no queue trial)")
    })
}
