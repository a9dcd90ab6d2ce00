//! Reads of a flash device by several threads at once, each holding the
//! model shared (its queue pair's shard of the model's lock,
//! [`crate::model_lock`]), not alone.
//!
//! A read changes no mapping: it looks its pages up in the FTL and
//! reserves time on resources — the command's bytes on the link, a
//! controller core, each page's die (its planes' schedule, the program and
//! erase work it suspends) and that die's channel, then the data on the
//! link. Each of these has its own lock ([`crate::locked::Locked`]; the
//! controller's cores are taken with one compare-and-swap instead,
//! [`crate::locked::FreeTimes`]), taken
//! one at a time (a die's, then its channel's while the die is held; no
//! other order exists, so no deadlock), so reads on different dies run in
//! parallel and meet only on the device-wide resources (link, controller
//! cores), each held for a few instructions. Everything else — writes,
//! trims, flushes, GC, a device with injected faults, command slots or
//! zones — holds the whole model alone ([`Device::submit`]), which keeps
//! readers out.
//!
//! A batch of reads ([`Device::read_shared_batch`]) takes the command
//! link's lock once for its commands and the data link's once for its
//! data, each resource reserved for the batch's reads in their order, so
//! the times are those of the reads one after another. The real-time
//! front's queue pairs fetch their batches on lanes of their own instead
//! ([`super::queue_reads`]: no device-wide lock per read), with the same
//! times for a queue pair alone.
//!
//! The reservations are the ones [`Device::submit`] makes for a read, in
//! the same order, so a read costs the same whichever path it takes; the
//! owner of the whole model takes the same die and channel locks
//! uncontended, so one thread (the virtual-time simulation) gets the same
//! results as before, deterministically. What differs with several
//! threads is only the interleaving: two reads submitted a few ns apart
//! may reserve a shared resource in either order, as two CPUs' commands
//! reach a real controller in either order. Shared reads are counted by
//! their queue pairs ([`crate::queues`]), their die time and NAND counts by
//! their dies ([`Device::totals`], [`Device::nand_totals`]).

use super::{Device, Extent};

/// Shared reads' command numbers: above any the device's own count
/// reaches, so a shared read never takes another command's NAND page read
/// for its own.
const SHARED: u64 = 1 << 63;

/// Bits of a shared read's number that count its queue's commands.
const SEQ_BITS: u32 = 40;

/// The number of the `seq`-th shared read on queue pair `queue`: each
/// queue numbers its own commands, as an NVMe queue pair does (its
/// command identifiers), so readers on different queues share no counter.
pub fn shared_command(queue: usize, seq: u64) -> u64 {
    let q = (queue as u64) & ((1 << (63 - SEQ_BITS)) - 1);
    SHARED | q << SEQ_BITS | (seq & ((1 << SEQ_BITS) - 1))
}

impl Device {
    /// Whether reads may be served with the model held shared: a flash
    /// device without command slots or zones (module docs).
    pub fn reads_shareable(&self) -> bool {
        self.dram.is_none()
            && self.slot_free.is_empty()
            && self.ftl.as_ref().is_some_and(|f| f.zones.is_none())
    }

    /// A one-extent read submitted at `t` by a thread holding the model
    /// shared (module docs): its completion time, never before `t`. Only
    /// for a device whose [`Device::reads_shareable`] holds.
    pub fn read_shared(&self, t: u64, e: &Extent) -> u64 {
        // A queue number no queue pair has.
        let cmd = shared_command(usize::MAX, self.read_seq.next());
        self.read_shared_as(t, e, cmd)
    }

    /// [`Device::read_shared`] as command `cmd` (a [`shared_command`]
    /// number of the caller's queue pair). It writes nothing device-wide
    /// but the resources it reserves: the time it prunes old reservations
    /// by is its own submission time, not a stamp every reader raises.
    pub fn read_shared_as(&self, t: u64, e: &Extent, cmd: u64) -> u64 {
        let mut done = [0];
        self.read_shared_batch(&[SharedRead { t, extent: *e, cmd }], &mut done);
        done[0]
    }

    /// The reads of one queue pair fetched together (its doorbell, module
    /// docs): each read's completion time into `done` (as many as
    /// `reads`). Each resource is reserved for the reads in their order,
    /// as one [`Device::read_shared_as`] after another would, so one
    /// thread gets the same times either way; but the command link's and
    /// the data link's locks are taken once for the batch, not once per
    /// read.
    pub fn read_shared_batch(&self, reads: &[SharedRead], done: &mut [u64]) {
        debug_assert_eq!(reads.len(), done.len());
        // The commands over the link (the link's lock only when it takes
        // time: `reserve` of nothing changes nothing).
        let cmd_ns = self.link_ns(self.command_bytes(1));
        if cmd_ns > 0 {
            let mut line = self.cmd_line.lock();
            for (r, d) in reads.iter().zip(done.iter_mut()) {
                *d = line.reserve(r.t, cmd_ns, r.t);
            }
        } else {
            for (r, d) in reads.iter().zip(done.iter_mut()) {
                *d = r.t;
            }
        }
        // A controller core, then each page's die and channel.
        for (r, d) in reads.iter().zip(done.iter_mut()) {
            let pages = self.lpns(&r.extent);
            let cost = self.controller_ns(pages.end - pages.start, 1);
            let ready = self.ctrl_free.take(*d, cost);
            *d = pages.fold(ready, |x, lpn| {
                x.max(self.read_page_as(lpn, ready, r.cmd, r.t))
            });
        }
        // The data over the link, then the completion.
        let on_link = reads.iter().any(|r| self.link_ns(r.extent.len) > 0);
        let mut line = on_link.then(|| self.link_line.lock());
        for (r, d) in reads.iter().zip(done.iter_mut()) {
            let dur = self.link_ns(r.extent.len);
            if let (Some(line), true) = (line.as_mut(), dur > 0) {
                *d = line.reserve(*d, dur, r.t);
            }
            *d = self
                .p
                .stall
                .delay(r.t, (*d).max(r.t).saturating_add(self.p.cpl_ns));
        }
    }
}

