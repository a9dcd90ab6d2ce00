//! How a job reaches its files beyond what it reads and writes, as fio
//! 3.33 does it: stopping after the files are laid out (`create_only`),
//! appending (`file_append`), locks between a job's clones (`lockfile`),
//! keeping overlapping I/Os apart (`serialize_overlap`), ranged write-back
//! (`sync_file_range`), per-file write-lifetime hints (`write_hint`), the
//! per-I/O flags of io_uring, libaio and pvsync2 (`nowait`, `atomic`,
//! `force_async`), the device's I/O scheduler (`ioscheduler`) and writes to
//! mounted devices (`allow_mounted_write`). [`AccessSpec::refusals`] names
//! what a job asks for that its engine or target cannot do, so that nothing
//! is silently ignored.

use crate::spec_types::{EngineKind, NotOneOf};
use serde::{Deserialize, Serialize};

/// `lockfile=`: what a job's clones hold on a file while they issue an I/O
/// to it (fio holds it from preparing the I/O until the engine's queue
/// call returns: for synchronous engines, the I/O itself).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockMode {
    /// No lock (fio's default).
    #[default]
    None,
    /// One clone at a time (`exclusive`).
    Exclusive,
    /// Reads share the file, a write has it alone (`readwrite`).
    ReadWrite,
}

/// `write_hint=`: the write-lifetime hint given with `fcntl(2)`
/// (`F_SET_RW_HINT` on the inode; `F_SET_FILE_RW_HINT` with `direct=1`, as fio).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteHint {
    /// `RWH_WRITE_LIFE_NONE`.
    None,
    /// `RWH_WRITE_LIFE_SHORT`.
    Short,
    /// `RWH_WRITE_LIFE_MEDIUM`.
    Medium,
    /// `RWH_WRITE_LIFE_LONG`.
    Long,
    /// `RWH_WRITE_LIFE_EXTREME`.
    Extreme,
}

impl WriteHint {
    /// The kernel's `RWH_WRITE_LIFE_*` value (include/uapi/linux/fcntl.h).
    pub fn value(self) -> u64 {
        match self {
            WriteHint::None => 1,
            WriteHint::Short => 2,
            WriteHint::Medium => 3,
            WriteHint::Long => 4,
            WriteHint::Extreme => 5,
        }
    }

    /// Parse fio's names.
    pub fn parse(v: &str) -> Result<Self, NotOneOf> {
        Ok(match v.trim() {
            "none" => WriteHint::None,
            "short" => WriteHint::Short,
            "medium" => WriteHint::Medium,
            "long" => WriteHint::Long,
            "extreme" => WriteHint::Extreme,
            _ => return Err(NotOneOf::new(v, "none, short, medium, long or extreme")),
        })
    }
}

/// Why `sync_file_range` could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyncRangeError {
    #[error(transparent)]
    Flag(#[from] NotOneOf),
    #[error("':{0}' is not a number of writes (1 or more)")]
    Every(String),
}

impl From<SyncRangeError> for String {
    fn from(e: SyncRangeError) -> String {
        e.to_string()
    }
}

/// `sync_file_range=flags:N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRange {
    /// `SYNC_FILE_RANGE_*` bits: wait_before 1, write 2, wait_after 4.
    pub flags: u32,
    /// After every this many writes (fio's `sync_file_range_nr`, default 1).
    pub every: u32,
}

impl SyncRange {
    /// Parse fio's `wait_before,write,wait_after:N` (any of the three, at
    /// least one; `:N` optional, as fio's `get_opt_postfix` + `atoi`).
    pub fn parse(v: &str) -> Result<Self, SyncRangeError> {
        let (names, nr) = match v.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (v, None),
        };
        let mut flags = 0;
        for n in names.split(',').map(str::trim) {
            flags |= match n {
                "wait_before" => 1,
                "write" => 2,
                "wait_after" => 4,
                _ => return Err(NotOneOf::new(n, "wait_before, write or wait_after").into()),
            };
        }
        let every = match nr.map(str::trim) {
            None => 1,
            Some(n) => n
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| SyncRangeError::Every(n.to_string()))?,
        };
        Ok(SyncRange { flags, every })
    }
}

