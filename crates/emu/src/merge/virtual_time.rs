//! The host's command path in virtual time: how a request becomes a
//! command, when the command is issued and when its thread sees it done.
//! The virtual-time loop (`ssdready_run::virtual_time`) hands every
//! request here and gets back when each is seen ([`Seen`]) and the events
//! to schedule (a gathering command's window end, an ATM dispatch).
//!
//! The host model, all from the device's parameters:
//!
//! * a command is issued once an interface permit is free (`iface_depth`;
//!   a permit comes back when the host has *seen* its command complete),
//!   `host_cmd_ns` after it took the permit (the driver's submission path,
//!   once per command however many requests it carries);
//! * a plain command is seen `irq_ns` after it completes with
//!   `completion=irq` (interrupt, handler, softirq, wake-up), at once when
//!   polled (`poll`, and `hybrid`, which spins through short waits);
//! * STM: the winner polls (sees its command at once and gives the permit
//!   back); the losers sleep and run again `wake_ns` later;
//! * ATM: the dispatcher polls and gives the permit back at once; each
//!   requester sees its completion at once when it polls its inbox
//!   (`completion=poll`), `wake_ns` later when it sleeps on it.
//!
//! The gathering rules are those of the real-time layers ([`super::stm`],
//! [`super::atm`]): a command closes when it is full, or (STM) when it holds
//! a request of every thread sharing the layer, or once its window has ended
//! and an interface permit is free (it keeps gathering while it waits for
//! one). CPU is not modelled: threads that spin cost nothing here.

use super::basics::{kind, MergeConfig, Served};
use crate::config::{CompletionMode, Params};
use crate::device::{Device, Extent, Op};
use crate::ftl::FtlError;
use ssdready_core::spec::TemporalMerge;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A request's thread sees it done at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    pub worker: u32,
    pub slot: u32,
    pub at: u64,
    /// How a merged request was served (`None` for a plain command).
    pub served: Option<Served>,
}

/// What handling a request or an event produced.
#[derive(Debug, Default)]
pub struct Out {
    pub seen: Vec<Seen>,
    /// (time, event) to hand back to [`VirtualHost::event`] at that time.
    pub events: Vec<(u64, u32)>,
}

/// A request as it enters the host's path.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub worker: u32,
    pub slot: u32,
    pub op: Op,
    pub ext: Extent,
    /// When it enters (after the thread's own `host_ns`).
    pub at: u64,
}

/// The host side of one device in virtual time.
pub struct VirtualHost {
    /// When each interface permit comes back, earliest first (empty: no limit).
    iface_free: BinaryHeap<Reverse<u64>>,
    mode: CompletionMode,
    host_cmd_ns: u64,
    irq_ns: u64,
    wake_ns: u64,
    layers: Vec<Layer>,
}

enum Layer {
    Stm(VirtualStm),
    Atm(VirtualAtm),
}

struct VirtualStm {
    cfg: MergeConfig,
    members: usize,
    gathering: [Option<Gather>; 4],
}

struct VirtualAtm {
    cfg: MergeConfig,
    queue: VecDeque<Request>,
    queued: [usize; 4],
    /// When the dispatcher has seen its current command complete.
    busy_until: u64,
    /// The dispatch event scheduled (one at a time: a later one is only
    /// scheduled by the earlier one's firing, so events do not pile up).
    armed: Option<u64>,
}

impl VirtualAtm {
    /// Look at the queue again at `t` (unless an earlier look is due).
    fn arm(&mut self, t: u64, layer: usize, out: &mut Out) {
        if self.armed.is_none_or(|a| t < a) {
            self.armed = Some(t);
            out.events.push((t, event(layer, 0)));
        }
    }

    /// Take the oldest requests of `op` that fit one command, in order,
    /// up to the first of `op` that does not fit (others stay queued).
    #[inline]
    fn take(&mut self, op: Op) -> Vec<Request> {
        let (mut taken, mut bytes) = (Vec::new(), 0u64);
        let mut i = 0;
        while i < self.queue.len() {
            let r = self.queue[i];
            let fits = taken.is_empty() || self.cfg.fits(taken.len(), bytes, r.ext.len);
            if r.op == op && fits {
                self.queue.remove(i);
                bytes = bytes.saturating_add(r.ext.len);
                taken.push(r);
            } else if r.op == op {
                break;
            } else {
                i += 1;
            }
        }
        self.queued[kind(op)] -= taken.len();
        taken
    }
}

