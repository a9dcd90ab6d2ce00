//! The attached drive's request queue, set as a new drive of its model
//! would have it. A loop device keeps its queue settings after it is
//! unbound, so the free one `emu attach` binds may carry whatever its last
//! user left: a scheduler, `nr_requests` 6, `max_sectors_kb` 8. The
//! drive is ssdready's own apparatus; inherited settings would be measured
//! as the platform's and sold as a change to make. After binding, every
//! queue setting a study may try is put to a new NVMe drive's value:
//! no scheduler, `nr_requests` the model's queue depth (as far as the
//! transport's tags take it), `max_sectors_kb` all the transport takes,
//! merges on, completions on the submitting CPU's group, I/O statistics
//! on, the kernel's default write throttling and readahead.

use ssdready_measured::limits::queue_files as file;
use std::path::{Path, PathBuf};

/// One setting put back to the new drive's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reset {
    pub attr: &'static str,
    pub was: String,
    pub now: String,
}

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} (was {})", self.attr, self.now, self.was)
    }
}

/// The value a setting reads as (the active one for `scheduler`, by
/// `ssdready_measured`'s one parser of it).
fn read(q: &Path, attr: &str) -> Option<String> {
    let s = std::fs::read_to_string(q.join(attr)).ok()?;
    Some(ssdready_measured::limits::parse::queue_value(attr, &s))
}

/// What each setting should be, as (attribute, value to write, value it
/// reads back as where that differs from what is written).
fn wanted(q: &Path, depth: u32) -> Vec<(&'static str, String, Option<String>)> {
    let tags = std::fs::read_to_string(q.parent().unwrap_or(q).join("mq/0/nr_tags"))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let nr = tags.map_or(depth, |t| depth.min(t)).max(4);
    let mut v = vec![
        (file::SCHEDULER, "none".to_string(), None),
        (file::NR_REQUESTS, nr.to_string(), None),
        (file::NOMERGES, "0".into(), None),
        (file::RQ_AFFINITY, "1".into(), None),
        (file::IOSTATS, "1".into(), None),
        (file::READ_AHEAD_KB, "128".into(), None),
        // -1 is the kernel's own default (2 ms on a non-rotational device).
        (file::WBT_LAT_USEC, "-1".into(), Some(String::new())),
    ];
    if let Some(hw) = read(q, file::MAX_HW_SECTORS_KB) {
        v.push((file::MAX_SECTORS_KB, hw, None));
    }
    v
}

/// Set the queue of `/sys/block/NAME` as a new drive's, with the model's
/// queue depth `depth`; returns what was changed and what could not be.
/// The scheduler goes first: switching it resets `nr_requests`.
pub fn fresh(sys_block: &Path, name: &str, depth: u32) -> (Vec<Reset>, Vec<String>) {
    let q: PathBuf = sys_block.join(name).join("queue");
    let (mut done, mut failed) = (Vec::new(), Vec::new());
    for (attr, value, reads) in wanted(&q, depth) {
        let Some(was) = read(&q, attr) else {
            continue;
        };
        if was == value {
            continue;
        }
        match std::fs::write(q.join(attr), &value) {
            Ok(()) => {
                let now = read(&q, attr).unwrap_or_default();
                if reads.is_none() && now != value {
                    failed.push(format!("{name}'s {attr} reads {now} after writing {value}"));
                }
                if now != was {
                    done.push(Reset { attr, was, now });
                }
            }
            Err(e) => failed.push(format!("setting {name}'s {attr} to {value}: {e}")),
        }
    }
    (done, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inherited_queue_is_put_back_to_a_new_drives_and_said() {
        let t = tempfile::tempdir().unwrap();
        let dev = t.path().join("loop3");
        let q = dev.join("queue");
        std::fs::create_dir_all(dev.join("mq/0")).unwrap();
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(dev.join("mq/0/nr_tags"), "128\n").unwrap();
        for (a, v) in [
            ("scheduler", "none mq-deadline [bfq]"),
            ("nr_requests", "6"),
            ("max_sectors_kb", "8"),
            ("max_hw_sectors_kb", "1280"),
            ("nomerges", "0"),
            ("read_ahead_kb", "128"),
        ] {
            std::fs::write(q.join(a), format!("{v}\n")).unwrap();
        }
        let (done, failed) = fresh(t.path(), "loop3", 1024);
        assert!(failed.is_empty(), "{failed:?}");
        let said: Vec<String> = done.iter().map(|r| r.to_string()).collect();
        assert_eq!(
            said,
            [
                "scheduler none (was bfq)",
                "nr_requests 128 (was 6)",
                "max_sectors_kb 1280 (was 8)"
            ],
            "the model's depth is cut to the transport's tags"
        );
        // A new drive's queue is left alone.
        let (done, _) = fresh(t.path(), "loop3", 1024);
        assert!(done.is_empty(), "{done:?}");
    }
}
