//! The FUSE transport over io_uring: requests arrive as completions on a
//! ring and replies leave as submissions on it, with no `read(2)` or
//! `write(2)` per request ([`super::fuse_uring`] has the protocol).
//!
//! * **Queues.** The kernel wants a queue for every possible CPU and sends
//!   a request to the queue of the CPU it was issued on. Each queue gets as
//!   many entries as the drive's queue depth; a serving thread (one per two
//!   CPUs, as over `/dev/fuse`) owns one ring holding the entries of its
//!   queues, so one wait covers them all.
//! * **A request** is the completion of one entry's command: it is handled
//!   as over `/dev/fuse` ([`super::fuse_handle::Handler`]: submitted to the
//!   model at its arrival, its data moved, its reply written) and its reply
//!   waits in the thread's queue for the modelled completion.
//! * **One system call per wake-up.** Everything due is committed
//!   (`COMMIT_AND_FETCH`: the reply, and the entry's next request asked
//!   for) and the thread waits for the next request or the next
//!   completion in the same `io_uring_enter`. The completion's time is an
//!   absolute io_uring timeout kept in the ring, set a learnt overshoot
//!   before it ([`super::due::Early`]) and moved only when the earliest
//!   completion changes: a wait arms no timer of its own, and an arrival
//!   does not touch it. The overshoot's remainder is spun (a few µs); no
//!   other spinning: between completions the thread sleeps, leaving its
//!   CPU to the platform it serves.
//! * **Arrivals held at depth** (`SSDREADY_EMU_HOLD=PERCENT`; off by
//!   default: it saved no measurable CPU here, see
//!   [`super::due::HOLD_SHARE`]). When that wake-up is near — within a
//!   share of the mean device time ([`super::due::HoldPolicy`]) — the wait
//!   asks for more completions than can arrive (`wait_nr`), so requests
//!   arriving meanwhile do not bring the thread back to user space: the
//!   wait ends for that many completions, or at its own limit, set to the
//!   timer's time (the ring's timer alone did not end it while requests
//!   arrived). The requests found at the wake-up are handled then, held by
//!   at most the time since the thread last looked at its ring, which the
//!   stamps count as lateness ([`super::stamps::Stamps::hold`]). With
//!   nothing pending (queue depth 1) an arrival ends the wait at once.
//! * **Stamps.** Arrival, modelled completion and the commit's push are
//!   stamped as over `/dev/fuse`; the reply's kernel work runs inside the
//!   next `io_uring_enter`, together with the wait, so its time is not
//!   stamped apart (reply 0).

use super::due::{self, DeviceMean, Early, HoldPolicy};
use super::error::ServeError;
use super::fuse_handle::{Flow, Handler, Shared, MAX_IO};
use super::fuse_proto::{self as p, InHeader};
use super::fuse_uring::{self as u};
use ssdready_io::fuse_uring::{Ring, FIRED};
use ssdready_io::kdev;
use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest single wait (a stop is seen within it).
const SLICE: Duration = Duration::from_millis(20);
/// How long the registration waits for the kernel to finish INIT.
const INIT_LIMIT: Duration = Duration::from_secs(5);

/// What one serving thread serves: queues `qids`, `per_queue` entries each.
pub struct Plan {
    pub qids: Vec<u16>,
    pub per_queue: usize,
}

/// Split `queues` queues among `threads` threads (queue q to thread
/// q mod threads).
pub fn plans(queues: usize, threads: usize, per_queue: usize) -> Vec<Plan> {
    let threads = threads.clamp(1, queues.max(1));
    (0..threads)
        .map(|t| Plan {
            qids: (0..queues)
                .filter(|q| q % threads == t)
                .map(|q| q as u16)
                .collect(),
            per_queue,
        })
        .collect()
}

