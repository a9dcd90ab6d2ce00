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
    let (mut t, mut x, mut seq) = (SECOND, seed, 0);
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
    let mut laned = shared.clone();
    let ledgers = Arc::new(laned.ledgers());
    laned.book_in(ledgers.clone());
    let mut lanes = Lanes::new(&laned.p);
    // 75 ns apart: the dies (15M reads a second) fall behind.
    let all = batches(3_000, 0x9e37_79b9_7f4a_7c15, 2, 75);
    for (i, reads) in all.iter().enumerate() {
        let (mut want, mut got) = (vec![0; reads.len()], vec![0; reads.len()]);
        shared.read_shared_batch(reads, &mut want);
        laned.read_lanes_batch((&ledgers, &mut lanes), reads, &mut got);
        assert_eq!(got, want, "batch {i}");
    }
    assert_eq!(shared.totals().die_busy_ns, laned.totals().die_busy_ns);
    assert_eq!(shared.nand_totals(), laned.nand_totals());
}

#[test]
fn queue_pairs_read_without_a_device_wide_lock_or_write() {
    // Two threads read through lanes of their own while this one holds
    // the device's link locks (commands and data): they finish. The
    // controller's shared free times are not written either, and each
    // queue pair writes the ledgers less than once a read (a lock taken
    // per read writes its word twice a read): a worker writes its own
    // lanes and the die it reads from, and the ledgers a chunk at a time.
    let mut d = fast(4096);
    let ledgers = Arc::new(d.ledgers());
    d.book_in(ledgers.clone());
    let ctrl_before = format!("{:?}", d.ctrl_free);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        let held = d.hold_links();
        for q in 0..2 {
            let (d, ledgers, tx) = (&d, &ledgers, tx.clone());
            s.spawn(move || {
                let mut lanes = Lanes::new(&d.p);
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
    let ends: Vec<u64> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..4u64)
            .map(|q| {
                let (d, ledgers) = (&d, &ledgers);
                s.spawn(move || {
                    let mut lanes = Lanes::new(&d.p);
                    let reads: Vec<SharedRead> = (0..2_000)
                        .map(|i| SharedRead {
                            t: 0,
                            extent: ext(q * 2_000 + i, 1),
                            cmd: shared_command(q as usize, i),
                        })
                        .collect();
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
