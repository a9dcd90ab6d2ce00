//! What the job's side of ssdready knows of each engine: its name, fio's
//! other names for it, the engine family the loop and the checks branch on
//! ([`EngineKind`]), its capabilities, and what a result says about how its
//! I/Os complete. One [`EngineFacts`] per engine name a job file may give,
//! listed once in [`ENGINES`].
//!
//! `core` parses and checks jobs and has no system calls, so it cannot see
//! the engines themselves (crate `ssdready-io`, which depends on `core`).
//! Each engine file there declares an `EngineDef` that points at its facts
//! here and adds its constructor; `ssdready_io::engines::ALL` lists those
//! definitions, and a test there checks that every entry of [`ENGINES`] is
//! served by exactly one of them. A job resolves its engine with
//! [`crate::spec::JobSpec::engine`].

use crate::spec_types::EngineKind;

/// What a job's checks, its plan and its result need to know of an engine.
#[derive(Debug, PartialEq, Eq)]
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

const SYNC: Caps = Caps {
    synchronous: true,
    fake_io: false,
    dirs: false,
    maps_targets: false,
    cannot_extend: false,
    own_name: false,
};

/// The completion note of the engines that complete inside a system call.
const IN_CALL: &str = "each I/O completes inside its pread/pwrite call";

/// A synchronous engine of the psync family with its own name in results.
const fn own(name: &'static str, caps: Caps, completes: &'static str) -> EngineFacts {
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
    }
}

/// `pread`/`pwrite` (and fio's names for the same calls).
pub static PSYNC: EngineFacts = EngineFacts {
    name: "psync",
    aliases: &["sync", "pvsync", "pvsync2", "vsync"],
    kind: EngineKind::Psync,
    caps: SYNC,
    completes: IN_CALL,
    options: &[],
};
/// fallocate(2) instead of writes (a read allocates keeping the size).
pub static FALLOC: EngineFacts = EngineFacts {
    name: "falloc",
    aliases: &[],
    kind: EngineKind::Psync,
    caps: SYNC,
    completes: IN_CALL,
    options: &[],
};
/// ftruncate(2) to each write's offset.
pub static FTRUNCATE: EngineFacts = EngineFacts {
    name: "ftruncate",
    ..FALLOC
};
const FILE_OP: Caps = Caps {
    fake_io: true,
    ..SYNC
};
const DIR_OP: Caps = Caps {
    dirs: true,
    ..FILE_OP
};
/// open(O_CREAT) timed once per file.
pub static FILECREATE: EngineFacts = own("filecreate", FILE_OP, IN_CALL);
/// stat(2) timed once per file.
pub static FILESTAT: EngineFacts = own("filestat", FILE_OP, IN_CALL);
/// unlink(2) timed once per file.
pub static FILEDELETE: EngineFacts = own("filedelete", FILE_OP, IN_CALL);
/// mkdir(2) timed once per directory.
pub static DIRCREATE: EngineFacts = own("dircreate", DIR_OP, IN_CALL);
/// stat(2) of a directory.
pub static DIRSTAT: EngineFacts = own("dirstat", DIR_OP, IN_CALL);
/// rmdir(2).
pub static DIRDELETE: EngineFacts = own("dirdelete", DIR_OP, IN_CALL);
/// memcpy through a mapping of the file.
pub static MMAP: EngineFacts = own(
    "mmap",
    Caps {
        cannot_extend: true,
        ..SYNC
    },
    "each I/O is a memcpy through the file's mapping",
);
/// splice/vmsplice through a pipe.
pub static SPLICE: EngineFacts = own(
    "splice",
    SYNC,
    "each I/O completes inside its splice/vmsplice calls",
);
const MAPS: Caps = Caps {
    maps_targets: true,
    ..SYNC
};
/// Copies to and from a mapping of a file on persistent memory.
pub static LIBPMEM: EngineFacts = own("libpmem", MAPS, IN_CALL);
/// Copies to and from a mapping of a device-DAX character device.
pub static DEV_DAX: EngineFacts = own("dev-dax", MAPS, IN_CALL);
/// Extent moves (`EXT4_IOC_MOVE_EXT`) with a donor file.
pub static E4DEFRAG: EngineFacts = EngineFacts {
    options: &["donorname", "inplace"],
    ..own("e4defrag", SYNC, IN_CALL)
};
/// An asynchronous engine: completions are waited for.
const fn asynchronous(name: &'static str, kind: EngineKind) -> EngineFacts {
    EngineFacts {
        name,
        aliases: &[],
        kind,
        caps: Caps {
            synchronous: false,
            ..SYNC
        },
        completes: "",
        options: &[],
    }
}
/// Linux io_uring.
pub static IO_URING: EngineFacts = asynchronous("io_uring", EngineKind::IoUring);
/// NVMe commands through io_uring passthrough.
pub static IO_URING_CMD: EngineFacts = asynchronous("io_uring_cmd", EngineKind::UringCmd);
/// Linux native AIO.
pub static LIBAIO: EngineFacts = asynchronous("libaio", EngineKind::Libaio);
/// POSIX AIO (glibc's helper threads).
pub static POSIXAIO: EngineFacts = asynchronous("posixaio", EngineKind::PosixAio);
/// SCSI commands through SG_IO.
pub static SG: EngineFacts = EngineFacts {
    name: "sg",
    aliases: &[],
    kind: EngineKind::Sg,
    caps: SYNC,
    completes: "each SCSI command completes inside its SG_IO ioctl",
    options: &[],
};
/// No I/O at all: the tool's own cost per I/O.
pub static NULL: EngineFacts = EngineFacts {
    name: "null",
    aliases: &[],
    kind: EngineKind::Null,
    caps: Caps {
        synchronous: false,
        ..SYNC
    },
    completes: "the null engine completes every I/O at once",
    options: &[],
};
/// The SSD emulator's queue pairs: set by a target `emu:…`, never named.
pub static EMU: EngineFacts = EngineFacts {
    name: "emu",
    ..NULL
};