/// A command gathering requests (each entered at its `at`).
struct Gather {
    op: Op,
    opened: u64,
    reqs: Vec<Request>,
    bytes: u64,
}

impl VirtualHost {
    /// The host of a device with parameters `p`.
    pub fn new(p: &Params) -> VirtualHost {
        VirtualHost {
            iface_free: (0..p.iface_depth).map(|_| Reverse(0)).collect(),
            mode: p.completion,
            host_cmd_ns: p.host_cmd_ns,
            irq_ns: p.irq_ns,
            wake_ns: p.wake_ns,
            layers: Vec::new(),
        }
    }

    /// Add a merge layer shared by `members` threads; its id for
    /// [`VirtualHost::merged`].
    pub fn add_layer(&mut self, cfg: MergeConfig, members: usize) -> usize {
        self.layers.push(match cfg.mode {
            TemporalMerge::Atm => Layer::Atm(VirtualAtm {
                cfg,
                queue: VecDeque::new(),
                queued: [0; 4],
                busy_until: 0,
                armed: None,
            }),
            _ => Layer::Stm(VirtualStm {
                cfg,
                members,
                gathering: Default::default(),
            }),
        });
        self.layers.len() - 1
    }

    /// When an interface permit is next free (0: now, or no limit).
    fn permit_at(&self) -> u64 {
        self.iface_free.peek().map_or(0, |r| r.0)
    }

    /// Issue one command once the host is `ready`; the permit comes back
    /// `notice_ns` after it completes. Returns (when it took the permit,
    /// when it completes); it is submitted `host_cmd_ns` after the first.
    fn command(
        &mut self,
        dev: &mut Device,
        ready: u64,
        op: Op,
        extents: &[Extent],
        notice_ns: u64,
    ) -> Result<(u64, u64), FtlError> {
        let permit = self.iface_free.peek().map(|r| r.0);
        let start = permit.map_or(ready, |f| ready.max(f));
        let issued = start.saturating_add(self.host_cmd_ns);
        let done = dev.submit(issued, op, extents)?;
        if permit.is_some() {
            self.iface_free.pop();
            self.iface_free
                .push(Reverse(done.saturating_add(notice_ns)));
        }
        Ok((start, done))
    }

    /// A plain request: one command.
    pub fn direct(&mut self, dev: &mut Device, r: Request, out: &mut Out) -> Result<(), FtlError> {
        let notice = if self.mode == CompletionMode::Irq {
            self.irq_ns
        } else {
            0
        };
        let (_, done) = self.command(dev, r.at, r.op, &[r.ext], notice)?;
        out.seen.push(Seen {
            worker: r.worker,
            slot: r.slot,
            at: done.saturating_add(notice),
            served: None,
        });
        Ok(())
    }

    /// A request to merge layer `layer`.
    pub fn merged(
        &mut self,
        dev: &mut Device,
        layer: usize,
        r: Request,
        out: &mut Out,
    ) -> Result<(), FtlError> {
        match &mut self.layers[layer] {
            Layer::Stm(s) => {
                let k = kind(r.op);
                if let Some(g) = &mut s.gathering[k] {
                    if s.cfg.fits(g.reqs.len(), g.bytes, r.ext.len) {
                        g.reqs.push(r);
                        g.bytes = g.bytes.saturating_add(r.ext.len);
                        if s.cfg.full(g.reqs.len(), g.bytes) || g.reqs.len() >= s.members {
                            let g = s.gathering[k].take().expect("gathering");
                            return self.issue_stm(dev, g, r.at, out);
                        }
                        return Ok(());
                    }
                    let g = s.gathering[k].take().expect("gathering");
                    self.issue_stm(dev, g, r.at, out)?;
                }
                let Layer::Stm(s) = &mut self.layers[layer] else {
                    unreachable!("layer kinds do not change")
                };
                let g = Gather {
                    op: r.op,
                    opened: r.at,
                    reqs: vec![r],
                    bytes: r.ext.len,
                };
                if s.cfg.full(1, g.bytes) || s.members <= 1 {
                    return self.issue_stm(dev, g, r.at, out);
                }
                out.events
                    .push((r.at.saturating_add(s.cfg.window_ns), event(layer, k)));
                s.gathering[k] = Some(g);
                Ok(())
            }
            Layer::Atm(a) => {
                a.queue.push_back(r);
                a.queued[kind(r.op)] += 1;
                let front = a.queue.front().expect("just pushed");
                let ready = if a.cfg.full(a.queued[kind(front.op)], 0) {
                    r.at
                } else {
                    front.at.saturating_add(a.cfg.window_ns)
                };
                let at = ready.max(a.busy_until).max(r.at);
                a.arm(at, layer, out);
                Ok(())
            }
        }
    }

