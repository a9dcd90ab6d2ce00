//! The options of how a job reaches its files beyond its reads and writes
//! ([`crate::spec_access`]): `create_only`, `file_append`, `lockfile`,
//! `serialize_overlap`, `sync_file_range`, `write_hint`, the per-I/O flags
//! `nowait`, `atomic`, `force_async`, `userspace_reap`, `ioscheduler`,
//! `allow_mounted_write`, and fio's `profile` (refused) — a table beside
//! [`crate::option_table::OPTIONS`], searched by the same machinery.

use crate::option_def::{Arity, OptionDef};
use crate::spec_access::{LockMode, SyncRange, WriteHint};
use crate::units::parse_bool;

/// The table. Keep it sorted by name.
pub static ACCESS_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "allow_mounted_write",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fio's leave to write a mounted device: a device holding a mounted file system, or a mounted loop device's backing file, is written only with it and --allow-destructive (alone it lifts no check)",
        set: |s, v| {
            s.access.allow_mounted_write = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "atomic",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "writes with RWF_ATOMIC (torn-write protection; implies direct; refused where statx shows no support)",
        set: |s, v| {
            s.access.atomic = parse_bool(v)?;
            if s.access.atomic {
                s.direct = true;
            }
            Ok(())
        },
    },
    OptionDef {
        name: "create_only",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "lay the job's files out, then end it without I/O",
        set: |s, v| {
            s.access.create_only = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "file_append",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "I/O starts at a regular file's end (offset = its size)",
        set: |s, v| {
            s.access.file_append = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "force_async",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number (0: never)",
        help: "io_uring: every Nth I/O is issued with IOSQE_ASYNC",
        set: |s, v| {
            s.access.force_async = v
                .trim()
                .parse()
                .map_err(|_| format!("'{v}' is not a whole number"))?;
            Ok(())
        },
    },
    OptionDef {
        name: "ioscheduler",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a scheduler name the device lists, e.g. none, mq-deadline, kyber, bfq",
        help: "switch the target block device's I/O scheduler for the run (put back after)",
        set: |s, v| {
            let v = v.trim();
            if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                return Err(format!("'{v}' is not a scheduler name"));
            }
            s.access.ioscheduler = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "lockfile",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none, exclusive or readwrite",
        help: "lock a file while a clone of the job issues an I/O to it",
        set: |s, v| {
            s.access.lockfile = match v.trim() {
                "none" => LockMode::None,
                "exclusive" => LockMode::Exclusive,
                "readwrite" => LockMode::ReadWrite,
                _ => return Err(format!("'{v}' is not none, exclusive or readwrite")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "nowait",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "RWF_NOWAIT on every read and write (io_uring, libaio, pvsync2): EAGAIN instead of blocking",
        set: |s, v| {
            s.access.nowait = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "profile",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none (fio's built-in profiles tiobench and act are not in ssdready)",
        help: "fio's built-in workload generators; refused, write their jobs out instead",
        set: |_, v| match v.trim() {
            "tiobench" | "act" => Err(format!(
                "fio's built-in '{}' profile generates its own jobs from options of its own; \
                 ssdready has no built-in profiles (write the jobs it would run as [sections])",
                v.trim()
            )),
            _ => Err(format!("'{v}' is not one of fio's profiles (tiobench, act)")),
        },
    },
    OptionDef {
        name: "serialize_overlap",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "an I/O that overlaps one in flight of the same job waits until that one completes",
        set: |s, v| {
            s.access.serialize_overlap = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "sync_file_range",
        aliases: &[],
        arity: Arity::Value,
        allowed: "wait_before, write, wait_after (joined by ','), with :N writes (default 1)",
        help: "sync_file_range(2) of the range written since the last sync, after every N writes",
        set: |s, v| {
            s.access.sync_file_range = Some(SyncRange::parse(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "userspace_reap",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "libaio: read completions from the AIO ring in memory (with iodepth_batch_complete_min=0)",
        set: |s, v| {
            s.access.userspace_reap = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "write_hint",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none, short, medium, long or extreme",
        help: "the write-lifetime hint given to each file with fcntl(2)",
        set: |s, v| {
            s.access.write_hint = Some(WriteHint::parse(v)?);
            Ok(())
        },
    },
];
