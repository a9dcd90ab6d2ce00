//! Small files, Postmark's model (Katcher, "PostMark: A New File System
//! Benchmark", NetApp, 1997), as Shin ran it in "Achieving Peak Device
//! Throughput for Random IO Workload".
//!
//! Each job builds a pool of `scale × 1000 / jobs` files of random sizes
//! (512 bytes to `bs`) spread over ten subdirectories, then runs
//! transactions until the time is up. A transaction is two operations: a
//! create or a delete (even odds), then a read of a whole file or an append
//! to one (even odds). With `fsync`, each create and append is followed by
//! an fsync of the file (a mail server's way; Postmark's default is none).
//!
//! After the timed phase the file system is synced (`sync -f`) inside the
//! device's window, so the device's writes per transaction include what the
//! transactions left dirty in the page cache; the transaction rate does not
//! include that sync (its time is a count of its own).

use crate::config::{Config, Workload};
use crate::error::Error;
use crate::phase::Phase;
use crate::result::AppResult;
use crate::{device, workdir};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use ssdready_core::hist::Histogram;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

const SUBDIRS: u64 = 10;
const MIN_SIZE: u64 = 512;
const MAX_APPEND: u64 = 4096;

#[derive(Default, Clone)]
struct Counts {
    transactions: u64,
    created: u64,
    deleted: u64,
    reads: u64,
    appends: u64,
    fsyncs: u64,
    bytes_read: u64,
    bytes_written: u64,
}

struct Job {
    dir: PathBuf,
    rng: SmallRng,
    /// Live files: (id, size).
    pool: Vec<(u64, u64)>,
    next_id: u64,
    max_size: u64,
    fsync: bool,
    data: Vec<u8>,
    c: Counts,
    lat: Histogram,
    fsync_lat: Histogram,
}

/// Each job's share of the initial files, created before the timed phase.
fn populate(wd: &Path, cfg: &Config, max_size: u64, stop: &AtomicBool) -> Result<Vec<Job>, Error> {
    let total = cfg.scale as u64 * 1000;
    let mut jobs = Vec::new();
    for j in 0..cfg.jobs as u64 {
        let share = total / cfg.jobs as u64 + u64::from(j < total % cfg.jobs as u64);
        let mut job = Job::new(wd, j, cfg, max_size)?;
        for _ in 0..share {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            job.create()?;
        }
        jobs.push(job);
    }
    Ok(jobs)
}

/// The timed phase: every job's transactions on a thread of its own until
/// the phase ends.
fn run_jobs(jobs: Vec<Job>, phase: &Phase) -> Vec<Result<Job, Error>> {
    std::thread::scope(|s| {
        let hs: Vec<_> = jobs
            .into_iter()
            .map(|mut job| {
                s.spawn(move || {
                    while phase.running() {
                        job.transaction()?;
                    }
                    Ok(job)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Runtime("a small-files job panicked".into())))
            })
            .collect()
    })
}

/// Run the small-files workload.
pub fn run(cfg: &Config, stop: Arc<AtomicBool>) -> Result<AppResult, Error> {
    let wd = workdir::prepare(&cfg.directory, Workload::SmallFiles)?;
    let max_size = cfg.bs.max(MIN_SIZE);
    let mut jobs = populate(&wd, cfg, max_size, &stop)?;
    let initial: u64 = jobs.iter().map(|j| j.pool.len() as u64).sum();
    workdir::sync_fs(&wd)?;
    for j in &mut jobs {
        j.c = Counts::default();
        j.fsync_lat = Histogram::new();
    }
    let mut window = device::Window::new(&wd);
    window.begin();
    let phase = Phase::new(cfg.runtime_ns, stop);
    let done = run_jobs(jobs, &phase);
    let elapsed = phase.elapsed_ns();
    let t_sync = Instant::now();
    workdir::sync_fs(&wd)?;
    let sync_ns = t_sync.elapsed().as_nanos() as u64;
    let mut c = Counts::default();
    let (mut lat, mut fsync_lat, mut files) = (Histogram::new(), Histogram::new(), 0u64);
    for j in done {
        let j = j?;
        lat.merge(&j.lat);
        fsync_lat.merge(&j.fsync_lat);
        files += j.pool.len() as u64;
        c.add(&j.c);
    }
    let dev = window.end(c.transactions, c.bytes_written);
    let mut r = AppResult {
        name: Workload::SmallFiles.name().into(),
        op: "transaction".into(),
        directory: wd.display().to_string(),
        jobs: cfg.jobs,
        scale: cfg.scale,
        seed: cfg.seed,
        app_write_bytes: c.bytes_written,
        app_read_bytes: c.bytes_read,
        interrupted: phase.stopped(),
        ..Default::default()
    };
    r.setting("min_file_bytes", MIN_SIZE);
    r.setting("max_file_bytes", max_size);
    r.setting("fsync", cfg.fsync);
    r.finish(elapsed, c.transactions, &lat, dev);
    r.count("transactions", c.transactions);
    r.count("initial_files", initial);
    r.count("files", files);
    r.count("files_created", c.created);
    r.count("files_deleted", c.deleted);
    r.count("reads", c.reads);
    r.count("appends", c.appends);
    r.count("bytes_read", c.bytes_read);
    r.count("bytes_written", c.bytes_written);
    r.count("fsyncs", c.fsyncs);
    let files_per_s = (c.created + c.deleted) as f64 / r.elapsed_s.max(1e-9);
    r.count("files_per_s", files_per_s);
    r.count("final_sync_ns", sync_ns);
    if cfg.fsync {
        r.count(
            "fsync_lat_ns",
            serde_json::to_value(crate::result::LatNs::of(&fsync_lat)).expect("serialises"),
        );
    }
    r.notes.push(format!(
        "the device's figures include the write-back of the run's dirty pages by a sync after the timed phase ({:.1} ms, not in the transaction rate)",
        sync_ns as f64 / 1e6
    ));
    Ok(r)
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.transactions += o.transactions;
        self.created += o.created;
        self.deleted += o.deleted;
        self.reads += o.reads;
        self.appends += o.appends;
        self.fsyncs += o.fsyncs;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
    }
}

