//! Asynchronous temporal merge in real time (module docs of [`super`]).
//!
//! Requests join one queue (behind a lock) and their threads return at
//! once. One dispatcher thread per layer sleeps while the queue is empty;
//! given work, it polls the clock until the oldest request has waited the
//! window or the queue holds a full command of its kind, takes the device's
//! interface, then takes that kind's requests in arrival order up to the
//! limits (leaving the others queued; those that arrived while it waited for
//! the interface go too), submits, polls until the modelled completion,
//! gives the interface back and puts each completion in its thread's
//! [`Inbox`]. A thread waits on its inbox as its completion mode
//! says: spinning (`poll`) or sleeping until the dispatcher wakes it.
//!
//! The dispatcher is started with the layer and stopped (and joined) when
//! the last engine using the layer is dropped; requests still queued then
//! belong to no one and are dropped. Its CPU is the process's, not a
//! worker's.

use super::basics::{kind, lock, MergeConfig, Served};
use super::stm::poll_pause;
use crate::config::CompletionMode;
use crate::device::{Extent, Op};
use crate::iface::Wait;
use crate::shared::SharedDevice;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the idle dispatcher sleeps before looking at its stop flag.
const IDLE_SLICE: Duration = Duration::from_millis(20);

/// An asynchronous temporal merge layer of one device.
pub struct Atm {
    shared: Arc<Shared>,
    dispatcher: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    cfg: MergeConfig,
    dev: Arc<SharedDevice>,
    queue: Mutex<VecDeque<Waiting>>,
    /// Requests queued, per kind (read without the lock while polling).
    queued: [AtomicUsize; 4],
    arrived: Condvar,
    stop: AtomicBool,
}

/// A request in the queue.
struct Waiting {
    op: Op,
    ext: Extent,
    slot: u32,
    entered: u64,
    inbox: Arc<Inbox>,
}

/// A completion handed back to its thread.
pub struct Delivery {
    pub slot: u32,
    /// Bytes, or why the model failed.
    pub result: Result<i64, String>,
    pub served: Served,
}

/// One thread's completions from the dispatcher.
#[derive(Default)]
pub struct Inbox {
    done: Mutex<Vec<Delivery>>,
    count: AtomicUsize,
    ready: Condvar,
}

impl Inbox {
    /// Everything delivered so far.
    pub fn take(&self) -> Vec<Delivery> {
        if self.count.load(Ordering::Acquire) == 0 {
            return Vec::new();
        }
        let mut d = lock(&self.done);
        self.count.store(0, Ordering::Release);
        std::mem::take(&mut *d)
    }

    /// Wait up to `max_ns` for a delivery: spinning with `completion=poll`,
    /// sleeping otherwise.
    pub fn wait(&self, mode: CompletionMode, max_ns: u64) {
        match mode {
            CompletionMode::Poll => {
                let t = std::time::Instant::now();
                while self.count.load(Ordering::Acquire) == 0
                    && (t.elapsed().as_nanos() as u64) < max_ns
                {
                    std::hint::spin_loop();
                }
            }
            CompletionMode::Irq | CompletionMode::Hybrid => {
                let d = lock(&self.done);
                if d.is_empty() {
                    let _ = self.ready.wait_timeout(d, Duration::from_nanos(max_ns));
                }
            }
        }
    }

    fn deliver(&self, batch: impl Iterator<Item = Delivery>) {
        let mut d = lock(&self.done);
        d.extend(batch);
        self.count.store(d.len(), Ordering::Release);
        drop(d);
        self.ready.notify_one();
    }
}

