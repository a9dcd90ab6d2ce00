//! [`JobSpec::validate`]: every check that needs nothing but the spec, in
//! named groups (sizes, depths, engine options, merging and coalescing,
//! block-size splits, verify). Checks that need the target (bs ≤ the size
//! of a file or device, O_DIRECT alignment) run when the targets are
//! resolved, still before anything is written. Each refusal names the
//! option, the job and what is allowed.

use crate::spec::{
    BlockSizes, EngineKind, JobSpec, RwMode, SpecError, TemporalMerge, MAX_URING_DEPTH,
};
use crate::spec_sprandom::SprandomSpec;
use crate::strategy::CompletionWait;

impl JobSpec {
    /// A refusal of option `opt` of this job.
    fn refuse(&self, opt: &str, msg: String) -> Result<(), SpecError> {
        Err(SpecError::new(opt, msg).in_job(&self.name))
    }

    /// Every check that needs nothing but the spec (see the module notes).
    pub fn validate(&self) -> Result<(), SpecError> {
        self.validate_text()?;
        crate::arrivals::check(self).or_else(|(o, m)| self.refuse(o, m))?;
        crate::option_table_library::check(self)?;
        if self.zones.mode == crate::spec_io::ZoneMode::Strided && self.zones.size == 0 {
            return self.refuse(
                "zonesize",
                "zonemode=strided needs zonesize (the bytes moved in each zone; fio refuses it too)"
                    .into(),
            );
        }
        self.zbd
            .check(self.zones.mode)
            .or_else(|(o, m)| self.refuse(o, m))?;
        self.validate_sizes()?;
        self.check_sprandom().or_else(|(o, m)| self.refuse(o, m))?;
        self.validate_depths()?;
        self.validate_engine_options()?;
        self.validate_merging()?;
        self.validate_splits()?;
        self.validate_verify()
    }

    /// Offset, size, block size and file size against each other.
    fn validate_sizes(&self) -> Result<(), SpecError> {
        if let Some(size) = self.size {
            if self.offset.checked_add(size).is_none() {
                return self.refuse(
                    "offset",
                    format!(
                        "offset {} + size {size} is beyond 2^64 bytes (lower offset or size)",
                        self.offset
                    ),
                );
            }
        }
        // A replayed iolog names its own offsets (fio's t0038).
        if self.ioengine == EngineKind::Null
            && self.size.is_none()
            && self.filesize.is_none()
            && self.iolog.read.is_empty()
        {
            return self.refuse(
                "size",
                "ioengine=null does no I/O and needs size (or filesize) to plan offsets (e.g. size=1g)"
                    .into(),
            );
        }
        if self.bs.min() == 0 {
            return self.refuse(
                "bs",
                "block size 0 (allowed: at least 1 byte, e.g. 4k)".into(),
            );
        }
        if let Some(size) = self.size {
            if size == 0 {
                return self.refuse(
                    "size",
                    "size 0 (allowed: a positive size such as 1g)".into(),
                );
            }
            if u64::from(self.bs.max()) > size {
                return self.refuse(
                    "bs",
                    format!(
                        "block size {} is larger than size {size} (make bs ≤ size)",
                        self.bs.max()
                    ),
                );
            }
            self.validate_per_file(size)?;
        }
        if let Some((lo, _)) = self.filesize {
            if u64::from(self.bs.max()) > lo {
                return self.refuse(
                    "filesize",
                    format!(
                        "files of {lo} bytes are smaller than the block size {} (make filesize ≥ bs)",
                        self.bs.max()
                    ),
                );
            }
        }
        Ok(())
    }

    /// The queue depth against the engine and the batch sizes.
    fn validate_depths(&self) -> Result<(), SpecError> {
        if self.ioengine == EngineKind::IoUring && self.iodepth > MAX_URING_DEPTH {
            return self.refuse(
                "iodepth",
                format!(
                    "{} is more than io_uring's {MAX_URING_DEPTH} entries (allowed with ioengine=io_uring: 1..={MAX_URING_DEPTH})",
                    self.iodepth
                ),
            );
        }
        for (opt, v, allowed) in [
            (
                "iodepth_batch_submit",
                self.iodepth_batch_submit,
                "1..=iodepth",
            ),
            (
                "iodepth_batch_complete_min",
                self.iodepth_batch_complete_min,
                "0..=iodepth",
            ),
            (
                "iodepth_batch_complete_max",
                self.iodepth_batch_complete_max,
                "0..=iodepth, 0 meaning iodepth",
            ),
        ] {
            if v > self.iodepth {
                return self.refuse(
                    opt,
                    format!("{v} exceeds iodepth {} (allowed: {allowed})", self.iodepth),
                );
            }
        }
        Ok(())
    }