impl Job {
    fn new(wd: &Path, j: u64, cfg: &Config, max_size: u64) -> Result<Job, Error> {
        let dir = wd.join(format!("job{j}"));
        for s in 0..SUBDIRS {
            let d = dir.join(format!("d{s}"));
            std::fs::create_dir_all(&d).map_err(|e| Error::io("making", &d, e))?;
        }
        Ok(Job {
            dir,
            rng: SmallRng::seed_from_u64(cfg.seed ^ (j + 1).wrapping_mul(0x2545_f491_4f6c_dd1d)),
            pool: Vec::new(),
            next_id: 0,
            max_size,
            fsync: cfg.fsync,
            data: crate::phase::random_bytes(cfg.seed, j, max_size.max(MAX_APPEND) as usize),
            c: Counts::default(),
            lat: Histogram::new(),
            fsync_lat: Histogram::new(),
        })
    }

    fn path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("d{}/f{id}", id % SUBDIRS))
    }

    fn transaction(&mut self) -> Result<(), Error> {
        let t0 = Instant::now();
        if self.rng.random_bool(0.5) || self.pool.is_empty() {
            self.create()?;
        } else {
            self.delete()?;
        }
        if !self.pool.is_empty() {
            if self.rng.random_bool(0.5) {
                self.read()?;
            } else {
                self.append()?;
            }
        }
        self.lat.record(t0.elapsed().as_nanos() as u64);
        self.c.transactions += 1;
        Ok(())
    }

    fn create(&mut self) -> Result<(), Error> {
        let id = self.next_id;
        self.next_id += 1;
        let size = self.rng.random_range(MIN_SIZE..=self.max_size);
        let p = self.path(id);
        let mut f = File::create_new(&p).map_err(|e| Error::io("creating", &p, e))?;
        f.write_all(&self.data[..size as usize])
            .map_err(|e| Error::io("writing", &p, e))?;
        self.sync(&f, &p)?;
        self.pool.push((id, size));
        self.c.created += 1;
        self.c.bytes_written += size;
        Ok(())
    }

    fn delete(&mut self) -> Result<(), Error> {
        let i = self.rng.random_range(0..self.pool.len());
        let (id, _) = self.pool.swap_remove(i);
        let p = self.path(id);
        std::fs::remove_file(&p).map_err(|e| Error::io("deleting", &p, e))?;
        self.c.deleted += 1;
        Ok(())
    }

    fn read(&mut self) -> Result<(), Error> {
        let (id, size) = self.pool[self.rng.random_range(0..self.pool.len())];
        let p = self.path(id);
        let mut buf = Vec::with_capacity(size as usize);
        File::open(&p)
            .and_then(|mut f| f.read_to_end(&mut buf))
            .map_err(|e| Error::io("reading", &p, e))?;
        if buf.len() as u64 != size {
            return Err(Error::Runtime(format!(
                "{} holds {} bytes; the workload wrote {size}",
                p.display(),
                buf.len()
            )));
        }
        self.c.reads += 1;
        self.c.bytes_read += size;
        Ok(())
    }

    fn append(&mut self) -> Result<(), Error> {
        let i = self.rng.random_range(0..self.pool.len());
        let n = self.rng.random_range(MIN_SIZE..=MAX_APPEND);
        let p = self.path(self.pool[i].0);
        let mut f = File::options()
            .append(true)
            .open(&p)
            .map_err(|e| Error::io("opening", &p, e))?;
        f.write_all(&self.data[..n as usize])
            .map_err(|e| Error::io("appending to", &p, e))?;
        self.sync(&f, &p)?;
        self.pool[i].1 += n;
        self.c.appends += 1;
        self.c.bytes_written += n;
        Ok(())
    }

    fn sync(&mut self, f: &File, p: &Path) -> Result<(), Error> {
        if self.fsync {
            let t = Instant::now();
            f.sync_all().map_err(|e| Error::io("fsync of", p, e))?;
            self.fsync_lat.record(t.elapsed().as_nanos() as u64);
            self.c.fsyncs += 1;
        }
        Ok(())
    }
}
