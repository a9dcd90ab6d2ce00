//! Which file a job's next I/O goes to (`file_service_type`), as fio's
//! `__get_next_file` decides: the same file again for `N` I/Os
//! (`random:N`, `roundrobin:N`), or until it is done (`sequential`); then
//! the next one in turn (round robin, sequential), a uniform choice
//! (random), or a skewed one (zipf, pareto, normal over `files × 1024`
//! ranges, not scattered, so the hot files are consecutive). A file that
//! is done is skipped; fio never marks a file done under a skewed choice
//! (it starts the file over), which the plan does.

use super::dists::Skewed;
use rand::rngs::SmallRng;
use rand::Rng;
use ssdready_core::spec::FileService;

/// fio's `FIO_FSERVICE_SHIFT`: ranges per file of a skewed choice.
const RANGES_PER_FILE_SHIFT: u32 = 10;

/// The file service of one worker.
#[derive(Clone)]
pub(crate) struct FileChooser {
    kind: FileService,
    /// I/Os per choice.
    nr: u32,
    /// I/Os left to the current choice.
    left: u32,
    current: Option<usize>,
    /// The next file in turn (round robin and sequential).
    next_rr: usize,
    skew: Option<Skewed>,
    files: usize,
}

impl FileChooser {
    pub(crate) fn new(
        kind: FileService,
        nr: u32,
        center: Option<f64>,
        files: usize,
        rng: &mut SmallRng,
    ) -> FileChooser {
        let ranges = (files as u64) << RANGES_PER_FILE_SHIFT;
        FileChooser {
            kind,
            nr: nr.max(1),
            left: 0,
            current: None,
            next_rr: 0,
            skew: Skewed::files(kind, center, ranges, rng),
            files,
        }
    }

    /// The file of the next I/O among those not `done`; None when every
    /// file is done.
    pub(crate) fn pick(&mut self, done: &[bool], rng: &mut SmallRng) -> Option<usize> {
        if self.files == 1 {
            return (!done[0]).then_some(0);
        }
        if let Some(c) = self.current.filter(|&c| !done[c]) {
            if self.kind == FileService::Sequential {
                return Some(c);
            }
            if self.left > 0 {
                self.left -= 1;
                return Some(c);
            }
        }
        let f = match self.kind {
            FileService::RoundRobin | FileService::Sequential => self.in_turn(done)?,
            FileService::Random => self.uniform(done, rng)?,
            _ => self.skewed(done, rng)?,
        };
        self.current = Some(f);
        self.left = self.nr - 1;
        Some(f)
    }

    fn in_turn(&mut self, done: &[bool]) -> Option<usize> {
        for _ in 0..self.files {
            let f = self.next_rr;
            self.next_rr = (f + 1) % self.files;
            if !done[f] {
                return Some(f);
            }
        }
        None
    }

    fn uniform(&mut self, done: &[bool], rng: &mut SmallRng) -> Option<usize> {
        // fio draws until it finds a file not done; a bounded number of
        // draws, then the first one left, keeps this finite.
        for _ in 0..4 * self.files {
            let f = rng.random_range(0..self.files);
            if !done[f] {
                return Some(f);
            }
        }
        done.iter().position(|d| !d)
    }

    fn skewed(&mut self, done: &[bool], rng: &mut SmallRng) -> Option<usize> {
        let s = self.skew.as_ref()?;
        let f = (s.place(s.rank(rng)) >> RANGES_PER_FILE_SHIFT) as usize;
        let f = f.min(self.files - 1);
        if !done[f] {
            return Some(f);
        }
        done.iter().position(|d| !d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn picks(kind: FileService, nr: u32, center: Option<f64>, n: usize, k: usize) -> Vec<usize> {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut c = FileChooser::new(kind, nr, center, n, &mut rng);
        let done = vec![false; n];
        (0..k).map(|_| c.pick(&done, &mut rng).unwrap()).collect()
    }

    #[test]
    fn round_robin_and_its_batches() {
        assert_eq!(
            picks(FileService::RoundRobin, 1, None, 3, 6),
            [0, 1, 2, 0, 1, 2]
        );
        assert_eq!(
            picks(FileService::RoundRobin, 2, None, 3, 6),
            [0, 0, 1, 1, 2, 2]
        );
        assert_eq!(picks(FileService::Sequential, 1, None, 3, 4), [0, 0, 0, 0]);
    }

    #[test]
    fn random_batches_stay_on_one_file() {
        let p = picks(FileService::Random, 4, None, 8, 400);
        for chunk in p.chunks(4) {
            assert!(chunk.iter().all(|&f| f == chunk[0]), "{chunk:?}");
        }
        let mut seen = [false; 8];
        p.iter().for_each(|&f| seen[f] = true);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn zipf_files_are_skewed_and_consecutive_from_the_center() {
        let p = picks(FileService::Zipf(1.2), 1, Some(0.5), 10, 20_000);
        let mut c = [0u32; 10];
        p.iter().for_each(|&f| c[f] += 1);
        // Rank 0 lands at the center (file 5), the next ranks after it.
        assert!(c[5] > c[6] && c[6] >= c[7], "{c:?}");
        assert!(c[5] > 8_000, "{c:?}");
    }

    #[test]
    fn done_files_are_skipped_and_all_done_is_none() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut c = FileChooser::new(FileService::Sequential, 1, None, 3, &mut rng);
        assert_eq!(c.pick(&[true, false, false], &mut rng), Some(1));
        assert_eq!(c.pick(&[true, true, false], &mut rng), Some(2));
        assert_eq!(c.pick(&[true, true, true], &mut rng), None);
    }
}
