//! The flow against a stand-in for the worker: requests complete in order,
//! the oldest first when the queue is full, all of them on `Drain`.

use super::*;
use crate::verify::VerifySpec;
use ssdready_core::spec::{BlockSizes, JobSpec, RwMode};
use ssdready_core::spec_io::ThinkBlocksType;
use std::collections::VecDeque;

/// What the stand-in saw, in order.
#[derive(Debug, PartialEq)]
enum Ev {
    Write(u64, Tag),
    Read(u64, Tag),
    Sync(bool),
    SyncRange,
    Drain,
    Think,
    Drop(u32),
    Fsync,
    Settle,
    NewLoop(bool),
}

fn run(flow: &mut JobFlow, depth: usize, max_events: usize) -> Vec<Ev> {
    let mut q: VecDeque<FlowIo> = VecDeque::new();
    let mut out = Vec::new();
    let mut now = 1_000u64;
    while out.len() < max_events {
        now += 1_000;
        let step = flow.next(q.len(), now);
        match step {
            Step::Io(io) => {
                out.push(match io {
                    FlowIo::Rw {
                        ddir: Ddir::Write,
                        offset,
                        tag,
                        ..
                    } => Ev::Write(offset, tag),
                    FlowIo::Rw { offset, tag, .. } => Ev::Read(offset, tag),
                    FlowIo::Sync { data_only, .. } => Ev::Sync(data_only),
                    FlowIo::SyncRange { .. } => Ev::SyncRange,
                });
                q.push_back(io);
                if q.len() >= depth {
                    let done = q.pop_front().unwrap();
                    flow.completed(&done, true);
                }
            }
            Step::Drain => {
                out.push(Ev::Drain);
                while let Some(done) = q.pop_front() {
                    flow.completed(&done, true);
                }
            }
            Step::Done => {
                while let Some(done) = q.pop_front() {
                    flow.completed(&done, true);
                }
                break;
            }
            Step::Think { .. } => out.push(Ev::Think),
            Step::DropCache(f) => out.push(Ev::Drop(f)),
            Step::FsyncFiles => out.push(Ev::Fsync),
            Step::SettleForVerify => out.push(Ev::Settle),
            Step::NewLoop { unlink, .. } => out.push(Ev::NewLoop(unlink)),
        }
    }
    out
}

fn spec(rw: RwMode, size: u64) -> JobSpec {
    JobSpec {
        rw,
        size: Some(size),
        bs: BlockSizes::Fixed(4096),
        filename: vec!["/a/file".into()],
        ..JobSpec::default()
    }
}

fn flow(s: &JobSpec) -> JobFlow {
    let r = [Region {
        file: 0,
        offset: 0,
        len: s.size.unwrap(),
    }];
    JobFlow::new(&FlowConfig::new(s), &r, 0)
}

fn count(ev: &[Ev], f: impl Fn(&Ev) -> bool) -> usize {
    ev.iter().filter(|e| f(e)).count()
}

fn verify(method: Method) -> VerifySpec {
    VerifySpec {
        method: Some(method),
        method_given: true,
        ..VerifySpec::default()
    }
}

/// fio 3.33, psync, 1 MiB of 4 KiB writes with fsync=8: 31 syncs, one
/// after every 8th write but the last.
#[test]
fn fsync_every_eight_writes_as_fio_counts_them() {
    let mut s = spec(RwMode::Write, 1 << 20);
    s.files.fsync_every = 8;
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Write(..))), 256);
    assert_eq!(count(&ev, |e| *e == Ev::Sync(false)), 31);
    let first = ev.iter().position(|e| matches!(e, Ev::Sync(_))).unwrap();
    assert_eq!(first, 8, "after the 8th write");
    s.files.fsync_every = 0;
    s.files.fdatasync_every = 10;
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| *e == Ev::Sync(true)), 25);
}

/// sync_file_range=write:4 over 32 writes: 7 ranged syncs, as fio (after
/// writes 4 … 28; none after the last).
#[test]
fn sync_file_range_every_four_writes_as_fio_counts_them() {
    let mut s = spec(RwMode::Write, 128 << 10);
    s.access.sync_file_range = Some(ssdready_core::spec_access::SyncRange { flags: 2, every: 4 });
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Write(..))), 32);
    assert_eq!(count(&ev, |e| *e == Ev::SyncRange), 7);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Sync(_))), 0);
}