impl Atm {
    /// A layer and its dispatcher thread.
    pub fn new(cfg: MergeConfig, dev: Arc<SharedDevice>) -> Atm {
        let shared = Arc::new(Shared {
            cfg,
            dev,
            queue: Mutex::default(),
            queued: Default::default(),
            arrived: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let s = shared.clone();
        let dispatcher = std::thread::Builder::new()
            .name("ssdready-atm".into())
            .spawn(move || s.dispatch_loop())
            .ok();
        Atm {
            shared,
            dispatcher: Mutex::new(dispatcher),
        }
    }

    /// Queue one request; its completion will be put in `inbox`.
    pub fn enqueue(&self, op: Op, ext: Extent, slot: u32, inbox: &Arc<Inbox>) {
        let s = &self.shared;
        let entered = s.dev.clock.now();
        let mut q = lock(&s.queue);
        q.push_back(Waiting {
            op,
            ext,
            slot,
            entered,
            inbox: inbox.clone(),
        });
        s.queued[kind(op)].fetch_add(1, Ordering::Release);
        let first = q.len() == 1;
        drop(q);
        if first {
            s.arrived.notify_one();
        }
    }
}

impl Drop for Atm {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        {
            let _q = lock(&self.shared.queue);
            self.shared.arrived.notify_all();
        }
        if let Some(t) = lock(&self.dispatcher).take() {
            let _ = t.join();
        }
    }
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    fn dispatch_loop(&self) {
        while let Some((op, oldest)) = self.next_work() {
            let window_end = oldest.saturating_add(self.cfg.window_ns);
            let clock = self.dev.clock;
            // Poll until the oldest has waited the window or a command is full.
            let mut spins = 0u32;
            while clock.now() < window_end
                && !self
                    .cfg
                    .full(self.queued[kind(op)].load(Ordering::Acquire), 0)
                && !self.stopping()
            {
                poll_pause(&mut spins);
            }
            if self.stopping() {
                return;
            }
            self.dev.iface.acquire(Wait::Spin);
            let taken = self.take(op);
            if taken.is_empty() {
                self.dev.iface.release();
            } else {
                self.issue(op, taken);
            }
        }
    }

    /// Sleep until the queue has a request (or the layer stops); the kind
    /// and entry time of the oldest.
    fn next_work(&self) -> Option<(Op, u64)> {
        let mut q = lock(&self.queue);
        loop {
            if self.stopping() {
                return None;
            }
            if let Some(w) = q.front() {
                return Some((w.op, w.entered));
            }
            q = self
                .arrived
                .wait_timeout(q, IDLE_SLICE)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Take requests of kind `op` in arrival order, up to the limits.
    fn take(&self, op: Op) -> Vec<Waiting> {
        let mut q = lock(&self.queue);
        let (mut taken, mut bytes) = (Vec::new(), 0u64);
        let mut i = 0;
        while i < q.len() {
            let fits = taken.is_empty() || self.cfg.fits(taken.len(), bytes, q[i].ext.len);
            if q[i].op == op && fits {
                let w = q.remove(i).expect("index in range");
                bytes = bytes.saturating_add(w.ext.len);
                taken.push(w);
            } else if q[i].op == op {
                break;
            } else {
                i += 1;
            }
        }
        self.queued[kind(op)].fetch_sub(taken.len(), Ordering::Release);
        taken
    }

    /// Issue one command (the interface is held), poll for it, give the
    /// interface back, deliver.
    fn issue(&self, op: Op, taken: Vec<Waiting>) {
        let clock = self.dev.clock;
        let closed = clock.now();
        let extents: Vec<Extent> = taken.iter().map(|w| w.ext).collect();
        let issued = clock.now();
        let result = self.dev.submit(issued, op, &extents);
        if let Ok(done) = result {
            while clock.now() < done && !self.stopping() {
                std::hint::spin_loop();
            }
        }
        self.dev.iface.release();
        let n = taken.len();
        let outcome = match &result {
            Ok(d) => Ok(*d),
            Err(e) => Err(self
                .dev
                .failure()
                .map_or_else(|| e.to_string(), str::to_string)),
        };
        // Deliver per thread, in one lock each.
        let mut taken = taken;
        let mut first = true;
        while !taken.is_empty() {
            let inbox = taken[0].inbox.clone();
            let (mine, rest): (Vec<_>, Vec<_>) = taken
                .into_iter()
                .partition(|w| Arc::ptr_eq(&w.inbox, &inbox));
            taken = rest;
            let outcome = &outcome;
            inbox.deliver(mine.into_iter().map(|w| {
                let leader_of = first.then_some(n);
                first = false;
                Delivery {
                    slot: w.slot,
                    result: outcome.clone().map(|_| w.ext.len as i64),
                    served: Served {
                        entered: w.entered,
                        closed,
                        issued,
                        done: *outcome.as_ref().unwrap_or(&issued),
                        leader_of,
                    },
                }
            }));
        }
    }
}