/// Every engine a job may name, in the order `ioengine`'s allowed values
/// list them ([`RUNNABLE_ENGINES`]).
pub static ENGINES: &[&EngineFacts] = &[
    &PSYNC,
    &FALLOC,
    &FTRUNCATE,
    &MMAP,
    &SPLICE,
    &FILECREATE,
    &FILESTAT,
    &FILEDELETE,
    &DIRCREATE,
    &DIRSTAT,
    &DIRDELETE,
    &LIBPMEM,
    &DEV_DAX,
    &E4DEFRAG,
    &IO_URING,
    &IO_URING_CMD,
    &LIBAIO,
    &POSIXAIO,
    &SG,
    &NULL,
];

/// The engines ssdready runs, as `ioengine`'s allowed values say them (a
/// constant, as option tables need; a test checks it against [`ENGINES`]).
pub const RUNNABLE_ENGINES: &str = "psync (also sync, pvsync, pvsync2, vsync), falloc, ftruncate, mmap, splice, \
     filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, libpmem, dev-dax, e4defrag, io_uring, io_uring_cmd, libaio, posixaio, sg or null";

/// The engine a job may name as `name` (its name or one of its aliases).
pub fn find(name: &str) -> Option<&'static EngineFacts> {
    ENGINES
        .iter()
        .copied()
        .find(|e| e.name == name || e.aliases.contains(&name))
}

/// The family's own engine: what a job of `kind` runs when it names no
/// engine of the family's (or names one that is refused).
pub fn of_kind(kind: EngineKind) -> &'static EngineFacts {
    match kind {
        EngineKind::Emu => &EMU,
        k => find(k.name()).unwrap_or(&PSYNC),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_values_list_every_engine_in_order() {
        let mut said = String::new();
        for e in ENGINES {
            said.push_str(e.name);
            if !e.aliases.is_empty() {
                said.push_str(&format!(" (also {})", e.aliases.join(", ")));
            }
            said.push_str(", ");
        }
        let said = said.trim_end_matches(", ");
        let (head, last) = said.rsplit_once(", ").unwrap_or(("", said));
        assert_eq!(RUNNABLE_ENGINES, format!("{head} or {last}"));
    }

    #[test]
    fn names_are_unique_and_every_family_has_its_engine() {
        let mut names: Vec<&str> = ENGINES
            .iter()
            .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a name given twice");
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
    }

    #[test]
    fn synchronous_engines_say_how_they_complete() {
        for e in ENGINES.iter().filter(|e| e.caps.synchronous) {
            assert!(!e.completes.is_empty(), "{}", e.name);
        }
        assert_eq!(find("sync"), Some(&PSYNC));
        assert!(find("dirstat").is_some_and(|e| e.caps.dirs && e.caps.fake_io));
    }

    #[test]
    fn an_engine_ssdready_runs_is_not_also_refused() {
        for e in ENGINES {
            assert!(
                !crate::option_values::FIO_ENGINES.contains(&e.name),
                "{}",
                e.name
            );
        }
    }

    #[test]
    fn an_engines_own_options_are_options() {
        for e in ENGINES {
            for o in e.options {
                assert!(
                    crate::options::all().iter().any(|d| d.name == *o),
                    "{}: {o}",
                    e.name
                );
            }
        }
    }
}