/// end_fsync: one uncounted fsync of the files when the pass ends.
#[test]
fn end_fsync_syncs_the_files_once_at_the_end() {
    let mut s = spec(RwMode::RandWrite, 64 << 10);
    s.files.end_fsync = true;
    let ev = run(&mut flow(&s), 4, 10_000);
    assert_eq!(ev.last(), Some(&Ev::Fsync));
    assert_eq!(count(&ev, |e| *e == Ev::Fsync), 1);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Sync(_))), 0);
}

/// fio waits for every I/O in flight, then thinks, every thinktime_blocks
/// completions (thinktime_blocks_type=complete, the default).
#[test]
fn thinktime_drains_the_queue_then_thinks() {
    let mut s = spec(RwMode::RandRead, 64 << 10);
    s.thinktime_ns = 1_000_000;
    s.thinktime_blocks = 4;
    s.iodepth = 8;
    s.ioengine = ssdready_core::spec::EngineKind::IoUring;
    let ev = run(&mut flow(&s), 8, 10_000);
    let thinks = count(&ev, |e| *e == Ev::Think);
    assert!((2..=4).contains(&thinks), "{thinks}: {ev:?}");
    for (i, _) in ev.iter().enumerate().filter(|(_, e)| **e == Ev::Think) {
        assert_eq!(ev[i - 1], Ev::Drain, "a think follows a drain: {ev:?}");
        assert!(
            !matches!(ev.get(i + 1), Some(Ev::Think)),
            "an I/O between thinks: {ev:?}"
        );
    }
    // By issue: exactly after every 4th I/O issued, 16 I/Os → 4.
    s.thinktime_blocks_type = ThinkBlocksType::Issue;
    let ev = run(&mut flow(&s), 8, 10_000);
    assert_eq!(count(&ev, |e| *e == Ev::Think), 4);
    let first = ev.iter().position(|e| *e == Ev::Drain).unwrap();
    assert_eq!(first, 4, "{ev:?}");
}

/// A writing job with verify: the pass's writes, the files settled, then
/// every block read back expecting the write that put it there.
#[test]
fn verify_reads_back_every_write_of_the_pass() {
    let mut s = spec(RwMode::RandWrite, 64 << 10);
    s.verify = verify(Method::Crc32c);
    let ev = run(&mut flow(&s), 1, 10_000);
    let settle = ev.iter().position(|e| *e == Ev::Settle).unwrap();
    assert_eq!(settle, 16);
    let writes: Vec<(u64, u64)> = ev[..settle]
        .iter()
        .map(|e| match e {
            Ev::Write(o, Tag::Stamped { generation, .. }) => (*o, *generation),
            other => panic!("{other:?}"),
        })
        .collect();
    let reads: Vec<(u64, u64)> = ev[settle + 1..]
        .iter()
        .map(|e| match e {
            Ev::Read(o, Tag::Check(x)) => (*o, x.generation.unwrap()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        writes, reads,
        "random map: in write order, each with its generation"
    );
}

/// A block written twice in a pass (`rw=write:4k` wraps; `randwrite` with
/// `norandommap`) is checked against its last write, never an older one;
/// a replay of the writes (`experimental_verify`) cannot tell which was
/// last and checks each block against its own header.
#[test]
fn blocks_written_twice_expect_their_last_write() {
    let mut holes = spec(RwMode::Write, 64 << 10);
    holes.rw_seq_add = 4096;
    let mut free = spec(RwMode::RandWrite, 64 << 10);
    free.norandommap = true;
    for mut s in [holes, free] {
        s.verify = verify(Method::Crc32c);
        let ev = run(&mut flow(&s), 1, 10_000);
        let settle = ev.iter().position(|e| *e == Ev::Settle).unwrap();
        let mut last = std::collections::BTreeMap::new();
        for e in &ev[..settle] {
            if let Ev::Write(o, Tag::Stamped { generation, .. }) = e {
                last.insert(*o, *generation);
            }
        }
        assert!(last.len() < settle, "some block is written twice: {ev:?}");
        for e in &ev[settle + 1..] {
            if let Ev::Read(o, Tag::Check(x)) = e {
                assert_eq!(x.generation, Some(last[o]), "offset {o}: {ev:?}");
            }
        }
        s.verify.experimental = true;
        let ev = run(&mut flow(&s), 1, 10_000);
        for e in &ev {
            if let Ev::Read(_, Tag::Check(x)) = e {
                assert_eq!(x.generation, None, "{ev:?}");
            }
        }
    }
}

/// fio's t0007 through the flow: `rw=read:512k`, `bs=1m` over 128 MiB
/// reads 85 blocks (87,040 KiB), not 128 by going round.
#[test]
fn sequential_holes_end_the_job_where_the_next_block_does_not_fit() {
    let mut s = spec(RwMode::Read, 128 << 20);
    s.rw_seq_add = 512 << 10;
    s.bs = BlockSizes::Fixed(1 << 20);
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(..))), 85);
}

