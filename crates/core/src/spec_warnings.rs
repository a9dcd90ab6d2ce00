//! [`JobSpec::warnings`]: what a job allows but probably does not mean —
//! options without effect with its engine, layout or other options, as
//! fio warns of them. Printed before the run; nothing is refused here
//! (refusals are [`JobSpec::validate`]'s, in `spec_validate`).

use crate::spec::*;

impl JobSpec {
    /// Things that are allowed but probably not what was meant.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = self.layout_and_engine_warnings();
        w.extend(self.option_warnings());
        w
    }

    /// The first of [`JobSpec::warnings`]: zones, the engine, verification
    /// by several workers, the depth of a synchronous engine.
    fn layout_and_engine_warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.zones.active().is_some() && (self.nrfiles > 1 || self.filename.len() > 1) {
            w.push(format!(
                "job '{}': zonemode=strided has no effect with several files (fio turns it off alike)",
                self.name
            ));
        }
        if self.files.write_barrier > 0 {
            w.push(format!(
                "job '{}': write_barrier has no effect with ioengine={} (fio honours it only with its libpmem engine)",
                self.name,
                self.engine_name()
            ));
        }
        // Clones each start offset_increment further: with an increment of at
        // least the size each writes its own region (no warning then).
        let own_regions = matches!(
            (self.offset_increment, self.size),
            (Amount::Bytes(inc), Some(size)) if inc > 0 && inc >= size
        );
        if self.verify.on()
            && self.rw.modifies()
            && self.numjobs > 1
            && self.verify.do_verify
            && !own_regions
        {
            w.push(format!(
                "job '{}': {} workers write the same blocks: each verifies only its own writes, \
                 so one worker's data overwritten by another's fails verification (fio warns alike)",
                self.name, self.numjobs
            ));
        }
        if self.ioengine == EngineKind::Psync && self.iodepth > 1 {
            w.push(format!(
                "job '{}': ioengine={} is synchronous; iodepth={} has no effect (use io_uring, or numjobs)",
                self.name,
                self.engine_named.as_deref().unwrap_or("psync"),
                self.iodepth
            ));
        }
        if self.ioengine == EngineKind::Sg && self.iodepth > 1 {
            w.push(format!(
                "job '{}': ioengine=sg sends each command with the synchronous SG_IO ioctl; iodepth={} has no effect (use numjobs)",
                self.name, self.iodepth
            ));
        }
        w
    }

    /// The rest of [`JobSpec::warnings`]: options that do nothing as given.
    fn option_warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.ss_dur_ns == 0
            && (self.steadystate != crate::steady::SsCriterion::default() || self.ss_ramp_ns > 0)
        {
            w.push(format!(
                "job '{}': steadystate without steadystate_duration does nothing (a duration of 0, \
                 the default, turns steady-state detection off, as in fio)",
                self.name
            ));
        }
        if self.bs_unaligned && self.direct && !self.bs.is_fixed() {
            w.push(format!(
                "job '{}': bs_unaligned with direct=1: sizes that are not multiples of the device's logical block size fail with EINVAL (fio warns the same)",
                self.name
            ));
        }
        let files = self.files_per_clone();
        if self.openfiles > 0 && u64::from(self.openfiles) < files && self.opendir.is_none() {
            w.push(format!(
                "job '{}': openfiles={}: ssdready keeps all {files} files open (fio opens at most {} at a time, closing one to open the next)",
                self.name, self.openfiles, self.openfiles
            ));
        }
        if self.temporal_merge == TemporalMerge::Off {
            for (k, _) in self
                .options_given
                .iter()
                .filter(|(k, _)| k.starts_with("merge_"))
            {
                w.push(format!(
                    "job '{}': {k} has no effect without temporal_merge=stm or atm",
                    self.name
                ));
            }
        }
        w
    }
}
