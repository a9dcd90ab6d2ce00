//! How a run tells its caller what happens while it runs: warnings and
//! notes said at once (a command line prints them on stderr), the laying
//! out of files, and each phase's progress once a second. The library
//! prints nothing itself; [`SilentObserver`] drops everything.
//!
//! Threads the run starts (workers) and guards dropped deep in a phase
//! cannot reach the observer, which the caller's thread holds: they say
//! what they have to say through [`notices`], a queue the run drains into
//! the observer on its own thread (every ~20 ms during a phase, and before
//! it returns).

/// Completed I/Os and bytes per direction (read, write, trim).
pub type Totals = [(u64, u64); 3];

/// What a run reports while it runs. Every method has a default that does
/// nothing.
pub trait RunObserver {
    /// A warning, said at once (it is in the result's warnings as well
    /// when it concerns the results).
    fn warning(&mut self, text: &str) {
        let _ = text;
    }
    /// Something the user should know now (which target a default chose,
    /// a failure to write a diagnostic file).
    fn note(&mut self, text: &str) {
        let _ = text;
    }
    /// Laying out `path` (`total` bytes) starts.
    fn layout_start(&mut self, path: &str, total: u64) {
        let _ = (path, total);
    }
    /// `done` bytes of the file being laid out are written.
    fn layout_progress(&mut self, done: u64) {
        let _ = done;
    }
    /// Laying out the file ended (done, failed or interrupted).
    fn layout_end(&mut self) {}
    /// A phase's I/O starts; it is expected to last `expected_s` seconds
    /// (ramp and start delay included) when every job is time based.
    fn phase_start(&mut self, expected_s: Option<f64>) {
        let _ = expected_s;
    }
    /// Once a second during a phase: `t` seconds since it started, and its
    /// workers' completed I/Os and bytes since then (ramp included).
    fn progress(&mut self, t: f64, totals: &Totals) {
        let _ = (t, totals);
    }
    /// The phase's workers have all finished.
    fn phase_end(&mut self) {}
}

/// An observer that drops everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct SilentObserver;

impl RunObserver for SilentObserver {}

/// Messages from threads that cannot reach the observer.
pub mod notices {
    use super::RunObserver;
    use std::cell::RefCell;
    use std::sync::{Arc, Mutex};

    /// A message for the observer.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Notice {
        Warning(String),
        Note(String),
    }

    /// A queue of notices shared by the threads of one run.
    #[derive(Debug, Clone, Default)]
    pub struct Queue(Arc<Mutex<Vec<Notice>>>);

    impl Queue {
        fn push(&self, n: Notice) {
            // A thread that panicked holding the lock poisoned it: its
            // notices still count.
            self.0.lock().unwrap_or_else(|p| p.into_inner()).push(n);
        }

        /// Hand what was said since the last call to `obs`, in order.
        pub fn drain_into(&self, obs: &mut dyn RunObserver) {
            let said = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
            for n in said {
                match n {
                    Notice::Warning(t) => obs.warning(&t),
                    Notice::Note(t) => obs.note(&t),
                }
            }
        }

        /// Run `f` with this queue as the calling thread's; the previous
        /// one is put back after.
        pub fn scope<T>(&self, f: impl FnOnce() -> T) -> T {
            let before = CURRENT.with(|c| c.replace(Some(self.clone())));
            struct Restore(Option<Queue>);
            impl Drop for Restore {
                fn drop(&mut self) {
                    let q = self.0.take();
                    CURRENT.with(|c| *c.borrow_mut() = q);
                }
            }
            let _restore = Restore(before);
            f()
        }
    }

    thread_local! {
        static CURRENT: RefCell<Option<Queue>> = const { RefCell::new(None) };
    }

    /// The calling thread's queue, to hand to a thread it starts.
    pub fn current() -> Queue {
        CURRENT.with(|c| c.borrow().clone()).unwrap_or_default()
    }

    fn say(n: Notice) {
        // Outside any run's scope there is nobody to tell: the notice is
        // dropped (a library prints nothing on its own).
        CURRENT.with(|c| {
            if let Some(q) = c.borrow().as_ref() {
                q.push(n)
            }
        });
    }

    /// A warning for the run's observer.
    pub fn warning(text: impl Into<String>) {
        say(Notice::Warning(text.into()));
    }

    /// A note for the run's observer.
    pub fn note(text: impl Into<String>) {
        say(Notice::Note(text.into()));
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[derive(Default)]
        struct Seen(Vec<String>);
        impl RunObserver for Seen {
            fn warning(&mut self, t: &str) {
                self.0.push(format!("w:{t}"));
            }
            fn note(&mut self, t: &str) {
                self.0.push(format!("n:{t}"));
            }
        }

        #[test]
        fn notices_from_another_thread_reach_the_observer_in_order() {
            let q = Queue::default();
            q.scope(|| {
                note("first");
                let child = current();
                std::thread::spawn(move || child.scope(|| warning("from a worker")))
                    .join()
                    .unwrap();
            });
            // Outside the scope nothing is queued.
            warning("lost");
            let mut seen = Seen::default();
            q.drain_into(&mut seen);
            assert_eq!(seen.0, ["n:first", "w:from a worker"]);
            q.drain_into(&mut seen);
            assert_eq!(seen.0.len(), 2);
        }
    }
}