/// verify_backlog=4: four reads after every four writes.
#[test]
fn verify_backlog_interleaves_reads() {
    let mut s = spec(RwMode::Write, 64 << 10);
    s.verify = VerifySpec {
        backlog: Some(4),
        ..verify(Method::Md5)
    };
    let ev = run(&mut flow(&s), 1, 10_000);
    let kinds: String = ev
        .iter()
        .map(|e| match e {
            Ev::Write(..) => 'w',
            Ev::Read(..) => 'r',
            Ev::Settle => '|',
            _ => '.',
        })
        .collect();
    assert_eq!(kinds, "wwwwrrrr".repeat(4) + "|");
}

/// loops=3 with unlink_each_loop: three passes, the files removed before
/// the second and the third.
#[test]
fn loops_start_new_passes_and_unlink_each_loop_removes_the_files() {
    let mut s = spec(RwMode::Write, 16 << 10);
    s.loops = 3;
    s.files.unlink_each_loop = true;
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Write(..))), 12);
    assert_eq!(count(&ev, |e| *e == Ev::NewLoop(true)), 2);
    assert_eq!(ev[4], Ev::NewLoop(true));
}

/// fio 3.33: io_size=3m over size=1m with verify ends after two passes
/// (w 512, r 512): verification reads count toward io_size.
#[test]
fn io_size_counts_verification_reads_as_fio_does() {
    let mut s = spec(RwMode::RandWrite, 1 << 20);
    s.io_size = Some(3 << 20);
    s.verify = verify(Method::Crc32c);
    let ev = run(&mut flow(&s), 1, 100_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Write(..))), 512);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(..))), 512);
}

/// verify_only: nothing written; the blocks the job would write are read,
/// without expecting a particular write (fio does not know which was last).
#[test]
fn verify_only_reads_what_would_have_been_written() {
    let mut s = spec(RwMode::Write, 32 << 10);
    s.verify = VerifySpec {
        only: true,
        ..verify(Method::Sha1)
    };
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Write(..))), 0);
    assert_eq!(ev[0], Ev::Settle);
    let offs: Vec<u64> = ev[1..]
        .iter()
        .map(|e| match e {
            Ev::Read(o, Tag::Check(x)) => {
                assert_eq!(*x, Expect::default());
                *o
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(offs, (0..8).map(|i| i * 4096).collect::<Vec<_>>());
}

/// experimental_verify replays the pass's offsets instead of logging them.
#[test]
fn experimental_verify_replays_the_same_offsets() {
    let mut s = spec(RwMode::RandWrite, 64 << 10);
    s.verify = verify(Method::Xxhash);
    let logged = run(&mut flow(&s), 1, 10_000);
    s.verify.experimental = true;
    let replayed = run(&mut flow(&s), 1, 10_000);
    assert_eq!(logged, replayed);
}

/// A time-based random job drops the file's cache each time a pass over
/// it ends (fio's loop_cache_invalidate); with direct=1 it does not.
#[test]
fn time_based_passes_drop_the_cache() {
    let mut s = spec(RwMode::RandRead, 16 << 10);
    s.time_based = true;
    s.runtime_ns = Some(1_000_000_000);
    let ev = run(&mut flow(&s), 1, 20);
    assert_eq!(ev[4], Ev::Drop(0), "{ev:?}");
    assert_eq!(ev[9], Ev::Drop(0), "{ev:?}");
    s.direct = true;
    let ev = run(&mut flow(&s), 1, 20);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Drop(_))), 0);
}

/// A time-based writing job with verify passes of `size`: write, verify,
/// write again, as fio does.
#[test]
fn time_based_verify_alternates_writing_and_verifying() {
    let mut s = spec(RwMode::Write, 16 << 10);
    s.time_based = true;
    s.runtime_ns = Some(1_000_000_000);
    s.verify = verify(Method::Meta);
    let ev = run(&mut flow(&s), 1, 21);
    let kinds: String = ev
        .iter()
        .map(|e| match e {
            Ev::Write(..) => 'w',
            Ev::Read(_, Tag::Check(x)) => {
                assert_eq!(x.generation, None, "time_based: not checked");
                'r'
            }
            Ev::Settle => '|',
            Ev::NewLoop(_) => 'n',
            _ => '.',
        })
        .collect();
    assert_eq!(kinds, "wwww|rrrrnwwww|rrrrnw");
}