    /// Options that only some engines take: io_uring's, sg's alignment,
    /// polling and completion waits.
    fn validate_engine_options(&self) -> Result<(), SpecError> {
        let pvsync2 = self.engine_named.as_deref() == Some("pvsync2");
        if !matches!(self.ioengine, EngineKind::IoUring | EngineKind::UringCmd) {
            // sg's hipri is SGV4_FLAG_HIPRI (a polled SCSI command).
            let sg = self.ioengine == EngineKind::Sg;
            for (on, opt) in [
                (self.hipri && !pvsync2 && !sg, "hipri"),
                (self.sqthread_poll, "sqthread_poll"),
                (self.fixedbufs, "fixedbufs"),
                (self.registerfiles, "registerfiles"),
            ] {
                if on {
                    return self.refuse(
                        opt,
                        format!(
                            "only applies to ioengine=io_uring and io_uring_cmd, not {}",
                            self.ioengine.name()
                        ),
                    );
                }
            }
        }
        if self.ioengine == EngineKind::Sg {
            // SCSI addresses whole logical blocks, 512 bytes at the least
            // (the device's own size is checked when the job runs).
            if let Some(bs) = self.bs.all().into_iter().find(|b| !b.is_multiple_of(512)) {
                return self.refuse(
                    "bs",
                    format!("{bs} is not a multiple of 512: ioengine=sg sends whole SCSI logical blocks"),
                );
            }
            if !self.offset.is_multiple_of(512) {
                return self.refuse(
                    "offset",
                    format!("{} is not a multiple of 512: ioengine=sg addresses whole SCSI logical blocks", self.offset),
                );
            }
        }
        // Passthrough commands bypass the page cache whatever direct says.
        let passthru = matches!(self.ioengine, EngineKind::Sg | EngineKind::UringCmd);
        if self.hipri && !self.direct && !passthru {
            return self.refuse("hipri", "polled completions need direct=1".into());
        }
        if let Some(w) = self
            .completion
            .filter(|&w| self.hipri && w != CompletionWait::Poll)
        {
            return self.refuse(
                "completion",
                format!(
                    "completion={} contradicts hipri=1 (hipri polls in the kernel: use completion=poll \
                     with it, or drop hipri)",
                    w.name()
                ),
            );
        }
        Ok(())
    }

    /// Temporal merging and interrupt coalescing: only where they apply.
    fn validate_merging(&self) -> Result<(), SpecError> {
        if self.temporal_merge != TemporalMerge::Off && !self.on_emulator() {
            return self.refuse(
                "temporal_merge",
                format!(
                    "{} needs a target that takes vectored (multi-extent) commands, and only the emulator \
                     (filename=emu:…) does: NVMe and SCSI have no multi-extent read or write, and Linux \
                     gives a file or block device one range per request (allowed here: off)",
                    self.temporal_merge.name()
                ),
            );
        }
        if self.merge_max_bytes != 0 && self.merge_max_bytes < u64::from(self.bs.max()) {
            return self.refuse(
                "merge_max_bytes",
                format!(
                    "{} is less than the block size {} (allowed: 0 for no limit, or at least bs)",
                    self.merge_max_bytes,
                    self.bs.max()
                ),
            );
        }
        if self.coalesce.is_some_and(|c| c.n > 0 || c.us > 0)
            && matches!(self.ioengine, EngineKind::Null | EngineKind::Psync)
            && !self.on_emulator()
        {
            return self.refuse(
                if self.coalesce.is_some_and(|c| c.n > 0) {
                    "coalesce_n"
                } else {
                    "coalesce_us"
                },
                format!(
                    "interrupt coalescing does not apply to ioengine={}: {}",
                    self.ioengine.name(),
                    if self.ioengine == EngineKind::Null {
                        "it does no I/O"
                    } else {
                        "each I/O completes in its system call, with no completion interrupt to coalesce"
                    }
                ),
            );
        }
        Ok(())
    }

