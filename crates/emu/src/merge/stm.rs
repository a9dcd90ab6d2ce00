//! Synchronous temporal merge in real time (module docs of [`super`]).
//!
//! One *gathering* command per kind of request (read, write, trim) at a
//! time, behind one lock. A thread that finds a gathering command it fits
//! in joins it and sleeps on the command's condition variable; otherwise it
//! opens one and is its winner: it polls until the command fills, or its
//! window has ended *and* the device's interface is free (requests that
//! arrive while the device is busy join the command waiting for it, so a
//! request waits at most the window plus the command ahead), closes it,
//! submits, polls until the modelled completion, gives the interface back
//! and wakes the losers. A request that does not fit a gathering command
//! (its bytes would pass `merge_max_bytes`) closes it and opens the next.
//! While it waits, the winner yields its CPU now and then, so that on a
//! machine with fewer CPUs than threads the others can still arrive.
//!
//! Lock order: the gathering slots, then a command's state.

use super::basics::{kind, lock, MergeConfig, Served};
use crate::device::{Extent, Op};
use crate::iface::Wait;
use crate::shared::{failed, SharedDevice};
use ssdready_io::EngineError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A synchronous temporal merge layer of one device.
pub struct Stm {
    cfg: MergeConfig,
    dev: Arc<SharedDevice>,
    /// The command gathering requests, per kind.
    gathering: Mutex<[Option<Arc<Command>>; 4]>,
    /// Threads sharing the layer (a command holding one request of each is full).
    members: AtomicUsize,
}

/// A command being gathered, issued or done.
struct Command {
    op: Op,
    /// Set when it takes no more requests (the winner stops polling).
    closed: AtomicBool,
    state: Mutex<CommandState>,
    done: Condvar,
}

#[derive(Default)]
struct CommandState {
    extents: Vec<Extent>,
    bytes: u64,
    closed_at: u64,
    issued_at: u64,
    /// The modelled completion, or why the model failed.
    result: Option<Result<u64, String>>,
}

impl Stm {
    /// A layer with no members yet.
    pub fn new(cfg: MergeConfig, dev: Arc<SharedDevice>) -> Stm {
        Stm {
            cfg,
            dev,
            gathering: Mutex::default(),
            members: AtomicUsize::new(0),
        }
    }

    /// A thread starts using the layer.
    pub fn join(&self) {
        self.members.fetch_add(1, Ordering::SeqCst);
    }

    /// A thread stops using the layer.
    pub fn leave(&self) {
        self.members.fetch_sub(1, Ordering::SeqCst);
    }

    fn full(&self, st: &CommandState) -> bool {
        self.cfg.full(st.extents.len(), st.bytes)
            || st.extents.len() >= self.members.load(Ordering::SeqCst)
    }

    /// Serve one request: as a loser, sleep until its command is done; as
    /// the winner, gather, issue and poll (module docs). Returns when the
    /// command has completed.
    pub fn submit(&self, op: Op, ext: Extent) -> Result<Served, EngineError> {
        let clock = self.dev.clock;
        let entered = clock.now();
        let k = kind(op);
        let mut gathering = lock(&self.gathering);
        if let Some(cmd) = gathering[k].clone() {
            let mut st = lock(&cmd.state);
            if self.cfg.fits(st.extents.len(), st.bytes, ext.len) {
                st.extents.push(ext);
                st.bytes = st.bytes.saturating_add(ext.len);
                if self.full(&st) {
                    st.closed_at = clock.now();
                    cmd.closed.store(true, Ordering::Release);
                    gathering[k] = None;
                }
                drop(gathering);
                return self.lose(&cmd, st, entered);
            }
            // It cannot take this request: it closes, this one opens the next.
            st.closed_at = clock.now();
            cmd.closed.store(true, Ordering::Release);
            gathering[k] = None;
        }
        let cmd = Arc::new(Command {
            op,
            closed: AtomicBool::new(false),
            state: Mutex::new(CommandState {
                extents: vec![ext],
                bytes: ext.len,
                ..CommandState::default()
            }),
            done: Condvar::new(),
        });
        if self.full(&lock(&cmd.state)) {
            lock(&cmd.state).closed_at = entered;
            cmd.closed.store(true, Ordering::Release);
        } else {
            gathering[k] = Some(cmd.clone());
        }
        drop(gathering);
        self.win(&cmd, entered)
    }

    /// A loser sleeps until the winner posts the command's result.
    fn lose(
        &self,
        cmd: &Command,
        mut st: std::sync::MutexGuard<'_, CommandState>,
        entered: u64,
    ) -> Result<Served, EngineError> {
        loop {
            if let Some(r) = &st.result {
                let done = r.clone().map_err(|why| failed(&why))?;
                return Ok(Served {
                    entered,
                    closed: st.closed_at,
                    issued: st.issued_at,
                    done,
                    leader_of: None,
                });
            }
            // The timeout only guards against a missed wake-up.
            st = cmd
                .done
                .wait_timeout(st, Duration::from_millis(10))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The winner: poll until the window ends or the command fills, close
    /// it, issue it with the interface held, poll for its completion, wake
    /// the losers.
    fn win(&self, cmd: &Arc<Command>, entered: u64) -> Result<Served, EngineError> {
        let clock = self.dev.clock;
        let window_end = entered.saturating_add(self.cfg.window_ns);
        let mut permit = false;
        let mut spins = 0u32;
        while !cmd.closed.load(Ordering::Acquire) {
            if clock.now() >= window_end && self.dev.iface.try_acquire() {
                permit = true;
                let mut gathering = lock(&self.gathering);
                let k = kind(cmd.op);
                if gathering[k].as_ref().is_some_and(|g| Arc::ptr_eq(g, cmd)) {
                    gathering[k] = None;
                }
                let mut st = lock(&cmd.state);
                if !cmd.closed.load(Ordering::Acquire) {
                    st.closed_at = clock.now();
                    cmd.closed.store(true, Ordering::Release);
                }
                break;
            }
            poll_pause(&mut spins);
        }
        let (extents, closed_at) = {
            let st = lock(&cmd.state);
            (st.extents.clone(), st.closed_at)
        };
        if !permit {
            self.dev.iface.acquire(Wait::Spin);
        }
        let issued = clock.now();
        let result = self.dev.submit(issued, cmd.op, &extents);
        if let Ok(done) = result {
            while clock.now() < done {
                std::hint::spin_loop();
            }
        }
        self.dev.iface.release();
        let posted = match &result {
            Ok(d) => Ok(*d),
            Err(e) => Err(self
                .dev
                .failure()
                .map_or_else(|| e.to_string(), str::to_string)),
        };
        {
            let mut st = lock(&cmd.state);
            st.issued_at = issued;
            st.result = Some(posted);
        }
        cmd.done.notify_all();
        let done = result?;
        Ok(Served {
            entered,
            closed: closed_at,
            issued,
            done,
            leader_of: Some(extents.len()),
        })
    }
}

/// One step of a polling wait that others must be able to join: spin, and
/// yield the CPU every 64 steps.
pub(crate) fn poll_pause(spins: &mut u32) {
    *spins = spins.wrapping_add(1);
    if spins.is_multiple_of(64) {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}