/// A loaded verify state stops verification at the first write it cannot
/// vouch for.
#[test]
fn a_saved_state_limits_verification() {
    let mut s = spec(RwMode::Write, 64 << 10);
    s.verify = VerifySpec {
        only: true,
        state_load: true,
        ..verify(Method::Crc32c)
    };
    let saved = SavedState {
        depth: 2,
        files: 1,
        issued: 10,
        index: 0,
        name: "j".into(),
        completed: vec![(0, 8 * 4096)],
    };
    let mut f = flow(&s).with_state(saved);
    let ev = run(&mut f, 1, 10_000);
    // Blocks 0..8 are before the window; block 8 completed; block 9 did not.
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(..))), 9);
    assert_eq!(f.skipped_by_state(), 16 - 9);
}

/// The state saved at the end lists the last completed writes.
#[test]
fn the_saved_state_lists_the_last_writes() {
    let mut s = spec(RwMode::Write, 64 << 10);
    s.verify = verify(Method::Crc32c);
    s.iodepth = 4;
    s.ioengine = ssdready_core::spec::EngineKind::IoUring;
    let mut f = flow(&s);
    run(&mut f, 4, 10_000);
    let st = f.saved_state("j", 3);
    assert_eq!((st.issued, st.depth, st.index), (16, 4, 3));
    assert_eq!(st.completed[0], (0, 15 * 4096), "newest first");
    assert_eq!(st.completed.len(), 4);
}

/// thinktime_iotime alone: a think whenever iotime + thinktime has passed
/// since the last one (fio's rule; thinktime_blocks then does not count).
#[test]
fn thinktime_iotime_thinks_by_time() {
    let mut s = spec(RwMode::Read, 1 << 20);
    s.thinktime_ns = 4_000;
    s.thinktime_iotime_ns = 6_000;
    let ev = run(&mut flow(&s), 1, 300);
    let at: Vec<usize> = ev
        .iter()
        .enumerate()
        .filter(|(_, e)| **e == Ev::Think)
        .map(|(i, _)| i)
        .collect();
    // The stand-in's clock moves 1 µs a step: 10 steps between thinks.
    assert!(at.len() >= 25, "{at:?}");
    for w in at.windows(2) {
        assert_eq!(w[1] - w[0], 10, "{at:?}");
    }
    // With thinktime_blocks given as well, blocks count too.
    s.thinktime_blocks = 2;
    s.thinktime_blocks_given = true;
    let ev = run(&mut flow(&s), 1, 300);
    assert!(count(&ev, |e| *e == Ev::Think) > 90);
}

/// number_ios ends a time-based job (ssdready's rule; fio 3.33 ignores it
/// there), rather than starting empty passes until the runtime is up.
#[test]
fn number_ios_ends_a_time_based_job() {
    let mut s = spec(RwMode::RandRead, 1 << 20);
    s.time_based = true;
    s.runtime_ns = Some(1_000_000_000);
    s.number_ios = Some(10);
    let ev = run(&mut flow(&s), 1, 1_000);
    assert_eq!(ev.len(), 10, "{ev:?}");
}

/// verify_policy=fsynced: the state saved vouches for the writes issued
/// before the last fsync that completed, each sync issued on an empty
/// queue; a verify_only job with that state checks those alone and counts
/// its dry run's writes as done.
#[test]
fn an_fsynced_state_vouches_for_the_writes_before_the_last_fsync() {
    let mut s = spec(RwMode::Write, 64 << 10);
    s.verify = VerifySpec {
        fsynced: true,
        ..verify(Method::Crc32c)
    };
    s.files.fsync_every = 5;
    s.iodepth = 4;
    s.ioengine = ssdready_core::spec::EngineKind::IoUring;
    let mut f = flow(&s);
    let ev = run(&mut f, 4, 10_000);
    let syncs: Vec<usize> = (0..ev.len())
        .filter(|&i| ev[i] == Ev::Sync(false))
        .collect();
    assert_eq!(syncs.len(), 3, "{ev:?}");
    for &i in &syncs {
        assert_eq!(
            ev[i - 1],
            Ev::Drain,
            "a sync waits for the writes before it"
        );
    }
    let st = f.saved_state("j", 0);
    assert_eq!(st.issued, 15);
    assert_eq!(st.completed[0], (0, 14 * 4096), "newest first");
    // Without the policy, every write issued.
    s.verify.fsynced = false;
    let mut f = flow(&s);
    run(&mut f, 4, 10_000);
    assert_eq!(f.saved_state("j", 0).issued, 16);

    s.verify = VerifySpec {
        only: true,
        state_load: true,
        ..verify(Method::Crc32c)
    };
    let mut f = flow(&s).with_state(st);
    let ev = run(&mut f, 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(..))), 15);
    assert_eq!(f.skipped_by_state(), 1);
    assert_eq!(f.take_dry_run(), [(0, 0), (16, 64 << 10), (0, 0)]);
    assert_eq!(f.take_dry_run(), [(0, 0); 3], "taken once");
}

