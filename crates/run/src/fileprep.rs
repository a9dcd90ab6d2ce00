//! What happens to a job's files just before its phase starts, as fio does
//! when a job opens them: the page cache of each target's region is dropped
//! (`invalidate`, on by default; `BLKFLSBUF` for a block device), or, with
//! `pre_read`, the region is read into it instead. The worker repeats the
//! drop at each later pass over a region ([`crate::worker`]), as fio does on
//! time-based runs and at each loop.

use crate::prepared::PreparedJob;
use ssdready_io::target::cache;
use std::sync::atomic::AtomicBool;

/// Invalidate or pre-read `job`'s targets; a failure is a warning (fio
/// carries on without the cache drop too).
pub(crate) fn before_phase(job: &PreparedJob, stop: &AtomicBool, warnings: &mut Vec<String>) {
    let spec = &job.spec;
    for (t, r) in job.targets.iter().zip(&job.regions) {
        if spec.files.pre_read {
            match cache::pre_read(&t.path, r.offset, r.len, stop) {
                Ok(n) if n < r.len => warnings.push(format!(
                    "job '{}': pre_read read {n} of the {} bytes of {} (the file is shorter)",
                    spec.name,
                    r.len,
                    t.path.display()
                )),
                Ok(_) => {}
                Err(e) => warnings.push(format!(
                    "job '{}': pre_read of {} failed: {e}",
                    spec.name,
                    t.path.display()
                )),
            }
        } else if spec.invalidate {
            if let Err(e) = t.drop_cache(r.offset, r.len) {
                warnings.push(format!(
                    "job '{}': could not drop the page cache of {}: {e}",
                    spec.name,
                    t.path.display()
                ));
            }
        }
    }
}