    /// bssplit's weights add up to 100, for each direction.
    fn validate_splits(&self) -> Result<(), SpecError> {
        for d in 0..3 {
            if let BlockSizes::Split(v) = self.bs.for_dir(d) {
                let total: u32 = v.iter().map(|p| p.1).sum();
                if total != 100 {
                    let dir = match &self.bs {
                        BlockSizes::PerDir(_) => {
                            format!(" for {}s", crate::spec_types::DIRECTIONS[d])
                        }
                        _ => String::new(),
                    };
                    return self.refuse(
                        "bssplit",
                        format!("weights{dir} add up to {total}, not 100"),
                    );
                }
            }
        }
        Ok(())
    }

    /// `size` is split evenly over several files: each must hold a block.
    fn validate_per_file(&self, size: u64) -> Result<(), SpecError> {
        if self.filesize.is_some() {
            return Ok(());
        }
        let files = self.files_per_clone();
        let per_file = size / files;
        let bs = u64::from(self.bs.max());
        if files > 1 && bs > per_file {
            return self.refuse(
                "size",
                format!(
                    "size {size} split over {files} files leaves {per_file} bytes each, less than the block size {bs} (allowed: size ≥ {})",
                    bs.saturating_mul(files)
                ),
            );
        }
        Ok(())
    }

    /// Names and paths that no system call or message could carry: a job
    /// name with a control character (it names threads and starts every
    /// error line), a path with a NUL byte.
    fn validate_text(&self) -> Result<(), SpecError> {
        if self.name.is_empty() || self.name.chars().any(char::is_control) {
            return self.refuse(
                "name",
                format!(
                    "{:?} is not a job name (allowed: text without control characters)",
                    self.name
                ),
            );
        }
        for (opt, path) in self
            .filename
            .iter()
            .map(|f| ("filename", f))
            .chain(self.directory.iter().map(|d| ("directory", d)))
            .chain(self.opendir.iter().map(|d| ("opendir", d)))
            .chain(self.filename_format.iter().map(|d| ("filename_format", d)))
        {
            if path.contains('\0') {
                return self.refuse(
                    opt,
                    format!("{path:?} contains a NUL byte (allowed: a path)"),
                );
            }
        }
        Ok(())
    }

    /// The verify options against the job's block sizes and pattern.
    fn validate_verify(&self) -> Result<(), SpecError> {
        if !self.verify.on() {
            return Ok(());
        }
        if self.rw.trims() {
            return self.refuse(
                "verify",
                format!("rw={} trims; verify checks what reads and writes move (use a read or write pattern)", self.rw.name()),
            );
        }
        if let Err((opt, msg)) = self.verify.check(&self.bs.all()) {
            return self.refuse(opt, msg);
        }
        Ok(())
    }

    /// Why a run refuses this job (empty: it runs): what it asks for that
    /// ssdready parses but cannot do, one line each, naming the job.
    pub fn refusals(&self) -> Vec<String> {
        let mut why = self.refused.clone();
        why.extend(self.sched_refusals());
        match self.engine_named.as_deref() {
            Some("vsync") if self.iodepth > 1 => why.push(format!(
                "ioengine=vsync: fio's vsync merges up to iodepth ({}) adjacent I/Os into one readv/writev; \
                 that is not supported yet (it runs at iodepth=1, or use psync)",
                self.iodepth
            )),
            Some("ftruncate") if !matches!(self.rw, RwMode::Write | RwMode::RandWrite) => why.push(format!(
                "rw={}: ioengine=ftruncate issues only writes (each sets the file's size to its offset); \
                 use rw=write or randwrite",
                self.rw.name()
            )),
            Some(e @ ("falloc" | "ftruncate")) if self.verify.on() => why.push(format!(
                "verify={}: ioengine={e} moves no data, so there is nothing to verify",
                self.verify.method.map_or("pattern", |m| m.name())
            )),
            Some("pvsync2") if self.hipri => why.push(
                "ioengine=pvsync2 with hipri: polled preadv2/pwritev2 (RWF_HIPRI) is not supported yet \
                 (use ioengine=io_uring with hipri)"
                    .into(),
            ),
            _ => {}
        }
        why.extend((self.engine().refusals)(self));
        why.extend(self.run.refusals(self.on_emulator()));
        why.extend(
            self.access
                .refusals(self.ioengine, self.engine_named.as_deref()),
        );
        why.extend(self.logs.refusal());
        if self.logs.issue_time && (self.write_lat_log.is_none() || !self.log_offset) {
            why.push(
                "option 'log_issue_time' needs write_lat_log and log_offset (as in fio)".into(),
            );
        }
        why.into_iter()
            .map(|w| format!("job '{}': {w}", self.name))
            .collect()
    }

