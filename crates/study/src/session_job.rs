//! The study of a job file's steps beside its runs (`ssdready study
//! --job`): each run's length from the budget, the limits that can cap the
//! job's I/O, and the user's job with the best configuration's options.
//! The binary reads the file, runs [`crate::job_run::execute`] and writes
//! the files.

use crate::job;
use crate::job_best;
use crate::job_run::JobDoc;
use ssdready_core::options::Section;
use ssdready_diagnosis::limit::caps::Caps;
use ssdready_measured::limits::Inventory;
use std::path::Path;

/// Each run's length: the budget shared by the repeats and the variants,
/// a tenth kept for starting each run; 1 to 60 s.
pub fn runtime_s(budget_s: f64, runs: usize) -> f64 {
    (0.9 * budget_s / runs.max(1) as f64)
        .clamp(1.0, 60.0)
        .floor()
}

/// The limits that can cap the job's I/O: its control groups', the CPUs
/// it may use, and the queue of the device its first target is on; with
/// the ones that hold below the machine's own, one line each, and the
/// inventory they were read from.
pub fn caps(sections: &[Section]) -> (Caps, Vec<String>, Inventory) {
    let j = sections.iter().position(|s| !s.global).unwrap_or(0);
    let devices: Vec<(u32, u32)> = job::effective(sections, j, "filename")
        .and_then(|f| {
            let p = std::path::absolute(Path::new(f.split(':').next()?)).ok()?;
            let on = p.ancestors().find(|a| a.exists())?.to_path_buf();
            ssdready_probe::limits_dev::device_of_path(&on)
                .ok()
                .flatten()
        })
        .into_iter()
        .collect();
    let inv = ssdready_probe::limits::inventory(std::process::id(), &devices);
    let caps = Caps::of(&inv);
    let lines = caps.lines();
    (caps, lines, inv)
}

/// The user's job with the best configuration's options, when the set
/// gained beyond the noise: its text (the measured gain in its header),
/// kept in the document with the lines that changed.
pub fn best_file(doc: &mut JobDoc, as_written: &[Section]) -> Option<String> {
    let b = doc.best.as_mut().filter(|b| b.beyond_noise)?;
    let header = format!(
        "{}\nssdready study of {} (sha256 {}); run it with: fio job-best.fio{}",
        job_best::words(b),
        doc.job_file,
        &doc.job_sha256[..12.min(doc.job_sha256.len())],
        job_best::host_note(b)
    );
    let before = job_best::render(as_written, "");
    let after = job_best::render(&job_best::apply(as_written, &b.options), &header);
    b.diff = job_best::diff(&before, &after);
    b.file = after.clone();
    Some(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_a_share_of_the_budget_between_one_and_sixty_seconds() {
        assert_eq!(runtime_s(100.0, 9), 10.0);
        assert_eq!(runtime_s(10.0, 20), 1.0);
        assert_eq!(runtime_s(10_000.0, 3), 60.0);
        assert_eq!(runtime_s(50.0, 0), 45.0);
    }

    #[test]
    fn no_best_file_without_a_gain_beyond_the_noise() {
        let mut doc = JobDoc::default();
        assert!(best_file(&mut doc, &[]).is_none());
    }
}
