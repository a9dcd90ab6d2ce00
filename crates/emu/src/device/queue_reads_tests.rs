use super::super::shared_reads::shared_command;
use super::*;
use crate::config::Params;
use crate::device::{Extent, Op};
use std::sync::mpsc;
use std::time::Duration;

const SECOND: u64 = 1_000_000_000;

fn ext(page: u64, pages: u64) -> Extent {
    Extent {
        offset: page * 4096,
        len: pages * 4096,
    }
}

/// The emulator's flash preset with fast timings (2 µs array reads, a
/// 64 GB/s link and channels, 200 ns per command on 4 cores), its first
/// `pages` pages written.
fn fast(pages: u64) -> Device {
    let p = "nvme-tlc,size=256m,read_ns=2000,fw_cmd_ns=200,link_mbps=64000,channel_mbps=64000";
    let mut d = Device::new(&Params::parse(p).unwrap());
    for i in (0..pages).step_by(32) {
        d.submit(0, Op::Write, &[ext(i, 32)]).unwrap();
    }
    d
}

/// `n` batches of 1 to 32 reads (some of several pages) from `seed`, on
/// average `gap` ns apart.
fn batches(n: usize, seed: u64, queue: usize, gap: u64) -> Vec<Vec<SharedRead>> {
    batches_from(SECOND, n, seed, (queue, gap))
}

