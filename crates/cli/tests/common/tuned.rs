//! A loop device put on mq-deadline with a queue of its own, its queue
//! settings read whole, and put back when dropped.

use super::LoopDev;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A loop device on mq-deadline with a depth of its own (64), put back to
/// none and 128 when dropped (a loop device keeps them after detach).
pub struct Tuned {
    pub l: LoopDev,
    pub name: String,
}

impl Tuned {
    pub fn new(tag: &str, mib: u64) -> Option<Tuned> {
        let l = LoopDev::new(tag, mib)?;
        let name = l.dev.trim_start_matches("/dev/").to_string();
        let t = Tuned { l, name };
        let offered = std::fs::read_to_string(t.queue().join("scheduler")).unwrap_or_default();
        if !offered.contains("mq-deadline") {
            eprintln!("skipped: {} offers no mq-deadline ({offered})", t.l.dev);
            return None;
        }
        std::fs::write(t.queue().join("scheduler"), "mq-deadline").unwrap();
        std::fs::write(t.queue().join("nr_requests"), "64").unwrap();
        Some(t)
    }

    pub fn queue(&self) -> PathBuf {
        Path::new("/sys/block").join(&self.name).join("queue")
    }

    /// Every queue setting that can be read, the scheduler's tunables too.
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for dir in [self.queue(), self.queue().join("iosched")] {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                if let Ok(v) = std::fs::read_to_string(&p) {
                    let key = p.strip_prefix(self.queue()).unwrap().display().to_string();
                    out.insert(key, v.trim().to_string());
                }
            }
        }
        out
    }

    pub fn scheduler(&self) -> String {
        std::fs::read_to_string(self.queue().join("scheduler")).unwrap()
    }
}

impl Drop for Tuned {
    fn drop(&mut self) {
        let _ = std::fs::write(self.queue().join("scheduler"), "none");
        let _ = std::fs::write(self.queue().join("nr_requests"), "128");
    }
}
