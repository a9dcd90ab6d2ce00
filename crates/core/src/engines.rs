//! What the job's side of ssdready knows of each engine: its name, fio's
//! other names for it, the engine family the loop and the checks branch on
//! ([`EngineKind`]), its capabilities, and what a result says about how its
//! I/Os complete: one [`EngineFacts`] per engine name a job file may give.
//!
//! `core` parses and checks jobs and has no system calls, so it cannot see
//! the engines themselves (crate `ssdready-io`, which depends on `core`).
//! It knows the families, which its checks and the worker loop branch on,
//! and their own engines ([`PSYNC`], [`IO_URING`], [`IO_URING_CMD`],
//! [`LIBAIO`], [`POSIXAIO`], [`SG`], [`NULL`]). Every other engine is an
//! engine of one of those families and declares its facts in its own file
//! in `ssdready-io`, into [`ENGINES_IN_FILES`], a slice the linker
//! gathers (`linkme`): adding an engine touches no file here. [`all`]
//! lists both in the order `ioengine`'s allowed values give them; a job
//! resolves its engine with [`crate::spec::JobSpec::engine`].
//!
//! A program that parses jobs naming those engines links `ssdready-io`
//! (the binary does; so do the crates that run jobs); without it the job
//! names an engine this build does not have, and its parse says so.

use crate::spec::JobSpec;
use crate::spec_types::EngineKind;
use std::sync::OnceLock;

/// What a job's checks, its plan and its result need to know of an engine.
/// Two facts are the same engine when their names are the same (a name is
/// given once: [`crate::engine_check::check`]).
#[derive(Debug)]
pub struct EngineFacts {
    /// fio's name of the engine (`ioengine=NAME`).
    pub name: &'static str,
    /// fio's other names for exactly this engine (psync's `sync`, `pvsync`,
    /// `pvsync2`, `vsync`: the same bytes at the same offsets).
    pub aliases: &'static [&'static str],
    /// The family: which interface the worker loop and the checks treat it
    /// as (every synchronous data engine is [`EngineKind::Psync`]).
    pub kind: EngineKind,
    /// What it can do; see [`Caps`].
    pub caps: Caps,
    /// How each of its I/Os completes, as a result's strategy says it when
    /// there is nothing to wait for (synchronous engines).
    pub completes: &'static str,
    /// The options only this engine takes (listed by `ssdready options`
    /// with the others).
    pub options: &'static [&'static str],
    /// Why a run refuses a job of this engine, as fio's engine refuses it
    /// in its `init` or fails it per I/O (empty: it runs). Part of the
    /// job's refusals ([`crate::spec::JobSpec::refusals`]).
    pub refusals: fn(&JobSpec) -> Vec<String>,
}

impl PartialEq for EngineFacts {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for EngineFacts {}

/// [`EngineFacts::refusals`] of an engine that refuses nothing of its own.
pub fn refuses_nothing(_: &JobSpec) -> Vec<String> {
    Vec::new()
}

/// An engine's capabilities (fio's `FIO_*` engine flags, as far as
/// ssdready uses them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caps {
    /// Each I/O completes inside the call that issues it, so the job runs
    /// at depth 1 whatever `iodepth` says (fio's `FIO_SYNCIO`).
    pub synchronous: bool,
    /// Its I/Os are counted but not timed: the engine's file operations
    /// are (fio's `FIO_FAKEIO | FIO_NOSTATS`).
    pub fake_io: bool,
    /// Its "files" are directories (mkdir, stat, rmdir): nothing is laid
    /// out.
    pub dirs: bool,
    /// It reads and writes a memory mapping of its targets, so `direct`
    /// picks the kind of stores rather than O_DIRECT.
    pub maps_targets: bool,
    /// It cannot make a file longer by writing past its end (fio's
    /// `FIO_NOEXTEND`): a file it writes is laid out whole first.
    pub cannot_extend: bool,
    /// A result names it by its own name rather than its family's
    /// (`sync` is reported as `psync`; `mmap` as `mmap`).
    pub own_name: bool,
}