/// [`batches`] from `start` ns on.
fn batches_from(
    start: u64,
    n: usize,
    seed: u64,
    (queue, gap): (usize, u64),
) -> Vec<Vec<SharedRead>> {
    let (mut t, mut x, mut seq) = (start, seed, 0);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let k = (next() % 32 + 1) as usize;
            (0..k)
                .map(|_| {
                    let r = next();
                    t += r % (2 * gap);
                    seq += 1;
                    let pages = [1, 1, 1, 2, 4][(r >> 20) as usize % 5];
                    let extent = ext((r >> 32) % (4096 - 4), pages);
                    let cmd = shared_command(queue, seq);
                    SharedRead { t, extent, cmd }
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_queue_pair_alone_reads_in_the_times_of_the_shared_schedules() {
    // The same batches on two copies of a device, faster than its dies
    // serve them: through the device's own schedules of the link and the
    // controller on one, through one queue pair's lanes on the other.
    // Every completion, the dies' busy time and the NAND counts agree.
    let shared = fast(4096);
    let (laned, ledgers, mut lanes) = booked_copy(&shared);
    // 75 ns apart: the dies (15M reads a second) fall behind.
    let all = batches(3_000, 0x9e37_79b9_7f4a_7c15, 2, 75);
    read_both(&shared, (&laned, &ledgers, &mut lanes), &all);
    assert!(lanes.dies.visits() > 0, "the dies were read on the lanes");
    assert_eq!(shared.totals().die_busy_ns, laned.totals().die_busy_ns);
    assert_eq!(shared.nand_totals(), laned.nand_totals());
}

/// The same batches through the device's own schedules on `shared` and
/// through `lanes` on `laned`: every completion agrees.
fn read_both(
    shared: &Device,
    (laned, ledgers, lanes): (&Device, &Ledgers, &mut Lanes),
    all: &[Vec<SharedRead>],
) {
    for (i, reads) in all.iter().enumerate() {
        let (mut want, mut got) = (vec![0; reads.len()], vec![0; reads.len()]);
        shared.read_shared_batch(reads, &mut want);
        laned.read_lanes_batch((ledgers, lanes), reads, &mut got);
        assert_eq!(got, want, "batch {i}");
    }
}

/// When the program work the fill queued on the dies ends: the earliest
/// and the latest die.
fn program_ends(d: &mut Device) -> (u64, u64) {
    let ends: Vec<u64> = d.nand.iter_mut().map(|n| n.get_mut().pe_until()).collect();
    (*ends.iter().min().unwrap(), *ends.iter().max().unwrap())
}

#[test]
fn reads_that_may_meet_program_work_take_the_dies_schedule_and_then_the_lanes() {
    // Reads from while the fill's programs run on the dies (suspending
    // them: the die's own state) until well after: a queue pair alone
    // gets the shared schedules' times throughout, on the die's lock
    // first and on its lanes once the programs are over.
    let p = "nvme-tlc,size=256m,read_ns=2000,fw_cmd_ns=200,link_mbps=64000,channel_mbps=64000,\
             suspend_max=4";
    let mut shared = Device::new(&Params::parse(p).unwrap());
    for i in (0..4096).step_by(32) {
        shared.submit(0, Op::Write, &[ext(i, 32)]).unwrap();
    }
    let (first, last) = program_ends(&mut shared);
    assert!(first > 0, "the fill's programs take time");
    let (laned, ledgers, mut lanes) = booked_copy(&shared);
    // About 50,000 reads from half the first die's programs to twice the last's.
    let gap = (2 * last - first / 2) / 50_000;
    let all = batches_from(first / 2, 3_000, 0x2545_f491_4f6c_dd1d, (1, gap));
    read_both(&shared, (&laned, &ledgers, &mut lanes), &all);
    assert!(
        lanes.dies.visits() > 0,
        "the reads after the programs went on the lanes"
    );
    assert!(
        shared.nand_totals().reads_ahead > 0,
        "reads went ahead of programs"
    );
    assert_eq!(shared.nand_totals(), laned.nand_totals());
    assert_eq!(shared.totals().die_busy_ns, laned.totals().die_busy_ns);
}

#[test]
fn the_lanes_reads_are_in_the_dies_before_the_model_is_held_alone() {
    // Reads on the lanes, then what the holder of the whole model does
    // before a write: each die's planes, reads and busy time are those of
    // a device that kept every read in its dies, so its programs start
    // after them. After the write, reads before its programs' end take
    // the die's own schedule.
    let mut shared = fast(4096);
    let (mut laned, ledgers, mut lanes) = booked_copy(&shared);
    let before = batches(500, 7, 0, 75);
    read_both(&shared, (&laned, &ledgers, &mut lanes), &before);
    laned.absorb_lane_reads();
    let state = |d: &mut Device| -> Vec<_> {
        d.nand
            .iter_mut()
            .map(|n| n.get_mut().read_state())
            .collect()
    };
    assert_eq!(state(&mut laned), state(&mut shared));
    assert_eq!(laned.totals().die_busy_ns, shared.totals().die_busy_ns);
    let t = before.last().and_then(|b| b.last()).map_or(SECOND, |r| r.t);
    for i in (0..4096).step_by(32) {
        laned.absorb_lane_reads();
        laned.submit(t, Op::Write, &[ext(i, 32)]).unwrap();
        laned.publish_die_ends();
    }
    let books = ledgers.die_books();
    for (i, n) in laned.nand.iter_mut().enumerate() {
        assert!(books.until(i) >= n.get_mut().pe_until(), "die {i}");
    }
    assert!(
        (0..laned.nand.len()).any(|i| books.until(i) > t),
        "the write's programs"
    );
}

#[test]
fn queue_pairs_read_without_a_device_wide_lock_or_write() {
    // Two threads read through lanes of their own while this one holds
    // the device's link locks (commands and data): they finish. The
    // controller's shared free times are not written either, and each
    // queue pair writes the ledgers less than once a read (a lock taken
    // per read writes its word twice a read): a worker writes its own
    // lanes, and the ledgers a chunk at a time. Every die's lock is held
    // too: reads that can meet no program go on the queue pair's lanes of
    // the dies.
    let mut d = fast(4096);
    let ledgers = Arc::new(d.ledgers());
    d.book_in(ledgers.clone());
    let ctrl_before = format!("{:?}", d.ctrl_free);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        let held = (d.hold_links(), d.hold_dies());
        for q in 0..2 {
            let (d, ledgers, tx) = (&d, &ledgers, tx.clone());
            s.spawn(move || {
                let mut lanes = ledgers.lanes(&d.p);
                let mut reads = 0;
                // 300 ns apart each: two queue pairs within the link's rate.
                for b in batches(200, 0x2545_f491_4f6c_dd1d + q as u64, q, 300) {
                    let mut done = vec![0; b.len()];
                    d.read_lanes_batch((ledgers, &mut lanes), &b, &mut done);
                    reads += b.len() as u64;
                }
                tx.send((reads, lanes.visits())).unwrap();
            });
        }
        for q in 0..2 {
            let got = rx.recv_timeout(Duration::from_secs(60));
            let (reads, visits) = got.unwrap_or_else(|_| panic!("queue {q} waits for a lock"));
            assert!(visits < reads, "{visits} ledger writes for {reads} reads");
        }
        drop(held);
    });
    assert_eq!(format!("{:?}", d.ctrl_free), ctrl_before);
}

#[test]
fn queue_pairs_together_never_read_faster_than_the_link() {
    // 4 queue pairs × 2,000 reads of unwritten pages (the link and the
    // controller only), all submitted at once: the link moves 4 KiB in
    // 65 ns and the 4 cores take 200 ns a command (50 ns for 4), so the
    // link binds: 8,000 reads take 520 µs however the queue pairs share
    // it (to within a frame of the link's ledger), and little more.
    let d = fast(0);
    let ledgers = d.ledgers();
    let per = d.link_ns(4096);
    assert_eq!(per, 65, "16 ps a byte");
    let ends = read_from_four(&d, &ledgers, |q| {
        (0..2_000)
            .map(|i| SharedRead {
                t: 0,
                extent: ext(q * 2_000 + i, 1),
                cmd: shared_command(q as usize, i),
            })
            .collect()
    });
    // The ledger bounds the work frame by frame: within the last frame
    // the reads may end sooner than one after another would.
    let (last, (frame, _)) = (*ends.iter().max().unwrap(), ledgers.data.frame());
    let all = 8_000 * per;
    assert!(
        last + frame >= all,
        "the last read at {last} ns: faster than the link"
    );
    assert!(last <= all + all / 10 + frame, "{last} ns against {all}");
}

#[test]
fn queue_pairs_together_never_read_a_die_faster_than_its_planes() {
    // 4 queue pairs × 500 reads of pages on one die, all submitted at
    // once after the fill's programs: each queue pair has its own lane
    // of the die, and the die's 4 planes read a page in 2 µs, so the
    // 2,000 reads take 1 ms however the lanes share it (to within a
    // frame of the die's ledger).
    let mut d = fast(4096);
    let ledgers = Arc::new(d.ledgers());
    d.book_in(ledgers.clone());
    let (_, programs) = program_ends(&mut d);
    let on_die0: Vec<u64> = (0..4096)
        .filter(|&l| d.page_at(l).is_some_and(|p| p.0 == 0))
        .collect();
    assert!(on_die0.len() >= 100, "{} pages on die 0", on_die0.len());
    let start = programs + SECOND;
    let ends = read_from_four(&d, &ledgers, |q| {
        (0..500)
            .map(|i| SharedRead {
                t: start,
                extent: ext(on_die0[(i * 7 + q as usize) % on_die0.len()], 1),
                cmd: shared_command(q as usize, i as u64),
            })
            .collect()
    });
    let last = ends.iter().max().unwrap() - start;
    let all = 2_000 * 2_000 / 4;
    let frame = ledgers.die_books().frame(0);
    assert!(
        last + frame >= all,
        "the last read {last} ns in: faster than the die's planes"
    );
    assert!(last <= all + all / 10 + frame, "{last} ns against {all}");
}

/// The reads `reads_of(q)` of 4 queue pairs, each from a thread of its own
/// on lanes of its own, 32 at a time: every completion.
fn read_from_four(
    d: &Device,
    ledgers: &Ledgers,
    reads_of: impl Fn(u64) -> Vec<SharedRead> + Sync,
) -> Vec<u64> {
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..4u64)
            .map(|q| {
                let reads = reads_of(q);
                s.spawn(move || {
                    let mut lanes = ledgers.lanes(&d.p);
                    let mut done = vec![0; reads.len()];
                    for (r, d2) in reads.chunks(32).zip(done.chunks_mut(32)) {
                        d.read_lanes_batch((ledgers, &mut lanes), r, d2);
                    }
                    done
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// A copy of `d` that books its reads in ledgers of its own, and one
/// queue pair's lanes on them.
fn booked_copy(d: &Device) -> (Device, Arc<Ledgers>, Lanes) {
    let mut laned = d.clone();
    let ledgers = Arc::new(laned.ledgers());
    laned.book_in(ledgers.clone());
    let lanes = ledgers.lanes(&laned.p);
    (laned, ledgers, lanes)
}
