//! The options of data verification, syncs, file preparation and think
//! time (fio's semantics; see `ssdready_workload::verify` and [`crate::spec_io`]):
//! a second table beside [`crate::option_table::OPTIONS`], searched by the
//! same machinery ([`crate::options::all`]).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec_io::{FileSpec, ThinkBlocksType};
use crate::spec_pattern::Pattern;
use crate::spec_verify::Method;
use crate::units::{parse_bool, parse_fio_size as parse_size, parse_time_ns};

fn flag(v: &str) -> Result<bool, crate::units::UnitError> {
    parse_bool(v)
}

/// A count of writes (fio's `fsync=N`): a whole number, 0 for never.
fn every(v: &str) -> Result<u32, ValueError> {
    ranged_u32(v, 0, u32::MAX)
}

/// The table. Keep it sorted by name.
pub static IO_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "buffer_compress_chunk",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size in bytes (0: the whole write)",
        help: "bytes per chunk of buffer_compress_percentage's random and zero parts",
        set: |s, v| {
            s.buffers.compress_chunk = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "buffer_compress_percentage",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a percentage from 0 to 100",
        help: "zero-fill this share of each write chunk (refilled before every write)",
        set: |s, v| {
            s.buffers.compress_percentage = percent(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "buffer_pattern",
        aliases: &[],
        arity: Arity::Value,
        allowed: "fio's pattern: 0x hex, decimal numbers, \"text\", 'file' (no %o, as fio)",
        help: "fill write buffers with this pattern repeated (turns scramble_buffers off)",
        set: |s, v| {
            let p = Pattern::parse(v)?;
            if !p.offsets_at.is_empty() {
                return Err("%o is not allowed in buffer_pattern (fio allows formats only in verify_pattern)".into());
            }
            s.buffers.pattern = Some(p.bytes);
            Ok(())
        },
    },
    OptionDef {
        name: "continue_on_error",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none, read, write, io, verify, all, 0 or 1",
        help: "count these errors (fio's total_err) and go on instead of stopping the job",
        set: |s, v| {
            s.continue_on_error = crate::spec_types::ContinueOn::parse(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "create_on_open",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "do not lay files out before the job; its open creates them (empty)",
        set: |s, v| {
            s.files.create_on_open = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "dedupe_percentage",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a percentage from 0 to 100",
        help: "this share of writes repeats an earlier write (fio's dedupe_mode=repeat)",
        set: |s, v| {
            s.buffers.dedupe_percentage = percent(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "do_verify",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "with verify: read back and check what was written, after each pass (default 1)",
        set: |s, v| {
            s.verify.do_verify = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "end_fsync",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fsync every file when each pass of a writing job ends (not counted as an I/O, as in fio)",
        set: |s, v| {
            s.files.end_fsync = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "experimental_verify",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "verify by replaying the job's offsets instead of remembering every write",
        set: |s, v| {
            s.verify.experimental = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "fadvise_hint",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0, 1 (by the job's pattern), random or sequential",
        help: "posix_fadvise access hint at open (default 1: RANDOM for random jobs, else SEQUENTIAL)",
        set: |s, v| {
            s.files.fadvise = FileSpec::parse_fadvise(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "fallocate",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none, native, posix, keep, truncate, 0 (none) or 1 (posix)",
        help: "how a file the run creates or extends is preallocated (default native)",
        set: |s, v| {
            s.files.fallocate = FileSpec::parse_fallocate(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "fdatasync",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number of writes (0: never)",
        help: "fdatasync after every N writes",
        set: |s, v| {
            s.files.fdatasync_every = every(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "fill_device",
        aliases: &["fill_fs"],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "write until the device or file system is full: ENOSPC ends the job, not as an error",
        set: |s, v| {
            s.fill_device = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "fsync",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number of writes (0: never)",
        help: "fsync after every N writes (counted in the sync section)",
        set: |s, v| {
            s.files.fsync_every = every(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "fsync_on_close",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fsync every file when a writing job closes it (each pass)",
        set: |s, v| {
            s.files.fsync_on_close = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "ignore_error",
        aliases: &[],
        arity: Arity::Value,
        allowed: "READ,WRITE,VERIFY lists of errno names (EIO, ENOSPC, ...) or numbers separated by ':'",
        help: "count these errors (fio's total_err) and go on; other errors still stop the job",
        set: |s, v| {
            s.ignore_error = crate::spec_types::IgnoreErrors::parse(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "overwrite",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "write a new file in full before a job that only writes it (default 0: only allocate it)",
        set: |s, v| {
            s.files.overwrite = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "pre_read",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "read the job's region into the page cache before it starts (turns invalidate off)",
        set: |s, v| {
            s.files.pre_read = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "refill_buffers",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "refill every write's buffer (random, buffer_pattern or zeros) before it is issued",
        set: |s, v| {
            s.buffers.refill = Some(flag(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "scramble_buffers",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "stamp each write's sectors with its offset and issue time (fio's default: 1)",
        set: |s, v| {
            s.buffers.scramble = Some(flag(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "stat_type",
        aliases: &[],
        arity: Arity::Value,
        allowed: "stat, lstat or statx",
        help: "ioengine=filestat: the call that is timed",
        set: |s, v| {
            s.files.stat_type = match v {
                "stat" => crate::spec_io::StatType::Stat,
                "lstat" => crate::spec_io::StatType::Lstat,
                "statx" => crate::spec_io::StatType::Statx,
                _ => return Err(format!("'{v}' is not stat, lstat or statx")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "sync",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none, 0, sync, 1 (O_SYNC) or dsync (O_DSYNC)",
        help: "open the job's files with O_SYNC or O_DSYNC",
        set: |s, v| {
            s.files.sync_io = FileSpec::parse_sync(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "thinktime_blocks_type",
        aliases: &[],
        arity: Arity::Value,
        allowed: "complete or issue",
        help: "what thinktime_blocks counts: completed (default, fio 3.33) or issued I/Os",
        set: |s, v| {
            s.thinktime_blocks_type = match v.trim() {
                "complete" => ThinkBlocksType::Complete,
                "issue" => ThinkBlocksType::Issue,
                _ => return Err(format!("'{v}' is not complete or issue")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "thinktime_iotime",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time (bare numbers are seconds)",
        help: "think after this long of I/O (with thinktime)",
        set: |s, v| {
            s.thinktime_iotime_ns = parse_time_ns(v, 1_000_000_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "thinktime_spin",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time (bare numbers are microseconds)",
        help: "spin this long of each think time, sleep the rest",
        set: |s, v| {
            s.thinktime_spin_ns = parse_time_ns(v, 1_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "thp",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0 or 1",
        help: "ioengine=mmap: map privately with transparent huge pages (MADV_HUGEPAGE)",
        set: |s, v| {
            s.files.thp = ranged_u32(v, 0, u32::MAX)? != 0;
            Ok(())
        },
    },
    OptionDef {
        name: "trim_backlog",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a number of blocks (0: never trim)",
        help: "with trim_percentage: trim after every N blocks written",
        set: |s, v| {
            s.verify.trim_mut().backlog = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "trim_backlog_batch",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a number of blocks (0: trim_backlog)",
        help: "with trim_percentage: how many blocks each batch trims",
        set: |s, v| {
            s.verify.trim_mut().batch = u64::from(ranged_u32(v, 0, u32::MAX)?);
            Ok(())
        },
    },
    OptionDef {
        name: "trim_percentage",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a percentage, 0 to 100",
        help: "trim (discard) this share of the blocks written with verify; needs trim_backlog",
        set: |s, v| {
            s.verify.trim_mut().percentage = ranged_u32(v, 0, 100)?;
            Ok(())
        },
    },
    OptionDef {
        name: "trim_verify_zero",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "verify that trimmed blocks read back as zeroes (default 1; 0: not verified)",
        set: |s, v| {
            s.verify.trim_mut().zero = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "unlink_each_loop",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "remove the job's files before each loop after the first",
        set: |s, v| {
            s.files.unlink_each_loop = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "verify",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0, md5, crc64, crc32c, crc32c-intel, sha1, sha256, sha512, xxhash, meta, pattern, pattern_hdr or null",
        help: "write checkable blocks and read them back (see do_verify, verify_only)",
        set: |s, v| {
            s.verify.method = Method::parse(v.trim())?;
            s.verify.method_given = true;
            Ok(())
        },
    },
    OptionDef {
        name: "verify_backlog",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a number of blocks (0: off)",
        help: "verify while writing, after every N blocks written",
        set: |s, v| {
            s.verify.backlog = Some(parse_size(v, s.kb_base)?).filter(|&n| n > 0);
            Ok(())
        },
    },
    OptionDef {
        name: "verify_backlog_batch",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a number of blocks (0: verify_backlog)",
        help: "how many blocks each backlog verification reads",
        set: |s, v| {
            s.verify.backlog_batch = Some(uint(v)?).filter(|&n| n > 0);
            Ok(())
        },
    },
    OptionDef {
        name: "verify_dump",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "write each bad block (and the expected one) to FILE.OFFSET.received/.expected",
        set: |s, v| {
            s.verify.dump = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "verify_fatal",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "stop the job at the first verify failure (default: check every block)",
        set: |s, v| {
            s.verify.fatal = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "verify_interval",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size of at least 80 bytes",
        help: "bytes per verify header (default: the gcd of the write sizes)",
        set: |s, v| {
            let b = parse_size(v, s.kb_base)?;
            if b < 80 {
                return Err(format!("{b} is less than fio's minimum of 80"));
            }
            s.verify.interval = Some(u32::try_from(b).map_err(|_| format!("'{v}' is too large"))?);
            Ok(())
        },
    },
    OptionDef {
        name: "verify_offset",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size of at least 40 bytes, beyond the header and inside the interval",
        help: "put the verify header this far into each interval",
        set: |s, v| {
            let b = parse_size(v, s.kb_base)?;
            if b < 40 {
                return Err(format!("{b} is less than fio's minimum of 40"));
            }
            s.verify.offset = u32::try_from(b).map_err(|_| format!("'{v}' is too large"))?;
            Ok(())
        },
    },
    OptionDef {
        name: "verify_only",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "write nothing: read back and check what the job would have written",
        set: |s, v| {
            s.verify.only = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "verify_pattern",
        aliases: &[],
        arity: Arity::Value,
        allowed: "fio's pattern: 0x hex bytes, a decimal number, \"text\", 'file', %o (offset), concatenated",
        help: "data to write and check (turns verify on, with a header, unless verify is given)",
        set: |s, v| {
            s.verify.pattern = Some(Pattern::parse(v)?);
            if !s.verify.method_given {
                s.verify.method = Some(Method::PatternHeader);
            }
            Ok(())
        },
    },
    OptionDef {
        name: "verify_policy",
        aliases: &[],
        arity: Arity::Value,
        allowed: "completed or fsynced",
        help: "which writes a saved verify state vouches for: completed (every completed write) or fsynced (those issued before the last fsync that completed; newer fio)",
        set: |s, v| {
            s.verify.fsynced = match v {
                "completed" => false,
                "fsynced" => true,
                _ => return Err(format!("'{v}' is not a verify policy")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "verify_state_load",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "verify only what local-JOB-N-verify.state says was written",
        set: |s, v| {
            s.verify.state_load = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "verify_state_save",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "write local-JOB-N-verify.state when a verifying job that writes ends (default 1)",
        set: |s, v| {
            s.verify.state_save = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "verify_write_sequence",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "check each block's write number against its last write (default 1; newer fio)",
        set: |s, v| {
            s.verify.write_sequence = flag(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "write_barrier",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number of writes (0: never)",
        help: "accepted; only fio's libpmem engine honours barriers, so it changes nothing here (as in fio)",
        set: |s, v| {
            s.files.write_barrier = every(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "zero_buffers",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "write buffers start zero-filled (turns the default scramble_buffers off)",
        set: |s, v| {
            s.buffers.zero = Some(flag(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "zonemode",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none, strided or zbd (zoned block devices)",
        help: "strided: I/O moves zonesize bytes in each zone of zonerange, then skips zoneskip; zbd: writes at zone write pointers",
        set: |s, v| {
            use crate::spec_io::ZoneMode;
            s.refused.retain(|r| !r.starts_with("option 'zonemode="));
            s.zones.mode = match v {
                "none" => ZoneMode::None,
                "strided" => ZoneMode::Strided,
                "zbd" => ZoneMode::Zbd,
                _ => return Err(format!("'{v}' is not none, strided or zbd")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "zonerange",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size (zonemode=strided: a zone's length; default zonesize)",
        help: "zonemode=strided: the length of a zone",
        set: |s, v| {
            if refused_in_zones(s, "zonerange", v) {
                return Ok(());
            }
            s.zones.range = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "zonesize",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size (zonemode=strided: bytes moved in a zone before the next)",
        help: "zonemode=strided: bytes moved in each zone",
        set: |s, v| {
            if refused_in_zones(s, "zonesize", v) {
                return Ok(());
            }
            s.zones.size = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "zoneskip",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size (zonemode=strided: bytes skipped after each zone)",
        help: "zonemode=strided: bytes skipped after each zone",
        set: |s, v| {
            if refused_in_zones(s, "zoneskip", v) {
                return Ok(());
            }
            s.zones.skip = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
];