    /// Why a run refuses the job's scheduling options (see
    /// [`crate::spec::JobSpec::refusals`]).
    pub(crate) fn sched_refusals(&self) -> Vec<String> {
        use crate::spec_types::EngineKind;
        let mut why = Vec::new();
        let engine = self.engine_name();
        let kernel_async = matches!(self.ioengine, EngineKind::IoUring | EngineKind::Libaio)
            && !self.on_emulator()
            && matches!(engine, "io_uring" | "libaio");
        if self.sched.cmdprio.on() && !kernel_async {
            why.push(format!(
                "option 'cmdprio_percentage'/'cmdprio_bssplit': per-I/O priorities are options of \
                 ioengine=io_uring and libaio (this job's engine: {})",
                if self.on_emulator() {
                    "the emulator"
                } else {
                    engine
                }
            ));
        }
        if self.sched.offload
            && (self.on_emulator()
                || self.engine_named.as_deref().is_some_and(|e| {
                    !matches!(
                        e,
                        "io_uring" | "libaio" | "psync" | "sync" | "pvsync" | "pvsync2" | "null"
                    )
                }))
        {
            why.push(format!(
                "option 'io_submit_mode': offload hands I/Os to submitter threads with engines of \
                 their own: ioengine=io_uring, libaio, psync or null (this job's engine: {})",
                if self.on_emulator() {
                    "the emulator"
                } else {
                    engine
                }
            ));
        }
        why
    }

    /// fio's adjustments once every option of a job is applied: `pre_read`
    /// turns `invalidate` off (the point is to keep the cache), and
    /// `thinktime_spin` is at most `thinktime`; `time_based` without a
    /// runtime is dropped (fio 3.33 says "time_based requires a runtime/timeout
    /// setting" and runs the job by size).
    pub(crate) fn settle(&mut self) {
        if self.files.pre_read {
            self.invalidate = false;
        }
        if self.time_based && self.runtime_ns.is_none() {
            self.time_based = false;
            self.ignored.push(
                "time_based: it needs a runtime; as fio does, the job runs by size instead".into(),
            );
        }
        self.thinktime_spin_ns = self.thinktime_spin_ns.min(self.thinktime_ns);
        self.settle_sprandom();
    }

    /// What fio sets for the job when it does not say: the LFSR and no
    /// random map.
    fn settle_sprandom(&mut self) {
        let s = &self.sprandom;
        if !s.on {
            return;
        }
        if s.lfsr_given.is_none() {
            self.lfsr = true;
            self.rand32 = false;
        }
        if s.norandommap_given.is_none() {
            self.norandommap = true;
        }
    }

    /// The refusal of a job asking for sprandom, as (option, message).
    fn check_sprandom(&self) -> Result<(), (&'static str, String)> {
        let s = &self.sprandom;
        if !s.on {
            return Ok(());
        }
        if self.rw != RwMode::RandWrite {
            return Err((
                "sprandom",
                format!(
                    "rw={}: sprandom preconditions with random writes (allowed: rw=randwrite)",
                    self.rw.name()
                ),
            ));
        }
        if s.lfsr_given == Some(false) {
            return Err((
                "random_generator",
                "sprandom requires random_generator=lfsr (or leave it out: sprandom sets it)"
                    .into(),
            ));
        }
        if s.norandommap_given == Some(false) {
            return Err((
                "norandommap",
                "sprandom requires norandommap=1 (or leave it out: sprandom sets it)".into(),
            ));
        }
        if self.filename.len() > 1 || self.nrfiles > 1 {
            return Err(("sprandom", "sprandom supports only one file".into()));
        }
        let bs = self.bs.for_dir(1);
        if !bs.is_fixed() {
            return Err((
                "bs",
                "sprandom writes one block size (allowed: a single write size, e.g. bs=4k)".into(),
            ));
        }
        if let Some(size) = self.size.or(self.filesize.map(|f| f.0)) {
            SprandomSpec::check_size(s, size, u64::from(bs.min()))?;
        }
        Ok(())
    }
}