/// The options of this module (fio's names in each field's docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AccessSpec {
    /// `create_only`: lay the files out, then end the job without I/O.
    pub create_only: bool,
    /// `file_append`: a regular file's I/O starts at its end (fio's
    /// `get_start_offset`: offset = the file's size).
    pub file_append: bool,
    /// `lockfile`.
    pub lockfile: LockMode,
    /// `serialize_overlap`: an I/O that overlaps one in flight waits for it.
    pub serialize_overlap: bool,
    /// `sync_file_range`.
    pub sync_file_range: Option<SyncRange>,
    /// `allow_mounted_write`: fio's leave to write a mounted device.
    pub allow_mounted_write: bool,
    /// `nowait`: `RWF_NOWAIT` on every read and write.
    pub nowait: bool,
    /// `write_hint`.
    pub write_hint: Option<WriteHint>,
    /// `force_async=N`: io_uring's `IOSQE_ASYNC` on every Nth I/O (0: never).
    pub force_async: u32,
    /// `userspace_reap`: libaio completions read from the ring in memory.
    pub userspace_reap: bool,
    /// `atomic`: `RWF_ATOMIC` on every write (implies `direct`).
    pub atomic: bool,
    /// `ioscheduler`: the scheduler the target's device is switched to.
    pub ioscheduler: Option<String>,
}

impl AccessSpec {
    /// What the job cannot run with on `engine` (one line each, without the
    /// job's name): per-I/O flags the engine has no way to pass.
    pub fn refusals(&self, engine: EngineKind, engine_named: Option<&str>) -> Vec<String> {
        let mut why = Vec::new();
        let named = engine_named.unwrap_or(engine.name());
        let pvsync2 = named == "pvsync2";
        let flags_engine = matches!(engine, EngineKind::IoUring | EngineKind::Libaio) || pvsync2;
        if self.nowait && !flags_engine {
            why.push(format!(
                "nowait: RWF_NOWAIT is passed per I/O only by ioengine=io_uring, libaio and pvsync2, not {named}"
            ));
        }
        if self.atomic && !flags_engine {
            why.push(format!(
                "atomic: RWF_ATOMIC is passed per I/O only by ioengine=io_uring, libaio and pvsync2, not {named}"
            ));
        }
        if self.force_async > 0 && engine != EngineKind::IoUring {
            why.push(format!(
                "force_async: IOSQE_ASYNC is an io_uring flag; ioengine={named} has none"
            ));
        }
        if self.userspace_reap && engine != EngineKind::Libaio {
            why.push(format!(
                "userspace_reap: reaping from the AIO ring is libaio's; ioengine={named} has no such ring"
            ));
        }
        if engine != EngineKind::IoUring && flags_engine {
            for (_, o) in [(self.nowait, "nowait"), (self.atomic, "atomic")]
                .iter()
                .filter(|(on, _)| *on)
            {
                why.push(format!(
                    "{o}: ssdready passes per-I/O RWF_ flags with ioengine=io_uring only; \
                     its {named} engine has none yet (use ioengine=io_uring)"
                ));
            }
        }
        if self.userspace_reap && engine == EngineKind::Libaio {
            why.push(
                "userspace_reap: ssdready's libaio engine reaps with io_getevents(2); reading the \
                 AIO ring from user space is not supported yet (leave it out: the same I/Os are reaped)"
                    .into(),
            );
        }
        if let Some(s) = &self.ioscheduler {
            why.push(format!(
                "ioscheduler={s}: switching the device's I/O scheduler is not supported yet \
                 (set /sys/block/DEV/queue/scheduler before the run)"
            ));
        }
        if engine == EngineKind::Emu {
            let file_only = [
                (self.write_hint.is_some(), "write_hint"),
                (self.sync_file_range.is_some(), "sync_file_range"),
                (self.ioscheduler.is_some(), "ioscheduler"),
                (self.file_append, "file_append"),
            ];
            for (_, o) in file_only.iter().filter(|(on, _)| *on) {
                why.push(format!(
                    "{o}: the built-in emulator has no files or kernel device (name a filename=)"
                ));
            }
        }
        why
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_file_range_parses_fio_forms() {
        assert_eq!(
            SyncRange::parse("wait_before,write:8").unwrap(),
            SyncRange { flags: 3, every: 8 }
        );
        assert_eq!(
            SyncRange::parse("write").unwrap(),
            SyncRange { flags: 2, every: 1 }
        );
        assert_eq!(
            SyncRange::parse("wait_before,write,wait_after:4")
                .unwrap()
                .flags,
            7
        );
        assert!(SyncRange::parse("flush:4").is_err());
        assert!(SyncRange::parse("write:0").is_err());
    }

    #[test]
    fn per_io_flags_are_refused_on_engines_without_them() {
        let a = AccessSpec {
            nowait: true,
            force_async: 4,
            ..Default::default()
        };
        assert_eq!(a.refusals(EngineKind::Psync, None).len(), 2);
        let r = a.refusals(EngineKind::Psync, Some("pvsync2"));
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(r[0].starts_with("force_async"), "{r:?}");
        assert!(r[1].contains("ioengine=io_uring only"), "{r:?}");
        assert!(a.refusals(EngineKind::IoUring, None).is_empty());
    }
}