    /// An event scheduled earlier, now at time `t`.
    pub fn event(
        &mut self,
        dev: &mut Device,
        t: u64,
        ev: u32,
        out: &mut Out,
    ) -> Result<(), FtlError> {
        let (layer, k) = ((ev / 4) as usize, (ev % 4) as usize);
        match &mut self.layers[layer] {
            Layer::Stm(s) => {
                // The window of the command gathering now, if it has ended
                // (an event of a command already closed by filling finds a
                // later one, whose window has not).
                let due = s.gathering[k]
                    .as_ref()
                    .is_some_and(|g| g.opened.saturating_add(s.cfg.window_ns) <= t);
                if !due {
                    return Ok(());
                }
                let permit = self.permit_at();
                if permit > t {
                    out.events.push((permit, ev)); // gather until the device is free
                    return Ok(());
                }
                let Layer::Stm(s) = &mut self.layers[layer] else {
                    unreachable!("layer kinds do not change")
                };
                let g = s.gathering[k].take().expect("gathering");
                self.issue_stm(dev, g, t, out)
            }
            Layer::Atm(_) => self.dispatch(dev, layer, t, out),
        }
    }

    fn issue_stm(
        &mut self,
        dev: &mut Device,
        g: Gather,
        closed: u64,
        out: &mut Out,
    ) -> Result<(), FtlError> {
        let extents: Vec<Extent> = g.reqs.iter().map(|r| r.ext).collect();
        // The winner polls: it sees the completion, and frees the permit, at once.
        let (issued, done) = self.command(dev, closed, g.op, &extents, 0)?;
        let n = g.reqs.len();
        for (i, r) in g.reqs.iter().enumerate() {
            let winner = i == 0;
            out.seen.push(Seen {
                worker: r.worker,
                slot: r.slot,
                at: if winner {
                    done
                } else {
                    done.saturating_add(self.wake_ns)
                },
                served: Some(Served {
                    entered: r.at,
                    closed,
                    issued,
                    done,
                    leader_of: winner.then_some(n),
                }),
            });
        }
        Ok(())
    }

    /// ATM: dispatch if the dispatcher is free and the oldest request's
    /// command is ready (its window has passed, or it is full).
    fn dispatch(
        &mut self,
        dev: &mut Device,
        layer: usize,
        t: u64,
        out: &mut Out,
    ) -> Result<(), FtlError> {
        let permit = self.permit_at();
        let Layer::Atm(a) = &mut self.layers[layer] else {
            return Ok(());
        };
        if a.armed != Some(t) {
            return Ok(()); // superseded by an earlier look
        }
        a.armed = None;
        let Some(front) = a.queue.front().copied() else {
            return Ok(());
        };
        let full = a.cfg.full(a.queued[kind(front.op)], 0);
        let ready = if full {
            front.at
        } else {
            front.at.saturating_add(a.cfg.window_ns)
        };
        if t < a.busy_until || t < ready {
            // Not yet: look again then (the oldest may be of another kind
            // than the one whose arrival scheduled this event).
            a.arm(ready.max(a.busy_until), layer, out);
            return Ok(());
        }
        if permit > t {
            a.arm(permit, layer, out); // wait for the interface
            return Ok(());
        }
        let op = front.op;
        let taken = a.take(op);
        let extents: Vec<Extent> = taken.iter().map(|r| r.ext).collect();
        let (issued, done) = self.command(dev, t, op, &extents, 0)?;
        let Layer::Atm(a) = &mut self.layers[layer] else {
            return Ok(());
        };
        a.busy_until = done;
        if !a.queue.is_empty() {
            a.arm(done, layer, out);
        }
        let wake = if self.mode == CompletionMode::Poll {
            0
        } else {
            self.wake_ns
        };
        let n = taken.len();
        for (i, r) in taken.iter().enumerate() {
            out.seen.push(Seen {
                worker: r.worker,
                slot: r.slot,
                at: done.saturating_add(wake),
                served: Some(Served {
                    entered: r.at,
                    closed: t,
                    issued,
                    done,
                    leader_of: (i == 0).then_some(n),
                }),
            });
        }
        Ok(())
    }
}

/// The event id of layer `layer`, kind `k`.
fn event(layer: usize, k: usize) -> u32 {
    (layer * 4 + k) as u32
}
