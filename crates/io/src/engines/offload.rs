//! `io_submit_mode=offload`: the worker does not submit its I/O itself; it
//! hands each request to a pool of submitter threads, as fio's
//! `rate-submit.c` does. There are `iodepth` submitters, each with an
//! engine of its own (of the job's kind, one I/O deep, opened on that
//! thread), and each does one I/O at a time to its end — submit, then wait
//! for the completion — before it takes the next, so up to `iodepth` I/Os
//! are in flight, one per thread. Slot `i` of the worker is submitter
//! `i`'s: while the slot is free its engine (and buffer) is back with the
//! worker, which fills the buffer and sets the request's priority there;
//! `queue` sends engine and request to the submitter, `getevents` takes
//! back the engines of finished I/Os with their results. `commit` has
//! nothing to do (fio's offload queue also submits at once).

use crate::engine::{Engine, EngineError, Queued};
use crate::engines::def::AnyEngine;
use ssdready_core::{Completion, IoReq};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Opens submitter `i`'s engine (called on that submitter's thread).
pub type Opener = Arc<dyn Fn(u32) -> Result<AnyEngine, EngineError> + Send + Sync>;

/// What a submitter is asked to do, with the engine to do it on.
enum Work {
    Rw(IoReq),
    Sync { file: u32, data_only: bool },
}

/// A finished piece of work: the slot, its engine back, the result.
type Done = (u32, Box<AnyEngine>, Result<i64, EngineError>);

/// See the module docs.
pub struct OffloadEngine {
    /// Per slot, its submitter's engine while the slot is free.
    home: Vec<Option<Box<AnyEngine>>>,
    /// Per slot, its submitter.
    to: Vec<Sender<(Box<AnyEngine>, Work)>>,
    done: Receiver<Done>,
    threads: Vec<JoinHandle<()>>,
    name: &'static str,
}

impl OffloadEngine {
    /// Start `depth` submitters, each opening its engine with `open`.
    pub fn new(depth: u32, open: Opener) -> Result<OffloadEngine, EngineError> {
        let (done_tx, done) = channel::<Done>();
        let (ready_tx, ready) = channel::<(u32, Result<AnyEngine, EngineError>)>();
        let mut to = Vec::new();
        let mut threads = Vec::new();
        for i in 0..depth.max(1) {
            let (tx, rx) = channel::<(Box<AnyEngine>, Work)>();
            let (open, ready_tx, done_tx) = (open.clone(), ready_tx.clone(), done_tx.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("submit.{i}"))
                .spawn(move || {
                    let _ = ready_tx.send((i, open(i)));
                    drop(ready_tx);
                    while let Ok((mut engine, work)) = rx.recv() {
                        let r = perform(&mut engine, work);
                        if done_tx.send((i, engine, r)).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|e| EngineError::Sys {
                    what: "starting a submitter thread (io_submit_mode=offload)".into(),
                    source: e,
                })?;
            to.push(tx);
            threads.push(spawned);
        }
        drop(ready_tx);
        let mut home: Vec<Option<Box<AnyEngine>>> = (0..to.len()).map(|_| None).collect();
        let mut first_error = None;
        for (i, opened) in ready.iter() {
            match opened {
                Ok(e) => home[i as usize] = Some(Box::new(e)),
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        let name = home.iter().flatten().next().map_or("offload", |e| e.name());
        let engine = OffloadEngine {
            home,
            to,
            done,
            threads,
            name,
        };
        match first_error {
            Some(e) => Err(e),
            None => Ok(engine),
        }
    }

    fn send(&mut self, slot: u32, work: Work) -> Result<Queued, EngineError> {
        let engine = self.home[slot as usize]
            .take()
            .expect("a free slot's engine is at home");
        self.to[slot as usize]
            .send((engine, work))
            .map_err(|_| gone())?;
        Ok(Queued::Pending)
    }

    fn at_home(&mut self, slot: u32) -> Option<&mut AnyEngine> {
        self.home.get_mut(slot as usize)?.as_deref_mut()
    }
}

fn gone() -> EngineError {
    EngineError::Unsupported("a submitter thread (io_submit_mode=offload) stopped".into())
}

/// One request to its end on a submitter's own engine (slot 0).
fn perform(engine: &mut AnyEngine, work: Work) -> Result<i64, EngineError> {
    let queued = match work {
        Work::Rw(req) => engine.queue(IoReq { slot: 0, ..req })?,
        Work::Sync { file, data_only } => engine.sync(0, file, data_only)?,
    };
    if let Queued::Done(r) = queued {
        return Ok(r);
    }
    engine.commit()?;
    let mut out = Vec::with_capacity(1);
    loop {
        engine.getevents(1, &mut out)?;
        if let Some(c) = out.first() {
            return Ok(c.result);
        }
    }
}

impl Engine for OffloadEngine {
    fn name(&self) -> &'static str {
        self.name
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        self.send(req.slot, Work::Rw(req))
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }

    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = 0;
        loop {
            let next = if got < min {
                self.done.recv().map_err(|_| gone())?
            } else {
                match self.done.try_recv() {
                    Ok(d) => d,
                    Err(_) => return Ok(()),
                }
            };
            let (slot, engine, result) = next;
            self.home[slot as usize] = Some(engine);
            out.push(Completion {
                slot,
                result: result?,
            });
            got += 1;
        }
    }

    fn completion_mode(&self) -> &'static str {
        "offload"
    }

    fn sync(&mut self, slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        self.send(slot, Work::Sync { file, data_only })
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.at_home(slot)?.buffer(0)
    }

    fn set_prio(&mut self, slot: u32, prio: u16) -> Result<(), EngineError> {
        match self.at_home(slot) {
            Some(e) => e.set_prio(0, prio),
            None => Ok(()),
        }
    }
}

impl Drop for OffloadEngine {
    fn drop(&mut self) {
        // Closing the channels ends the submitters (the worker reaped
        // every I/O first).
        self.to.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::null::NullEngine;
    use crate::engines::test_reads::read_req;
    use ssdready_core::spec::JobSpec;

    #[test]
    fn each_slot_is_done_by_its_own_submitter_thread() {
        let spec = Arc::new(JobSpec {
            iodepth: 1,
            ..JobSpec::default()
        });
        let open: Opener = Arc::new(move |_| Ok(AnyEngine::Null(NullEngine::new(&spec))));
        let mut e = OffloadEngine::new(4, open).unwrap();
        assert_eq!(e.threads.len(), 4);
        for slot in 0..4 {
            assert_eq!(e.queue(read_req(slot)).unwrap(), Queued::Pending);
            assert!(
                e.at_home(slot).is_none(),
                "the engine is with its submitter"
            );
        }
        let mut out = Vec::new();
        e.getevents(4, &mut out).unwrap();
        let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, vec![0, 1, 2, 3]);
        assert!(out.iter().all(|c| c.result == 4096));
        assert!((0..4).all(|s| e.at_home(s).is_some()));
    }
}