/// Serve `plan` on a ring of its own over connection `fuse` until the
/// connection ends or the drive stops; `ready` hears once whether every
/// entry was registered. Returns why serving ended.
pub fn serve(
    fuse: Arc<File>,
    sh: Arc<Shared>,
    plan: Plan,
    ready: Sender<Result<(), ServeError>>,
) -> String {
    let _ = kdev::set_timer_slack(1);
    if kdev::set_fifo(1).is_ok() {
        sh.stamps.realtime.fetch_add(1, Ordering::Relaxed);
    }
    if let Ok(mut t) = sh.stamps.tids.lock() {
        t.push(kdev::thread_id());
    }
    let entries = plan.qids.len() * plan.per_queue;
    let ring = match Ring::new(fuse, entries, MAX_IO) {
        Ok(r) => r,
        Err(err) => {
            let why = ServeError::MakeRing { entries, err };
            let line = why.to_string();
            let _ = ready.send(Err(why));
            return line;
        }
    };
    let mut s = Server {
        ring,
        h: Handler::new(sh.clone()),
        sh,
        plan,
        early: Early::default(),
        hold: HoldPolicy::from_env(),
        device: DeviceMean::default(),
        held_since: None,
        armed: None,
        done: Vec::with_capacity(entries),
        dead: 0,
    };
    match s.register_all() {
        Ok(()) => {
            let _ = ready.send(Ok(()));
        }
        Err(why) => {
            let line = why.to_string();
            let _ = ready.send(Err(why));
            return line;
        }
    }
    s.run()
}

struct Server {
    ring: Ring,
    h: Handler,
    sh: Arc<Shared>,
    plan: Plan,
    early: Early,
    hold: HoldPolicy,
    device: DeviceMean,
    /// When a wait that holds arrivals began (clock ns).
    held_since: Option<u64>,
    /// The time the ring's timer is set for (clock ns), if it is.
    armed: Option<u64>,
    /// Completions reaped: (entry, result).
    done: Vec<(usize, i32)>,
    /// Entries the kernel ended (the connection is gone).
    dead: usize,
}

impl Server {
    fn qid(&self, e: usize) -> u16 {
        self.plan.qids[e / self.plan.per_queue]
    }

    fn register(&mut self, e: usize) -> Result<(), ServeError> {
        let cmd = u::cmd_req(0, self.qid(e));
        self.ring
            .push(e, u::CMD_REGISTER, cmd, true)
            .map_err(|err| ServeError::RegisterEntry { err })
    }

