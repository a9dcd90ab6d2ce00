//! The worker's part of `read_iolog` and `write_iolog`: the trace the
//! clone replays goes into its flow (which then issues the trace's
//! requests, at the trace's times, instead of the plan's), and so does the
//! recorder of what it issues; the recorded text comes back in its
//! statistics, written when the run ends. A job with neither keeps the
//! flow as it was (its lean path untouched).

use super::ctx::WorkerCtx;
use ssdready_core::stats::WorkerStats;
use ssdready_io::EngineError;
use ssdready_workload::jobflow::JobFlow;
use ssdready_workload::replay::cursor::Replay;
use ssdready_workload::replay::record::Recorder;

/// `flow`, replaying the clone's trace and recording its requests when the
/// job asks.
pub(super) fn attach(ctx: &WorkerCtx, mut flow: JobFlow) -> Result<JobFlow, EngineError> {
    let spec = &*ctx.spec;
    if let Some(entries) = crate::replay::open(spec, ctx.index) {
        let entries = entries.map_err(|e| {
            // The job's name is added where the worker's error is reported.
            EngineError::Unsupported(format!("option 'read_iolog': {e}"))
        })?;
        flow = flow.with_replay(Replay::new(entries, &spec.iolog, &spec.iolog.files));
    }
    if crate::replay::record_path(spec, ctx.index).is_some() {
        flow = flow.with_recorder(Recorder::new(target_names(ctx)));
    }
    Ok(flow)
}

/// The names of the clone's targets, as the log records them.
fn target_names(ctx: &WorkerCtx) -> Vec<String> {
    let n = ctx
        .regions
        .iter()
        .map(|r| r.file as usize + 1)
        .max()
        .unwrap_or(1);
    (0..n)
        .map(|i| match ctx.targets.get(i) {
            Some(t) => t.path.to_string_lossy().into_owned(),
            None => ctx
                .spec
                .filename
                .get(i)
                .cloned()
                .unwrap_or_else(|| "emu".into()),
        })
        .collect()
}

/// When the worker is done: the recorded log into `stats`, and a trace
/// that could not be read to its end as the error.
pub(super) fn finish(
    ctx: &WorkerCtx,
    flow: &mut JobFlow,
    stats: &mut WorkerStats,
) -> Result<(), EngineError> {
    if let (Some(text), Some(path)) = (
        flow.take_record(),
        crate::replay::record_path(&ctx.spec, ctx.index),
    ) {
        stats.iolog_record = Some(Box::new((path, text)));
    }
    match flow.replay_error() {
        Some(e) => Err(EngineError::Unsupported(format!(
            "option 'read_iolog': {e}"
        ))),
        None => Ok(()),
    }
}
