//! A job's targets resolved before anything is written: the emulated
//! device, the null engine's imaginary region, or the files and devices
//! of each clone — named and sized by fio's rules ([`fileset`]): the
//! `filename` list shared by every clone, or without one, fio's own
//! files (`jobname.N.M` in `directory` or the current directory, each
//! clone its own) when the job names an engine, a directory or anything
//! about its files. Each distinct path is resolved and checked once
//! (existence, access, the safety checks on devices, O_DIRECT alignment,
//! discard), over the union of the regions its clones cover.

use crate::failure::{bad, Failure};
use crate::prepared::{CloneTargets, PreparedJob};
use ssdready_core::resolved::ResolvedJob;
use ssdready_core::spec::{Amount, EngineKind, JobSpec};
use ssdready_emu::engine::SharedDevice;
use ssdready_io::engines::libaio::check_context;
use ssdready_io::engines::uring::{check_iopoll, check_ring};
use ssdready_io::target::{self, Target, TargetKind, TargetNeeds};
use ssdready_workload::fileset::{self, PathInfo};
use ssdready_workload::plan::Region;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Why a job's targets cannot be used as it asks (the job's name is added
/// by the caller): each message names the option and what is allowed.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// `sprandom`'s regions do not fit what the job covers.
    #[error("option '{option}': {why}")]
    Sprandom { option: &'static str, why: String },
    #[error(transparent)]
    Spec(#[from] ssdready_core::spec::SpecError),
    #[error("option 'fill_device': free space of {}: {err}", .path.display())]
    FreeSpace {
        path: std::path::PathBuf,
        err: std::io::Error,
    },
    #[error("option 'directory': {0} is not a directory (fio needs it to exist too)")]
    NotADirectory(String),
    #[error(
        "the job opens {need} files and the open-files limit (ulimit -n) is {limit}: \
         raise it (ulimit -n {raise}) or use fewer files (nrfiles, numjobs)",
        raise = need + 256
    )]
    OpenFiles { need: u64, limit: u64 },
    #[error("option 'atomic': statx of {name}: {err}")]
    Statx { name: String, err: std::io::Error },
    #[error(
        "option 'atomic': {0} has no torn-write protection here: statx reports no \
         STATX_WRITE_ATOMIC units (needs Linux 6.11+ and a file system or device with atomic writes)"
    )]
    NoAtomicWrites(String),
    #[error(
        "option 'atomic': {name} takes atomic writes of {min} to {max} bytes (powers of two); bs {bs} is not one"
    )]
    AtomicSize {
        name: String,
        min: u32,
        max: u32,
        bs: u32,
    },
    #[error(transparent)]
    Placement(#[from] ssdready_io::placement::PlacementError),
    #[error(transparent)]
    Engine(#[from] ssdready_io::EngineError),
    #[error(transparent)]
    Mmap(#[from] ssdready_io::engines::mmap::MmapBlockSize),
    #[error(transparent)]
    Ext4(#[from] ssdready_io::engines::e4defrag::Ext4Error),
}

/// fio's `sprandom` over the `len` bytes a clone covers: each region
/// holds a block, and no less than the device's cache (`spr_cs`).
fn sprandom_fits(spec: &JobSpec, len: u64) -> Result<(), PrepareError> {
    if !spec.sprandom.on {
        return Ok(());
    }
    let logical = spec.size.map_or(len, |s| s.min(len));
    let bs = u64::from(spec.bs.for_dir(1).min());
    ssdready_core::spec_sprandom::SprandomSpec::check_size(&spec.sprandom, logical, bs)
        .map_err(|(option, why)| PrepareError::Sprandom { option, why })
}

/// Resolve `spec`'s targets; see the module docs.
pub(crate) fn prepare(
    mut spec: JobSpec,
    allow_destructive: bool,
    devices: &BTreeMap<String, Arc<SharedDevice>>,
) -> Result<PreparedJob, Failure> {
    let job = spec.name.clone();
    let in_job = |m: String| bad(format!("job '{job}': {m}"));
    if crate::passthru::is_passthru(&spec) {
        crate::passthru::check_job(&mut spec).map_err(|e| in_job(e.to_string()))?;
    }
    crate::zbd::resolve_units(&mut spec, devices).map_err(|e| in_job(e.to_string()))?;
    if spec.ioengine == EngineKind::Emu {
        let dev = devices
            .get(&spec.filename[0])
            .expect("a device per emulator target")
            .clone();
        let clones = (0..spec.numjobs)
            .map(|w| {
                let (offset, len) = fileset::region_on(&spec, w, dev.capacity())
                    .map_err(|e| in_job(e.to_string()))?;
                if u64::from(spec.bs.max()) > len {
                    return Err(in_job(format!(
                        "option 'bs': block size {} is larger than the {len} bytes the job covers",
                        spec.bs.max()
                    )));
                }
                sprandom_fits(&spec, len).map_err(|e| in_job(e.to_string()))?;
                Ok(CloneTargets {
                    targets: Arc::new(Vec::new()),
                    regions: vec![Region {
                        file: 0,
                        offset,
                        len,
                    }],
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        crate::strategy::plan(&spec, &[], Some(&dev.params)).map_err(in_job)?;
        return Ok(PreparedJob {
            regions: vec![span(clones.iter().map(|c| c.regions[0]))],
            resolved: Arc::new(ResolvedJob::new(&spec)),
            spec: Arc::new(spec),
            targets: Arc::new(Vec::new()),
            clones,
            emu: Some(dev),
            zbd: None,
        });
    }
    if spec.ioengine == EngineKind::Null {
        let step = spec.offset_increment.bytes().unwrap_or(0);
        let clones: Vec<CloneTargets> = (0..spec.numjobs)
            .map(|w| {
                Ok(CloneTargets {
                    targets: Arc::new(Vec::new()),
                    regions: vec![Region {
                        file: 0,
                        offset: spec.offset + step * u64::from(w),
                        len: null_region_len(&spec, w).map_err(|e| in_job(e.to_string()))?,
                    }],
                })
            })
            .collect::<Result<_, Failure>>()?;
        return Ok(PreparedJob {
            regions: vec![span(clones.iter().map(|c| c.regions[0]))],
            resolved: Arc::new(ResolvedJob::new(&spec)),
            spec: Arc::new(spec),
            targets: Arc::new(Vec::new()),
            clones,
            emu: None,
            zbd: None,
        });
    }
    files(spec, allow_destructive)
}

/// The bytes clone `clone` of a null-engine job moves: `size`, or, as
/// fio's null engine sizes its files, `nrfiles` files of `filesize` each.
fn null_region_len(spec: &JobSpec, clone: u32) -> Result<u64, PrepareError> {
    if let Some(size) = spec.size {
        return Ok(size);
    }
    let files = vec![0; spec.nrfiles.max(1) as usize];
    let regions = ssdready_workload::fileset::regions(spec, clone, &files)?;
    Ok(regions.iter().map(|&(_, len)| len).sum())
}

/// A stop request (Ctrl-C) while preparing many files ends it at once.
fn stopped(stop: &std::sync::atomic::AtomicBool) -> Result<(), Failure> {
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Failure::Interrupted(
            "interrupted while preparing the job's files".into(),
        ));
    }
    Ok(())
}

/// The smallest region holding all of `regions`.
fn span(regions: impl Iterator<Item = Region>) -> Region {
    let (mut lo, mut hi, mut file) = (u64::MAX, 0u64, 0);
    for r in regions {
        lo = lo.min(r.offset);
        hi = hi.max(r.offset + r.len);
        file = r.file;
    }
    let lo = lo.min(hi);
    Region {
        file,
        offset: lo,
        len: hi - lo,
    }
}

/// What is at `path` now, for fio's naming and sizing rules.
fn path_info(path: &str, allow_destructive: bool) -> Result<PathInfo, TargetError> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(path) {
        Ok(md) if md.file_type().is_block_device() => {
            let needs = TargetNeeds {
                bytes: None,
                offset: 0,
                modifies: false,
                allow_destructive,
                allow_mounted_write: false,
            };
            let t = target::resolve(Path::new(path), needs)?;
            Ok(PathInfo {
                exists: true,
                regular: false,
                size: t.size,
            })
        }
        Ok(md) => Ok(PathInfo {
            exists: true,
            regular: md.is_file(),
            size: if md.is_file() {
                md.len()
            } else {
                // A device-DAX character device's size is in sysfs.
                ssdready_io::engines::devdax::device_size(&md).unwrap_or(0)
            },
        }),
        Err(_) => Ok(PathInfo::default()),
    }
}

type TargetError = ssdready_io::target::TargetError;

/// fio's `fill_device` on a file: the job covers the file as it is plus
/// more than the free space of its file system (`f_bfree`, with a margin
/// for what the file system's own accounting gets wrong), so that it is the
/// file system's ENOSPC that ends it, as in fio.
fn fill_size(path: &str, now: u64) -> Result<u64, PrepareError> {
    let p = Path::new(path);
    let on = if p.exists() {
        p
    } else {
        match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        }
    };
    let free =
        ssdready_io::target::space::free_space(on).map_err(|err| PrepareError::FreeSpace {
            path: on.to_path_buf(),
            err,
        })?;
    Ok(now + free.free + free.free / 16 + (16 << 20))
}

/// Regular files below `dir`, recursively (fio's `opendir`).
fn list_files(dir: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut todo = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| e.to_string())? {
            let e = e.map_err(|e| e.to_string())?;
            let ft = e.file_type().map_err(|e| e.to_string())?;
            if ft.is_dir() {
                todo.push(e.path());
            } else if ft.is_file() {
                out.push(e.path().display().to_string());
            }
        }
    }
    Ok(out)
}

/// The job's files and devices, per clone.
fn files(spec: JobSpec, allow_destructive: bool) -> Result<PreparedJob, Failure> {
    let job = spec.name.clone();
    let in_job = |m: String| bad(format!("job '{job}': {m}"));
    check_directories(&spec).map_err(|e| in_job(e.to_string()))?;
    if spec.engine_named.as_deref() == Some("dev-dax") {
        crate::target_checks::dax_names(&spec, allow_destructive)?;
    }
    let stop = crate::stop::flag();
    let mut layout = Layout::default();
    for w in 0..spec.numjobs {
        layout.add_clone(&spec, w, allow_destructive, &stop)?;
    }
    let Layout {
        paths, per_clone, ..
    } = layout;
    check_open_files(&spec, paths.len()).map_err(|e| in_job(e.to_string()))?;
    let spans = spans(&per_clone, paths.len());
    let passthru = crate::passthru::is_passthru(&spec);
    let mut targets = Vec::with_capacity(paths.len());
    for (name, r) in paths.iter().zip(&spans) {
        stopped(&stop)?;
        targets.push(match passthru {
            true => crate::passthru::target(&spec, name, *r, allow_destructive)?,
            false => check_target(&spec, name, *r, allow_destructive)?,
        });
    }
    check_engine(&spec, &targets).map_err(|e| in_job(e.to_string()))?;
    check_numa_nodes(&spec).map_err(|e| in_job(e.to_string()))?;
    crate::strategy::plan(&spec, &targets, None).map_err(in_job)?;
    let clones = per_clone
        .iter()
        .map(|mine| clone_targets(mine, &targets))
        .collect();
    Ok(PreparedJob {
        resolved: Arc::new(ResolvedJob::new(&spec)),
        spec: Arc::new(spec),
        targets: Arc::new(targets),
        regions: spans,
        clones,
        emu: None,
        zbd: None,
    })
}

/// Every directory in option `directory` must exist (fio's rule too).
fn check_directories(spec: &JobSpec) -> Result<(), PrepareError> {
    let Some(d) = spec.directory.as_deref() else {
        return Ok(());
    };
    for dir in d.split(':').filter(|x| !x.is_empty()) {
        if !Path::new(dir).is_dir() {
            return Err(PrepareError::NotADirectory(dir.to_string()));
        }
    }
    Ok(())
}

/// One clone's use of a path: its index in [`Layout::paths`], offset, length.
type Use = (usize, u64, u64);

/// The distinct paths in order of first use, and each clone's uses of them.
#[derive(Default)]
struct Layout {
    paths: Vec<String>,
    /// Each path's index in `paths`: linear in the number of files (a
    /// search of `paths` per file was quadratic: 10 s for 65,536 files).
    index: std::collections::HashMap<String, usize>,
    per_clone: Vec<Vec<Use>>,
    /// What is known of each path, probed once.
    infos: BTreeMap<String, PathInfo>,
}

impl Layout {
    /// Name, size and place clone `w`'s files, and add them.
    fn add_clone(
        &mut self,
        spec: &JobSpec,
        w: u32,
        allow_destructive: bool,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<(), Failure> {
        let in_job = |m: String| bad(format!("job '{}': {m}", spec.name));
        let probe = |p: &str| path_info(p, allow_destructive).unwrap_or_default();
        let names = fileset::names(spec, w, &probe, &list_files).map_err(bad)?;
        let mut sizes = Vec::with_capacity(names.len());
        for n in &names {
            stopped(stop)?;
            sizes.push(self.size_of(spec, n, allow_destructive)?);
        }
        // fio's file_append applies to regular files only.
        let infos = &self.infos;
        let on_device = |n: &String| infos.get(n).is_some_and(|i| i.exists && !i.regular);
        let regions = if spec.access.file_append && names.iter().any(on_device) {
            let mut no_append = spec.clone();
            no_append.access.file_append = false;
            fileset::regions(&no_append, w, &sizes)
        } else {
            fileset::regions(spec, w, &sizes)
        }
        .map_err(bad)?;
        let mut mine = Vec::with_capacity(names.len());
        for (n, (offset, len)) in names.into_iter().zip(regions) {
            let paths = &mut self.paths;
            let i = *self.index.entry(n.clone()).or_insert_with(|| {
                paths.push(n);
                paths.len() - 1
            });
            if u64::from(spec.bs.max()) > len {
                return Err(in_job(format!(
                    "option 'bs': block size {} is larger than the {len} bytes the job covers on {}",
                    spec.bs.max(),
                    self.paths[i]
                )));
            }
            sprandom_fits(spec, len).map_err(|e| in_job(e.to_string()))?;
            mine.push((i, offset, len));
        }
        self.per_clone.push(mine);
        Ok(())
    }

    /// The size the job sees for path `n`, probing it the first time.
    fn size_of(
        &mut self,
        spec: &JobSpec,
        n: &str,
        allow_destructive: bool,
    ) -> Result<u64, Failure> {
        let job = &spec.name;
        if !self.infos.contains_key(n) {
            let i = if crate::passthru::is_passthru(spec) {
                // The device's own capacity (READ CAPACITY, Identify).
                let d = crate::passthru::probe(spec, n)?;
                PathInfo {
                    exists: true,
                    regular: false,
                    size: d.bytes,
                }
            } else {
                path_info(n, allow_destructive)
                    .map_err(|e| crate::target_checks::target_failure(job, e))?
            };
            self.infos.insert(n.to_string(), i);
        }
        let i = &self.infos[n];
        Ok(if spec.fill_device && (i.regular || !i.exists) {
            fill_size(n, i.size).map_err(|m| bad(format!("job '{job}': {m}")))?
        } else {
            i.size
        })
    }
}

/// Every file is held open for the run: more than the open-files limit
/// would fail after laying out; say so now.
fn check_open_files(spec: &JobSpec, paths: usize) -> Result<(), PrepareError> {
    let Some(limit) = ssdready_io::written::open_files_limit() else {
        return Ok(());
    };
    let open = match spec.openfiles {
        0 => paths as u64,
        n => u64::from(n).min(paths as u64),
    };
    let need = open * u64::from(spec.numjobs.max(1));
    if need + 64 > limit {
        return Err(PrepareError::OpenFiles { need, limit });
    }
    Ok(())
}

/// For each path, the span its clones cover together.
fn spans(per_clone: &[Vec<Use>], paths: usize) -> Vec<Region> {
    let mut grouped: Vec<Vec<Region>> = (0..paths).map(|_| Vec::new()).collect();
    for &(i, o, l) in per_clone.iter().flatten() {
        grouped[i].push(Region {
            file: i as u32,
            offset: o,
            len: l,
        });
    }
    grouped.into_iter().map(|g| span(g.into_iter())).collect()
}

/// One clone's targets and its regions, indexing them.
fn clone_targets(mine: &[Use], targets: &[Target]) -> CloneTargets {
    CloneTargets {
        targets: Arc::new(mine.iter().map(|x| targets[x.0].clone()).collect()),
        regions: mine
            .iter()
            .enumerate()
            .map(|(k, &(_, offset, len))| Region {
                file: k as u32,
                offset,
                len,
            })
            .collect(),
    }
}

/// Resolve and check one target for the span `r` its clones cover.
fn check_target(
    spec: &JobSpec,
    name: &str,
    r: Region,
    allow_destructive: bool,
) -> Result<Target, Failure> {
    let job = &spec.name;
    let in_job = |m: String| bad(format!("job '{job}': {m}"));
    let needs = TargetNeeds {
        bytes: Some(r.offset + r.len),
        offset: r.offset,
        modifies: spec.modifies_target(),
        allow_destructive,
        allow_mounted_write: spec.access.allow_mounted_write,
    };
    if spec.engine_named.as_deref() == Some("dev-dax") {
        return crate::target_checks::dax_target(job, name, needs);
    }
    crate::target_checks::check_device_exists(job, name)?;
    if spec.dir_engine() && Path::new(name).is_dir() {
        // dirstat, dirdelete (and dircreate, which then fails with
        // EEXIST, as fio's): the directory is the engine's business.
        return Ok(target::directory(Path::new(name)));
    }
    let t = target::resolve(Path::new(name), needs)
        .map_err(|e| crate::target_checks::target_failure(job, e))?;
    // The mapping engines open no descriptor with O_DIRECT: direct=1 picks
    // their kind of stores.
    let direct = spec.direct && !ssdready_core::option_table_engines::maps_targets(spec);
    crate::target_checks::check_access(job, &t, spec.modifies_target(), direct)?;
    if direct {
        t.check_direct_alignment(&spec.bs.all(), r.offset)
            .map_err(|e| in_job(e.to_string()))?;
        if let Amount::Bytes(step) = spec.offset_increment {
            t.check_direct_alignment(&spec.bs.all(), step)
                .map_err(|e| in_job(format!("option 'offset_increment': {e}")))?;
        }
    }
    if spec.access.atomic && spec.modifies_target() {
        check_atomic(name, &spec.bs.all()).map_err(|e| in_job(e.to_string()))?;
    }
    let verify_trims = spec.verify.trims().is_some() && spec.modifies_target();
    if (spec.rw.trims() || verify_trims) && t.kind == TargetKind::Block && !t.discard {
        return Err(in_job(format!(
            "{name} does not support discard (queue/discard_max_bytes is 0)"
        )));
    }
    if let ssdready_core::spec::Distribution::ZonedAbs(z) = &spec.random_distribution {
        let end = z
            .iter()
            .map(|d| d.iter().map(|x| x.span).sum::<u64>())
            .max()
            .unwrap_or(0);
        if end > r.len {
            return Err(in_job(format!(
                "option 'random_distribution': the zoned_abs zones end at {end} bytes, beyond the {} bytes the job covers on {name} (fio stops with 'zoned_abs sizes exceed file size')",
                r.len
            )));
        }
    }
    Ok(t)
}

/// `atomic`: the target takes RWF_ATOMIC writes of every block size
/// (statx's STATX_WRITE_ATOMIC units; the kernel wants a power of two
/// between them).
fn check_atomic(name: &str, sizes: &[u32]) -> Result<(), PrepareError> {
    let units = target::atomic_write_units(Path::new(name)).map_err(|err| PrepareError::Statx {
        name: name.to_string(),
        err,
    })?;
    let Some((min, max)) = units else {
        return Err(PrepareError::NoAtomicWrites(name.to_string()));
    };
    match sizes
        .iter()
        .find(|&&b| !b.is_power_of_two() || b < min || b > max)
    {
        Some(&bs) => Err(PrepareError::AtomicSize {
            name: name.to_string(),
            min,
            max,
            bs,
        }),
        None => Ok(()),
    }
}

/// The NUMA nodes a job names exist here (`numa_cpu_nodes`,
/// `numa_mem_policy`).
fn check_numa_nodes(spec: &JobSpec) -> Result<(), PrepareError> {
    use ssdready_io::placement::check_nodes;
    if let Some(nodes) = &spec.sched.numa_cpu_nodes {
        check_nodes("numa_cpu_nodes", nodes)?;
    }
    if let Some(p) = &spec.sched.numa_mem_policy {
        check_nodes("numa_mem_policy", &p.nodes())?;
    }
    Ok(())
}

/// The engine's own limits, checked by creating its context once.
fn check_engine(spec: &JobSpec, targets: &[Target]) -> Result<(), PrepareError> {
    if spec.ioengine == EngineKind::Libaio {
        check_context(spec)?;
    }
    if spec.engine_named.as_deref() == Some("mmap") {
        ssdready_io::engines::mmap::check_job(spec)?;
    }
    if spec.engine_named.as_deref() == Some("e4defrag") {
        for t in targets {
            ssdready_io::engines::e4defrag::check_ext4(&t.path)?;
        }
    }
    if matches!(spec.ioengine, EngineKind::IoUring | EngineKind::UringCmd) {
        check_ring(spec)?;
        if spec.hipri {
            check_iopoll(targets)?;
        }
    }
    Ok(())
}
