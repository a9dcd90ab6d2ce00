//! [`Tuner`]: a device's queue settings changed with a journal, and put
//! back. The order of a change: check (a setting of [`ATTRS`] or one the
//! caller added, a device the caller allowed, a plain value, a setting the
//! kernel offers); take the
//! device's lock; read the original; assert the lock is held; record the
//! original with the value asked for in the journal, synced; at the write,
//! check that the journal on disk holds them; only then write; read the
//! value back and record what the kernel shows. A kill at any moment leaves a
//! journal that says what to put back.

use crate::journal::{self, Journal, Setting};
use crate::owner::{Liveness, Owner};
use crate::sysfs::{self, ATTRS};
use crate::undo::Undone;
use crate::{registry, Restored, TuneError};
use std::path::{Path, PathBuf};

/// A hook run just before each write (tests: check the journal, or fail).
#[cfg(test)]
pub(crate) type BeforeWrite = Box<dyn FnMut(&Path) -> std::io::Result<()>>;

/// Changes queue settings of the allowed devices, journaled; puts them
/// back on [`restore`](Tuner::restore), [`restore_all`](Tuner::restore_all)
/// and on drop. One per process (per journal directory).
pub struct Tuner {
    sysfs: PathBuf,
    dir: PathBuf,
    file: PathBuf,
    allowed: Vec<String>,
    /// The queue settings it may change: [`ATTRS`] and what
    /// [`allowing`](Tuner::allowing) added.
    attrs: Vec<String>,
    journal: Journal,
    /// The locks of the devices this Tuner changed (held until it is
    /// dropped, after everything is put back).
    locks: Vec<crate::lock::DeviceLock>,
    /// Where the devices' locks are kept.
    lock_dir: PathBuf,
    /// What putting back another, ended, process's journal did on the way.
    notes: Vec<Undone>,
    #[cfg(test)]
    pub(crate) before_write: Option<BeforeWrite>,
}

impl Tuner {
    /// A Tuner of the real host (`/sys`, [`JOURNAL_DIR`](crate::JOURNAL_DIR)),
    /// for the devices `allowed` (whole-disk names as `/sys/block` lists
    /// them: the target's device and its stack's members). Needs root.
    pub fn new(allowed: Vec<String>) -> Result<Tuner, TuneError> {
        if crate::store::euid() != 0 {
            return Err(TuneError::NotRoot);
        }
        Tuner::with_roots("/sys", crate::JOURNAL_DIR, allowed)
    }

    /// A Tuner over another sysfs root (`SYSFS/block/DEV/queue/ATTR`) and
    /// journal directory (tests: a fake tree in a temporary directory).
    /// A name in `allowed` that is not a plain device name is dropped.
    pub fn with_roots(
        sysfs_root: impl Into<PathBuf>,
        journal_dir: impl Into<PathBuf>,
        allowed: Vec<String>,
    ) -> Result<Tuner, TuneError> {
        let (sysfs, dir): (PathBuf, PathBuf) = (sysfs_root.into(), journal_dir.into());
        let lock_dir = lock_dir_of(&dir);
        let owner = Owner::me();
        let file = journal::file(&dir, journal::SETTINGS, owner.pid);
        if !registry::register(&file, &sysfs) {
            return Err(TuneError::AlreadyOpen {
                path: file.display().to_string(),
            });
        }
        Ok(Tuner {
            sysfs,
            dir,
            file,
            allowed: allowed
                .into_iter()
                .filter(|d| sysfs::plain_name(d))
                .collect(),
            attrs: ATTRS.iter().map(|a| a.to_string()).collect(),
            journal: Journal::new(owner),
            locks: Vec::new(),
            lock_dir,
            notes: Vec::new(),
            #[cfg(test)]
            before_write: None,
        })
    }

