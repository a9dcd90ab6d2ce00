//! `read_iolog` and `write_iolog` in virtual time, as the real worker has
//! them (`worker::replay`): the clone's trace goes into its flow, which
//! then issues the trace's requests at the trace's times (simulated), and
//! the recorder notes what it issues at simulated times; the recorded text
//! comes back in the worker's statistics and is written when the run ends.

use super::outcome::SimError;
use ssdready_core::spec::JobSpec;
use ssdready_core::stats::WorkerStats;
use ssdready_workload::jobflow::JobFlow;
use ssdready_workload::replay::cursor::Replay;
use ssdready_workload::replay::record::Recorder;

/// `flow`, replaying clone `clone`'s trace and recording its requests when
/// the job asks.
pub(super) fn attach(spec: &JobSpec, clone: u32, mut flow: JobFlow) -> Result<JobFlow, SimError> {
    if let Some(entries) = crate::replay::open(spec, clone) {
        let entries = entries.map_err(|e| {
            SimError::Refused(format!("job '{}': option 'read_iolog': {e}", spec.name))
        })?;
        flow = flow.with_replay(Replay::new(entries, &spec.iolog, &spec.iolog.files));
    }
    if crate::replay::record_path(spec, clone).is_some() {
        let target = spec
            .filename
            .first()
            .cloned()
            .unwrap_or_else(|| "emu".into());
        flow = flow.with_recorder(Recorder::new(vec![target]));
    }
    Ok(flow)
}

/// When the worker is done: the recorded log into `stats`, and a trace
/// that could not be read to its end as the refusal.
pub(super) fn finish(
    spec: &JobSpec,
    clone: u32,
    flow: &mut JobFlow,
    stats: &mut WorkerStats,
) -> Result<(), SimError> {
    if let (Some(text), Some(path)) = (flow.take_record(), crate::replay::record_path(spec, clone))
    {
        stats.iolog_record = Some(Box::new((path, text)));
    }
    match flow.replay_error() {
        Some(e) => Err(SimError::Refused(format!(
            "job '{}': option 'read_iolog': {e}",
            spec.name
        ))),
        None => Ok(()),
    }
}