/// One read of a queue pair's batch ([`Device::read_shared_batch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedRead {
    /// When it was submitted.
    pub t: u64,
    pub extent: Extent,
    /// Its command number ([`shared_command`]).
    pub cmd: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Params;
    use crate::device::Op;
    use std::sync::mpsc;
    use std::time::Duration;

    const SECOND: u64 = 1_000_000_000;

    fn ext(page: u64, pages: u64) -> Extent {
        Extent {
            offset: page * 4096,
            len: pages * 4096,
        }
    }

    /// nvme-tlc with its first `pages` pages written, sequentially.
    fn filled(pages: u64) -> Device {
        let mut d = Device::new(&Params::parse("nvme-tlc,size=256m").unwrap());
        for i in (0..pages).step_by(32) {
            d.submit(0, Op::Write, &[ext(i, 32)]).unwrap();
        }
        d
    }

    /// The die logical page `lpn` is on.
    fn die_of(d: &Device, lpn: u64) -> usize {
        let ppn = d.ftl.as_ref().unwrap().mapping(lpn).unwrap();
        d.timing.locate(ppn).0
    }

    #[test]
    fn a_read_costs_the_same_shared_or_alone() {
        // The same commands at the same times on two copies of a device:
        // reads through submit on one, through read_shared on the other,
        // writes (which suspend and are moved by the reads) on both. Every
        // completion, the dies' busy time and the NAND counts agree.
        let mut alone = filled(4096);
        let mut shared = alone.clone();
        let (mut t, mut x) = (SECOND, 0x2545_f491_4f6c_dd1du64);
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += x % 20_000;
            let pages = [1, 1, 2, 4, 16][(x >> 20) as usize % 5];
            let e = ext((x >> 32) % (4096 - 16), pages);
            let (a, b) = if x % 10 < 3 {
                let w = ext(e.offset / 4096, 1);
                (
                    alone.submit(t, Op::Write, &[w]),
                    shared.submit(t, Op::Write, &[w]),
                )
            } else {
                (
                    alone.submit(t, Op::Read, &[e]),
                    Ok(shared.read_shared(t, &e)),
                )
            };
            assert_eq!(a.unwrap(), b.unwrap(), "command {i} at {t}");
        }
        assert_eq!(alone.totals().die_busy_ns, shared.totals().die_busy_ns);
        let n = shared.nand_totals();
        assert_eq!(alone.nand_totals(), n);
        assert!(n.suspensions > 0 && n.reads_ahead > 0, "{n:?}");
    }

    #[test]
    fn a_batch_of_reads_costs_what_the_reads_cost_one_after_another() {
        // Batches of 1 to 32 reads (some of several pages) between writes,
        // on two copies of a device: one read at a time on one, the
        // batches through read_shared_batch on the other. Every completion,
        // the dies' busy time and the NAND counts agree.
        let mut one = filled(4096);
        let mut batched = one.clone();
        let (mut t, mut x) = (SECOND, 0x9e37_79b9_7f4a_7c15u64);
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut seq = 0;
        for round in 0..2_000 {
            let n = (next() % 32 + 1) as usize;
            let reads: Vec<SharedRead> = (0..n)
                .map(|_| {
                    let r = next();
                    t += r % 3_000;
                    seq += 1;
                    let pages = [1, 1, 1, 2, 4][(r >> 20) as usize % 5];
                    let extent = ext((r >> 32) % (4096 - 4), pages);
                    let cmd = shared_command(3, seq);
                    SharedRead { t, extent, cmd }
                })
                .collect();
            let want: Vec<u64> = (reads.iter())
                .map(|r| one.read_shared_as(r.t, &r.extent, r.cmd))
                .collect();
            let mut got = vec![0; n];
            batched.read_shared_batch(&reads, &mut got);
            assert_eq!(got, want, "batch {round} of {n}");
            t += next() % 20_000;
            let w = ext(next() % 4096, 1);
            let (a, b) = (
                one.submit(t, Op::Write, &[w]),
                batched.submit(t, Op::Write, &[w]),
            );
            assert_eq!(a.unwrap(), b.unwrap(), "the write after batch {round}");
        }
        assert_eq!(one.totals().die_busy_ns, batched.totals().die_busy_ns);
        let n = batched.nand_totals();
        assert_eq!(one.nand_totals(), n);
        assert!(n.suspensions > 0, "{n:?}");
    }

    #[test]
    fn threads_reading_one_plane_never_share_its_time() {
        // 4 threads × 250 reads of one page, all submitted at the same
        // time: the plane reads them one after another, each taking the
        // array read and the channel transfer (40.4 µs), whichever thread
        // reserved first. Were the die's schedule not under its lock, two
        // reads would start at the same time.
        let d = filled(32);
        let step = d.p.read_ns + d.chan_ns_per_page;
        assert!(d.reads_shareable());
        let mut done: Vec<u64> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..250)
                            .map(|_| d.read_shared(SECOND, &ext(0, 1)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        done.sort_unstable();
        for w in done.windows(2) {
            assert!(w[1] - w[0] >= step, "{} then {}", w[0], w[1]);
        }
        assert_eq!(
            d.totals().die_busy_ns.iter().sum::<u64>(),
            1000 * (step / 4)
        );
    }

    #[test]
    fn unmapped_reads_from_many_threads_book_the_controller_exactly() {
        // Reads of unwritten pages take only the link and the controller
        // (4 cores × 4 µs): 4 threads × 500 of them at once complete at
        // the times 2,000 reads in a row do, whoever got which core.
        let d = Device::new(&Params::parse("nvme-tlc,size=256m").unwrap());
        let mut one = d.clone();
        let mut expect: Vec<u64> = (0..2000)
            .map(|i| one.submit(0, Op::Read, &[ext(i, 1)]).unwrap())
            .collect();
        let mut done: Vec<u64> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4u64)
                .map(|k| {
                    let d = &d;
                    s.spawn(move || {
                        (0..500)
                            .map(|i| d.read_shared(0, &ext(k * 500 + i, 1)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        expect.sort_unstable();
        done.sort_unstable();
        // The link and the controller are locked one after the other, so a
        // command that took the link a command's transfer later may take a
        // core first (module docs): each completion is exact to within one
        // command's time on the link.
        let slack = d.link_ns(d.command_bytes(1));
        assert_eq!(done.len(), expect.len());
        for (i, (a, b)) in done.iter().zip(&expect).enumerate() {
            assert!(
                a.abs_diff(*b) <= slack,
                "read {i}: {a} against {b} (slack {slack} ns)"
            );
        }
    }

    #[test]
    fn a_read_on_one_die_does_not_wait_for_another_dies_lock() {
        let d = filled(64);
        let (a, b) = (0, 1);
        let (da, db) = (die_of(&d, a), die_of(&d, b));
        assert_ne!(da, db, "consecutive pages are striped over dies");
        std::thread::scope(|s| {
            let held = d.nand[da].lock();
            let (tx, rx) = mpsc::channel();
            let tx2 = tx.clone();
            let d = &d;
            s.spawn(move || tx.send(("b", d.read_shared(SECOND, &ext(b, 1)))).unwrap());
            let got = rx.recv_timeout(Duration::from_secs(60));
            assert_eq!(
                got.map(|(w, _)| w),
                Ok("b"),
                "die {db} is free: the read goes on"
            );
            s.spawn(move || tx2.send(("a", d.read_shared(SECOND, &ext(a, 1)))).unwrap());
            assert!(
                rx.recv_timeout(Duration::from_millis(100)).is_err(),
                "die {da} is held: its read waits"
            );
            drop(held);
            let got = rx.recv_timeout(Duration::from_secs(60));
            assert_eq!(got.map(|(w, _)| w), Ok("a"));
        });
    }

    #[test]
    fn reads_hold_the_model_shared_and_writes_alone() {
        use crate::shared::SharedDevice;
        use ssdready_io::clock::Clock;
        let p = Params::parse("nvme-tlc,size=256m,nocopy=1").unwrap();
        let dev = SharedDevice::new(p, Clock::calibrate()).unwrap();
        let (q, counts) = dev.queues.attach();
        let held = dev.device.read().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            let (dev, counts, tx) = (&dev, &counts, tx);
            s.spawn(move || {
                let r = dev.submit_faulty((q, counts), 0, Op::Read, ext(0, 1));
                tx.send(("read", r.is_ok())).unwrap();
                let w = dev.submit_faulty((q, counts), 0, Op::Write, ext(0, 1));
                tx.send(("write", w.is_ok())).unwrap();
            });
            let got = rx.recv_timeout(Duration::from_secs(60));
            assert_eq!(
                got,
                Ok(("read", true)),
                "a read goes on beside another reader"
            );
            assert!(
                rx.recv_timeout(Duration::from_millis(100)).is_err(),
                "a write waits for the readers"
            );
            drop(held);
            assert_eq!(
                rx.recv_timeout(Duration::from_secs(60)),
                Ok(("write", true))
            );
        });
        let dev_now = dev.device.read().unwrap();
        assert_eq!(
            dev.totals(&dev_now).commands,
            2,
            "the shared read is counted"
        );
    }
}