/// fsynced before any sync completed: the state vouches for nothing.
#[test]
fn an_fsynced_state_without_a_sync_vouches_for_nothing() {
    let mut s = spec(RwMode::RandWrite, 32 << 10);
    s.verify = VerifySpec {
        fsynced: true,
        ..verify(Method::Md5)
    };
    let mut f = flow(&s);
    run(&mut f, 1, 10_000);
    let st = f.saved_state("j", 0);
    assert_eq!((st.issued, st.completed.len()), (0, 0));
    s.verify = VerifySpec {
        only: true,
        state_load: true,
        ..verify(Method::Md5)
    };
    let mut f = flow(&s).with_state(st);
    let ev = run(&mut f, 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(..))), 0);
    assert_eq!(f.skipped_by_state(), 8);
}

/// trim_percentage=50 with trim_backlog=4: half the blocks written are
/// trimmed, in batches once every 4 written; verification then expects
/// zeroes there (trim_verify_zero) or skips them.
#[test]
fn verify_trims_trim_their_share_and_read_back_zeroes() {
    let mut s = spec(RwMode::Write, 64 << 10);
    s.verify = verify(Method::Md5);
    *s.verify.trim_mut() = ssdready_core::spec_verify::TrimSpec {
        percentage: 50,
        backlog: 4,
        batch: 0,
        zero: true,
    };
    let ev = run(&mut flow(&s), 1, 10_000);
    // The stand-in shows trims as reads without a check.
    let trims: Vec<u64> = ev
        .iter()
        .filter_map(|e| match e {
            Ev::Read(o, Tag::Plain) => Some(*o / 4096),
            _ => None,
        })
        .collect();
    assert_eq!(trims, vec![1, 3, 5, 7, 9, 11, 13, 15]);
    let first_trim = ev.iter().position(|e| matches!(e, Ev::Read(_, Tag::Plain)));
    assert_eq!(first_trim, Some(4), "after 4 writes: {ev:?}");
    let zero_reads = count(
        &ev,
        |e| matches!(e, Ev::Read(o, Tag::Check(x)) if x.zeroes && (o / 4096) % 2 == 1),
    );
    let data_reads = count(
        &ev,
        |e| matches!(e, Ev::Read(_, Tag::Check(x)) if !x.zeroes),
    );
    assert_eq!((zero_reads, data_reads), (8, 8));
    // trim_verify_zero=0: trimmed blocks are not read back.
    s.verify.trim_mut().zero = false;
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(_, Tag::Check(_)))), 8);
    // Without trim_backlog, fio trims nothing.
    s.verify.trim_mut().backlog = 0;
    let ev = run(&mut flow(&s), 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(_, Tag::Plain))), 0);
}

/// io_size twice size on a sequential verifying write: all of io_size is
/// written (the writes wrap), then each block is verified once against
/// its newest write (newer fio's do_io; fio 3.33 verified each pass).
#[test]
fn wrapping_writes_are_verified_once_against_the_newest() {
    let mut s = spec(RwMode::Write, 32 << 10);
    s.io_size = Some(64 << 10);
    s.verify = verify(Method::Crc32c);
    let ev = run(&mut flow(&s), 1, 10_000);
    let writes = count(&ev, |e| matches!(e, Ev::Write(..)));
    let first_read = ev.iter().position(|e| matches!(e, Ev::Read(..))).unwrap();
    assert_eq!(writes, 16);
    assert!(
        first_read > 16,
        "every write before the first check: {ev:?}"
    );
    let gens: Vec<u64> = ev
        .iter()
        .filter_map(|e| match e {
            Ev::Read(_, Tag::Check(x)) => x.generation,
            _ => None,
        })
        .collect();
    assert_eq!(
        gens,
        (8..16).collect::<Vec<u64>>(),
        "the newest of each block"
    );
    // verify_only reads each block once too.
    s.verify.only = true;
    let mut f = flow(&s);
    let ev = run(&mut f, 1, 10_000);
    assert_eq!(count(&ev, |e| matches!(e, Ev::Read(..))), 8);
    assert_eq!(f.take_dry_run()[1], (16, 64 << 10));
}