    /// Register every entry, once the kernel has taken the INIT reply
    /// (before, it answers EAGAIN). A request may already arrive on an
    /// entry meanwhile: it stays in `done` for the first turn of the loop.
    fn register_all(&mut self) -> Result<(), ServeError> {
        let t0 = Instant::now();
        loop {
            let neg = self.sh.negotiated.lock().ok().and_then(|g| *g);
            match neg {
                Some(n) if n.io_uring => break,
                Some(_) => return Err(ServeError::UringRefused),
                None if t0.elapsed() > INIT_LIMIT => return Err(ServeError::NoInit),
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        let mut todo: Vec<usize> = (0..self.ring.entries()).collect();
        let mut arrived = Vec::new();
        while !todo.is_empty() {
            for e in std::mem::take(&mut todo) {
                self.register(e)?;
            }
            self.ring
                .submit_and_wait(0, None)
                .map_err(|err| ServeError::RegisterRing { err })?;
            std::thread::sleep(Duration::from_millis(2));
            self.done.clear();
            self.ring.reap(&mut self.done);
            for &(e, res) in &self.done {
                match res {
                    r if r == -libc::EAGAIN && t0.elapsed() < INIT_LIMIT => todo.push(e),
                    r if r < 0 => {
                        return Err(ServeError::EntryRefused {
                            err: std::io::Error::from_raw_os_error(-r),
                        })
                    }
                    _ => arrived.push((e, res)),
                }
            }
        }
        self.done = arrived;
        Ok(())
    }

    fn run(&mut self) -> String {
        let clock = self.sh.dev.clock;
        let mut stopping: Option<Instant> = None;
        loop {
            if let Some(why) = self.take_done() {
                return why;
            }
            if let Err(why) = self.answer_due() {
                return why.to_string();
            }
            let stop = self.sh.stop.load(Ordering::Relaxed);
            if stop {
                let since = *stopping.get_or_insert_with(Instant::now);
                let quiet = self.dead == self.ring.entries() || since.elapsed() > SLICE * 25;
                if self.h.due.is_empty() && quiet {
                    return "stopped".into();
                }
            }
            // The timer set a learnt overshoot before the next completion
            // (clock ns, then CLOCK_MONOTONIC ns for the ring).
            let target = self.h.due.next_due().map(|d| self.early.wake_for(d));
            let now = clock.now();
            let mono = target.map(|t| {
                let left = t.saturating_sub(now);
                ssdready_io::clock::posix_clock_ns(libc::CLOCK_MONOTONIC) + left
            });
            if target != self.armed {
                if let Err(e) = self.ring.set_timer(mono) {
                    return format!("setting the FUSE ring's timer: {e}");
                }
                self.armed = target;
            }
            // One system call: the commits pushed go, and the thread sleeps
            // until a request or the timer (while stopping, at most a slice:
            // the connection's end may not come) — or, when the timer is
            // near, until the timer alone, holding what arrives meanwhile.
            let mut want = 1;
            if !stop && !self.ring.ready() {
                let never = self.ring.entries() + 1;
                want = due::wait_nr(self.hold, now, target, self.device.ns(), never);
            }
            let limit = match target {
                _ if stop => Some(SLICE),
                // The wait's own limit at the timer's time: the ring's timer
                // ends such a wait on a quiet ring (io's unit test), but
                // while requests arrived it did not on the development
                // machine (Linux 6.18: most waits ran to their limit).
                Some(t) if want > 1 => Some(Duration::from_nanos(t - now)),
                _ => None,
            };
            self.held_since = (want > 1).then_some(now);
            if let Err(e) = self.ring.submit_and_wait(want, limit) {
                return format!("waiting on the FUSE ring: {e}");
            }
        }
    }

    /// Handle every completion reaped: a request arrived on its entry, or
    /// the kernel ended the entry. Returns why serving must end, if so.
    fn take_done(&mut self) -> Option<String> {
        let mut done = std::mem::take(&mut self.done);
        self.ring.reap(&mut done);
        // Requests found after a holding wait waited up to its length.
        let held = self
            .held_since
            .take()
            .map(|t| self.sh.dev.clock.now().saturating_sub(t));
        for &(e, res) in &done {
            if e == FIRED {
                // How late the timer fired teaches the early wake.
                if let Some(t) = self.armed.take() {
                    self.early.learn(self.sh.dev.clock.now().saturating_sub(t));
                }
                continue;
            }
            match res {
                0.. => {
                    if let Some(ns) = held {
                        self.sh.stamps.hold(ns);
                    }
                    if let Err(why) = self.arrive(e) {
                        return Some(why.to_string());
                    }
                }
                r if r == -libc::EAGAIN => {
                    if let Err(why) = self.register(e) {
                        return Some(why.to_string());
                    }
                }
                _ => self.dead += 1,
            }
        }
        done.clear();
        self.done = done;
        if self.dead >= self.ring.entries() && !self.sh.stop.load(Ordering::Relaxed) {
            return Some("the kernel ended the FUSE connection".into());
        }
        None
    }

    /// A request arrived on entry `e`: lay it out as `/dev/fuse` would,
    /// handle it, and commit its reply now or queue it for its completion.
    fn arrive(&mut self, e: usize) -> Result<(), ServeError> {
        let arrived = self.sh.dev.clock.now();
        let (hdr, payload) = self.ring.buffers(e);
        let (_, psz) = u::request_of(hdr);
        let Some(mut h) = InHeader::fields(&hdr[u::IN_OUT..u::IN_OUT + p::IN_HEADER]) else {
            return Err(ServeError::Malformed);
        };
        let opsz = u::op_in_size(h.opcode);
        let n = p::IN_HEADER + opsz + psz;
        let inbuf = &mut self.h.inbuf;
        if n > inbuf.len() || psz > payload.len() {
            return Err(ServeError::BeyondBuffers { bytes: n });
        }
        inbuf[..p::IN_HEADER].copy_from_slice(&hdr[u::IN_OUT..u::IN_OUT + p::IN_HEADER]);
        inbuf[..4].copy_from_slice(&(n as u32).to_le_bytes());
        h.len = n as u32;
        inbuf[p::IN_HEADER..p::IN_HEADER + opsz].copy_from_slice(&hdr[u::OP_IN..u::OP_IN + opsz]);
        inbuf[p::IN_HEADER + opsz..n].copy_from_slice(&payload[..psz]);
        match self.h.take(h, n, arrived, e) {
            Flow::Queued => Ok(()),
            Flow::Reply { error, body } => {
                let (hdr, payload) = self.ring.buffers(e);
                let body = if error == 0 { body } else { 0 };
                payload[..body].copy_from_slice(&self.h.out[p::OUT_HEADER..p::OUT_HEADER + body]);
                u::put_reply(hdr, h.unique, error, body);
                self.commit(e, h.unique)
            }
            // No request without a reply comes through the ring (FORGET
            // and INTERRUPT stay on /dev/fuse); return the entry anyway.
            Flow::Silent => {
                let (hdr, _) = self.ring.buffers(e);
                u::put_reply(hdr, h.unique, -libc::ENOSYS, 0);
                self.commit(e, h.unique)
            }
            Flow::Stop => {
                let (hdr, _) = self.ring.buffers(e);
                u::put_reply(hdr, h.unique, 0, 0);
                self.commit(e, h.unique)
            }
        }
    }

    fn commit(&mut self, e: usize, unique: u64) -> Result<(), ServeError> {
        let cmd = u::cmd_req(unique, self.qid(e));
        self.ring
            .push(e, u::CMD_COMMIT_AND_FETCH, cmd, false)
            .map_err(|err| ServeError::CommitReply { err })
    }

    /// Commit every reply whose modelled completion has come (all of them
    /// when stopping), spinning for one due within the timer's learnt
    /// overshoot; the commits go with the next submission.
    fn answer_due(&mut self) -> Result<(), ServeError> {
        let clock = self.sh.dev.clock;
        let mut now = clock.now();
        if self.sh.stop.load(Ordering::Relaxed) {
            now = u64::MAX;
        } else if let Some(next) = self.h.due.next_due() {
            if next > now && next - now <= self.early.ns() {
                while clock.now() < next {
                    std::hint::spin_loop();
                }
                let spun_from = now;
                now = clock.now();
                self.sh.stamps.spun(now - spun_from);
            }
        }
        while let Some(r) = self.h.due.pop_due(now) {
            let start = clock.now();
            let e = r.slot;
            let (hdr, payload) = self.ring.buffers(e);
            let body = if r.error == 0 {
                r.len.saturating_sub(p::OUT_HEADER)
            } else {
                0
            };
            payload[..body].copy_from_slice(&r.buf[p::OUT_HEADER..p::OUT_HEADER + body]);
            u::put_reply(hdr, r.unique, r.error, body);
            self.commit(e, r.unique)?;
            self.sh
                .stamps
                .served(Some((r.arrived, r.due)), start, start);
            self.device.learn(r.due.saturating_sub(r.arrived));
            self.h.due.recycle(r.buf);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_queue_is_served_by_exactly_one_thread() {
        let p = plans(4, 2, 32);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].qids, vec![0, 2]);
        assert_eq!(p[1].qids, vec![1, 3]);
        let one = plans(2, 1, 8);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].qids, vec![0, 1]);
        assert_eq!(one[0].per_queue, 8);
        // More threads than queues: one thread a queue.
        assert_eq!(plans(2, 8, 1).len(), 2);
    }
}