impl Caps {
    /// A synchronous engine's: each I/O completes inside its call.
    pub const SYNC: Caps = Caps {
        synchronous: true,
        fake_io: false,
        dirs: false,
        maps_targets: false,
        cannot_extend: false,
        own_name: false,
    };
    /// A file operation's (open, stat, unlink): timed once per file,
    /// counted as an I/O.
    pub const FILE_OP: Caps = Caps {
        fake_io: true,
        ..Caps::SYNC
    };
    /// A directory operation's (mkdir, stat, rmdir).
    pub const DIR_OP: Caps = Caps {
        dirs: true,
        ..Caps::FILE_OP
    };
    /// An engine that copies to and from a mapping of its targets.
    pub const MAPS: Caps = Caps {
        maps_targets: true,
        ..Caps::SYNC
    };
}

/// The completion note of the engines that complete inside a system call.
pub const IN_CALL: &str = "each I/O completes inside its pread/pwrite call";

impl EngineFacts {
    /// A synchronous engine of the psync family that results name by its
    /// own name, with no aliases and no options of its own.
    pub const fn own(name: &'static str, caps: Caps, completes: &'static str) -> EngineFacts {
        EngineFacts {
            name,
            aliases: &[],
            kind: EngineKind::Psync,
            caps: Caps {
                own_name: true,
                ..caps
            },
            completes,
            options: &[],
            refusals: refuses_nothing,
        }
    }

    /// An asynchronous engine: completions are waited for.
    const fn asynchronous(name: &'static str, kind: EngineKind) -> EngineFacts {
        EngineFacts {
            name,
            aliases: &[],
            kind,
            caps: Caps {
                synchronous: false,
                ..Caps::SYNC
            },
            completes: "",
            options: &[],
            refusals: refuses_nothing,
        }
    }
}

/// The engines of a family declared in their own files (`ssdready-io`'s
/// `engines/`), gathered by the linker. An engine file adds its facts with
/// `#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]`
/// on a `pub static`; its `kind` must be a family whose own engine is
/// listed in [`FAMILIES`].
#[linkme::distributed_slice]
pub static ENGINES_IN_FILES: [EngineFacts];

/// `pread`/`pwrite` (and fio's names for the same calls).
pub static PSYNC: EngineFacts = EngineFacts {
    name: "psync",
    aliases: &["sync", "pvsync", "pvsync2", "vsync"],
    kind: EngineKind::Psync,
    caps: Caps::SYNC,
    completes: IN_CALL,
    options: &[],
    refusals: refuses_nothing,
};
/// Linux io_uring.
pub static IO_URING: EngineFacts = EngineFacts::asynchronous("io_uring", EngineKind::IoUring);
/// NVMe commands through io_uring passthrough.
pub static IO_URING_CMD: EngineFacts =
    EngineFacts::asynchronous("io_uring_cmd", EngineKind::UringCmd);
/// Linux native AIO.
pub static LIBAIO: EngineFacts = EngineFacts::asynchronous("libaio", EngineKind::Libaio);
/// POSIX AIO (glibc's helper threads).
pub static POSIXAIO: EngineFacts = EngineFacts::asynchronous("posixaio", EngineKind::PosixAio);
/// SCSI commands through SG_IO.
pub static SG: EngineFacts = EngineFacts {
    name: "sg",
    aliases: &[],
    kind: EngineKind::Sg,
    caps: Caps::SYNC,
    completes: "each SCSI command completes inside its SG_IO ioctl",
    options: &[],
    refusals: refuses_nothing,
};
/// No I/O at all: the tool's own cost per I/O.
pub static NULL: EngineFacts = EngineFacts {
    name: "null",
    aliases: &[],
    kind: EngineKind::Null,
    caps: Caps {
        synchronous: false,
        ..Caps::SYNC
    },
    completes: "the null engine completes every I/O at once",
    options: &[],
    refusals: refuses_nothing,
};
/// The SSD emulator's queue pairs: set by a target `emu:…`, never named.
pub static EMU: EngineFacts = EngineFacts {
    name: "emu",
    ..NULL
};