    /// The devices this Tuner may change.
    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }

    /// This Tuner may change the queue settings `attrs` too (the study's
    /// levers table names them): each a plain file name of the queue
    /// directory ([`sysfs::plain_attr`]); any other is dropped.
    pub fn allowing(mut self, attrs: impl IntoIterator<Item = String>) -> Tuner {
        for a in attrs.into_iter().filter(|a| sysfs::plain_attr(a)) {
            if !self.attrs.contains(&a) {
                self.attrs.push(a);
            }
        }
        self
    }

    /// The journal this Tuner writes (it exists while a change is held).
    pub fn journal_path(&self) -> &Path {
        &self.file
    }

    /// The settings changed and not yet put back.
    pub fn changed(&self) -> &[Setting] {
        &self.journal.settings
    }

    /// What was put back of an ended ssdready's journal that held a
    /// setting this Tuner was asked to change (each a line to print).
    pub fn take_notes(&mut self) -> Vec<Undone> {
        std::mem::take(&mut self.notes)
    }

    /// The checks before a setting is read or written.
    fn check(&self, device: &str, attr: &str) -> Result<PathBuf, TuneError> {
        if !self.attrs.iter().any(|a| a == attr) {
            return Err(TuneError::UnknownAttr {
                attr: attr.into(),
                allowed: self.attrs.clone(),
            });
        }
        if !self.allowed.iter().any(|d| d == device) {
            return Err(TuneError::NotAllowed {
                device: device.into(),
                allowed: self.allowed.clone(),
            });
        }
        let path = sysfs::path(&self.sysfs, device, attr);
        if !path.parent().is_some_and(Path::is_dir) {
            return Err(TuneError::NoDevice {
                device: device.into(),
            });
        }
        if !path.is_file() {
            return Err(TuneError::NotOffered {
                device: device.into(),
                attr: attr.into(),
            });
        }
        Ok(path)
    }

    /// A setting's value now (the active scheduler for `scheduler`).
    pub fn get(&self, device: &str, attr: &str) -> Result<String, TuneError> {
        let path = self.check(device, attr)?;
        sysfs::read(&self.sysfs, device, attr).map_err(|err| TuneError::Read {
            path: path.display().to_string(),
            err,
        })
    }

    /// Set `/sys/block/DEVICE/queue/ATTR` to `value`, its original recorded
    /// in the journal (synced) before the write. A setting that already
    /// holds `value` and was not changed by this Tuner is left alone.
    pub fn set(&mut self, device: &str, attr: &str, value: &str) -> Result<(), TuneError> {
        let path = self.check(device, attr)?;
        if !sysfs::plain_value(value) {
            return Err(TuneError::BadValue {
                attr: attr.into(),
                value: value.into(),
            });
        }
        let want = ssdready_measured::limits::parse::queue_value(attr, value);
        let (at, new) = match self.position(device, attr) {
            Some(i) => (i, false),
            None => {
                self.lock(device)?;
                self.not_held_by_another(device, attr)?;
                let now = self.get(device, attr)?;
                if now == want {
                    return Ok(());
                }
                self.journal.settings.push(Setting {
                    device: device.into(),
                    attr: attr.into(),
                    original: now,
                    ours: want.clone(),
                    also: sysfs::also_of(&self.sysfs, device, attr),
                });
                (self.journal.settings.len() - 1, true)
            }
        };
        // Before the journal records the value to be written: a panic here
        // leaves every setting as the journal says, for its putting back.
        self.assert_locked(device);
        let before = std::mem::replace(&mut self.journal.settings[at].ours, want);
        if let Err(why) = self.save() {
            match new {
                true => drop(self.journal.settings.remove(at)),
                false => self.journal.settings[at].ours = before,
            }
            return Err(why);
        }
        self.write(at, &path, value)
    }

    /// [`set`](Tuner::set), then every other setting of [`ATTRS`] the write
    /// moved (a scheduler switch resets `nr_requests`) put back to what it
    /// read just before, journaled as any change: a trial measures its own
    /// change, not the kernel's reset with it. Returns the settings put
    /// back, and each one that moved and could not be while the change
    /// holds (the value it refuses), in words.
    pub fn set_keeping(
        &mut self,
        device: &str,
        attr: &str,
        value: &str,
    ) -> Result<(Vec<String>, Vec<String>), TuneError> {
        let others = |t: &Tuner| -> Vec<(String, String)> {
            let read = |a: &String| Some((a.clone(), t.get(device, a).ok()?));
            let others = t.attrs.iter().filter(|a| *a != attr);
            others.filter_map(read).collect()
        };
        let was = others(self);
        self.set(device, attr, value)?;
        let (mut kept, mut moved) = (Vec::new(), Vec::new());
        for (a, now) in others(self) {
            let Some((_, v)) = was.iter().find(|w| w.0 == a && w.1 != now) else {
                continue;
            };
            match self.set(device, &a, v) {
                Ok(()) => kept.push(a.clone()),
                Err(e) => moved.push(format!(
                    "{a} on {device} ({v} → {now} with {attr} {value}, which refuses {v}: {e})"
                )),
            }
        }
        Ok((kept, moved))
    }

    /// The write itself, then the value the kernel shows recorded. Just
    /// before it, the journal on disk must hold the setting's original and
    /// the value about to be written (else nothing is written:
    /// [`TuneError::NotJournaled`]); the device's lock was asserted before
    /// the journal recorded the value.
    fn write(&mut self, at: usize, path: &Path, value: &str) -> Result<(), TuneError> {
        let s = self.journal.settings[at].clone();
        #[cfg(test)]
        let hooked = match self.before_write.as_mut() {
            Some(h) => h(path),
            None => Ok(()),
        };
        #[cfg(not(test))]
        let hooked = Ok(());
        if let Err(e) = self.journaled(&s) {
            let now = sysfs::read(&self.sysfs, &s.device, &s.attr);
            self.forget_unchanged(at, now.unwrap_or_else(|_| s.original.clone()));
            let _ = self.save();
            return Err(e);
        }
        let wrote = hooked.and_then(|_| sysfs::write(&self.sysfs, &s.device, &s.attr, value));
        let now = sysfs::read(&self.sysfs, &s.device, &s.attr);
        if let Err(err) = wrote {
            let now = now.unwrap_or_else(|_| s.original.clone());
            self.forget_unchanged(at, now);
            let _ = self.save();
            return Err(TuneError::Write {
                path: path.display().to_string(),
                value: value.into(),
                err,
            });
        }
        if let Some(now) = now.ok().filter(|n| *n != s.ours) {
            // The kernel shows it otherwise (a size rounded, a default).
            self.journal.settings[at].ours = now;
            if let Err(e) = self.save() {
                let undone = sysfs::undo(&self.sysfs, &self.journal.settings[at]);
                if undone.is_original() {
                    self.journal.settings.remove(at);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// A change is written only while this process holds the device's
    /// lock: taken before the device's first change and kept until the
    /// Tuner is dropped, so another ssdready cannot read a trial's value
    /// as the original. A write without it is a bug of the Tuner's own
    /// bookkeeping: the panic comes before the write, and the settings
    /// already changed are put back by the unwinding (`Drop`) or the
    /// binary's panic hook ([`crate::put_back_own`]).
    fn assert_locked(&self, device: &str) {
        assert!(
            self.locks.iter().any(|l| l.device() == device)
                && crate::lock::holds_at(&self.lock_dir, device),
            "a change of {device}'s queue settings was about to be written without the device's lock"
        );
    }

    /// Whether the journal on disk holds `s` as it is to be written: its
    /// original, and the value ssdready leaves (what a kill at the write
    /// would have the next command put back, and recognise as ssdready's).
    fn journaled(&self, s: &Setting) -> Result<(), TuneError> {
        let on_disk = Journal::load(&self.file).ok().flatten();
        let holds = on_disk.is_some_and(|j| {
            j.settings.iter().any(|x| {
                (&x.device, &x.attr, &x.original, &x.ours)
                    == (&s.device, &s.attr, &s.original, &s.ours)
            })
        });
        match holds {
            true => Ok(()),
            false => Err(TuneError::NotJournaled {
                device: s.device.clone(),
                attr: s.attr.clone(),
                path: self.file.display().to_string(),
            }),
        }
    }

    /// After a failed step: the entry at `at` now holds `now`; dropped when
    /// that is the original (nothing is changed).
    fn forget_unchanged(&mut self, at: usize, now: String) {
        if now == self.journal.settings[at].original {
            self.journal.settings.remove(at);
        } else {
            self.journal.settings[at].ours = now;
        }
    }

    /// The device's lock, taken before its first change (another process
    /// changing the same device refuses this one).
    fn lock(&mut self, device: &str) -> Result<(), TuneError> {
        if self.locks.iter().any(|l| l.device() == device) {
            return Ok(());
        }
        let l = crate::lock::acquire_at(&self.lock_dir, device)?;
        self.locks.push(l);
        Ok(())
    }

    fn position(&self, device: &str, attr: &str) -> Option<usize> {
        self.journal
            .settings
            .iter()
            .position(|s| s.device == device && s.attr == attr)
    }

    fn save(&self) -> Result<(), TuneError> {
        self.journal
            .save(&self.file)
            .map_err(|e| TuneError::Journal {
                path: self.file.display().to_string(),
                why: e.to_string(),
            })
    }

    /// Refuse a setting another running ssdready holds; put back first the
    /// journal of an ended one that holds it.
    fn not_held_by_another(&mut self, device: &str, attr: &str) -> Result<(), TuneError> {
        for path in crate::store::list(&self.dir) {
            if path == self.file {
                continue;
            }
            let Ok(Some(j)) = Journal::load(&path) else {
                continue;
            };
            if !j
                .settings
                .iter()
                .any(|s| s.device == device && s.attr == attr)
            {
                continue;
            }
            match j.owner.liveness(Path::new("/proc")) {
                Liveness::Alive => {
                    return Err(TuneError::HeldByOther {
                        device: device.into(),
                        attr: attr.into(),
                        pid: j.owner.pid,
                    })
                }
                _ => self.notes.extend(
                    crate::recover::recover_journal(&path, &self.sysfs)
                        .into_iter()
                        .map(|r| r.what),
                ),
            }
        }
        Ok(())
    }

    /// Put one setting back (None when this Tuner did not change it). A
    /// setting another process changed since is left and reported; one
    /// that could not be written stays in the journal.
    pub fn restore(&mut self, device: &str, attr: &str) -> Option<Restored> {
        if registry::put_back(&self.file) {
            self.journal.settings.clear();
        }
        let at = self.position(device, attr)?;
        let r = sysfs::undo(&self.sysfs, &self.journal.settings[at]);
        if !matches!(r, Restored::Failed { .. }) {
            self.journal.settings.remove(at);
            let _ = self.save();
        }
        Some(r)
    }

    /// Put every setting back, the last changed first.
    pub fn restore_all(&mut self) -> Vec<Restored> {
        if registry::put_back(&self.file) {
            self.journal.settings.clear();
        }
        let out = sysfs::undo_all(&self.sysfs, &mut self.journal.settings);
        let _ = self.save();
        out
    }
}

/// The locks' directory beside a journal directory (`/run/ssdready/locks`
/// beside `/run/ssdready/settings`).
fn lock_dir_of(journal_dir: &Path) -> PathBuf {
    match journal_dir.parent() {
        Some(up) if !up.as_os_str().is_empty() => up.join("locks"),
        _ => PathBuf::from(crate::lock::LOCK_DIR),
    }
}

impl Drop for Tuner {
    /// Everything put back (on a panic's unwinding too); what could not be
    /// is said on stderr (a caller that restores first says it itself).
    fn drop(&mut self) {
        for r in self.restore_all() {
            if !r.is_original() {
                eprintln!("ssdready: {r}");
            }
        }
        registry::unregister(&self.file);
    }
}

#[cfg(test)]
#[path = "tuner_tests.rs"]
mod tests;