/// The families' own engines, in the order `ioengine`'s allowed values
/// list the families. Each family's engines from [`ENGINES_IN_FILES`]
/// follow its own, by name.
pub static FAMILIES: &[&EngineFacts] = &[
    &PSYNC,
    &IO_URING,
    &IO_URING_CMD,
    &LIBAIO,
    &POSIXAIO,
    &SG,
    &NULL,
];

/// Every engine a job may name: each family's own engine, then the
/// family's engines declared in their files, by name. Built once.
pub fn all() -> &'static [&'static EngineFacts] {
    static ALL: OnceLock<Vec<&'static EngineFacts>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = Vec::with_capacity(FAMILIES.len() + ENGINES_IN_FILES.len());
        for own in FAMILIES {
            all.push(*own);
            let mut more: Vec<&EngineFacts> = ENGINES_IN_FILES
                .iter()
                .filter(|e| e.kind == own.kind)
                .collect();
            more.sort_unstable_by_key(|e| e.name);
            all.extend(more);
        }
        all
    })
}

/// The engines ssdready runs, as `ioengine`'s allowed values and its
/// refusals say them: "psync (also sync, …), …, sg or null".
pub fn runnable() -> &'static str {
    static SAID: OnceLock<String> = OnceLock::new();
    SAID.get_or_init(|| {
        let names: Vec<String> = all()
            .iter()
            .map(|e| match e.aliases {
                [] => e.name.to_string(),
                a => format!("{} (also {})", e.name, a.join(", ")),
            })
            .collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, head)) => format!("{} or {last}", head.join(", ")),
            None => String::new(),
        }
    })
}

/// The engine a job may name as `name` (its name or one of its aliases).
pub fn find(name: &str) -> Option<&'static EngineFacts> {
    all()
        .iter()
        .copied()
        .find(|e| e.name == name || e.aliases.contains(&name))
}

/// The family's own engine: what a job of `kind` runs when it names no
/// engine of the family's (or names one that is refused).
pub fn of_kind(kind: EngineKind) -> &'static EngineFacts {
    match kind {
        EngineKind::Emu => &EMU,
        k => FAMILIES
            .iter()
            .copied()
            .find(|e| e.kind == k)
            .unwrap_or(&PSYNC),
    }
}

impl JobSpec {
    /// The job's engine, resolved against [`all`]: the one it named, or
    /// its family's own when it named none (or one that is refused: then
    /// the family's stands in, so that the job's other options are checked
    /// as fio checks them). On an emulated device `ioengine` is
    /// [`EngineKind::Emu`] (the device brings its queues) while an engine
    /// the job named keeps its facts.
    pub fn engine(&self) -> &'static EngineFacts {
        self.engine_named
            .as_deref()
            .and_then(find)
            .unwrap_or_else(|| of_kind(self.ioengine))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_engine_files_a_job_may_name_the_families_own_engines() {
        // This crate's tests link no engine files (`ssdready-io` has the
        // test of the whole list).
        assert!(ENGINES_IN_FILES.is_empty());
        assert_eq!(
            runnable(),
            "psync (also sync, pvsync, pvsync2, vsync), io_uring, io_uring_cmd, libaio, posixaio, sg or null"
        );
        assert_eq!(find("mmap"), None);
    }

    #[test]
    fn every_family_has_its_engine_and_every_engine_checks() {
        for e in all() {
            assert_eq!(crate::engine_check::check(e), Ok(()));
        }
        for k in [
            EngineKind::Psync,
            EngineKind::IoUring,
            EngineKind::Libaio,
            EngineKind::PosixAio,
            EngineKind::Null,
            EngineKind::Sg,
            EngineKind::UringCmd,
        ] {
            assert_eq!(of_kind(k).kind, k);
            assert_eq!(of_kind(k).name, k.name());
        }
        assert_eq!(of_kind(EngineKind::Emu).name, "emu");
        assert!(
            find("emu").is_none(),
            "the emulator's engine is never named"
        );
        assert_eq!(find("sync"), Some(&PSYNC));
    }
}
