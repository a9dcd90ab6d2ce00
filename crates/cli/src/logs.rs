//! Writing fio-format logs: which files a job's options ask for, and their
//! text (rendered by `ssdready_core::iolog`).

use ssdready_core::iolog::{IoLog, LogKind};
use ssdready_core::spec::JobSpec;

/// (path, text) of every log file a worker's job asks for. `number` is the
/// worker's 1-based number in the run, as in fio's `NAME_bw.N.log`.
pub fn files_for(spec: &JobSpec, number: u32, log: &IoLog) -> Vec<(String, String)> {
    let prefix = |p: &str| {
        if p.is_empty() {
            spec.name.clone()
        } else {
            p.to_string()
        }
    };
    let mut out = Vec::new();
    if let Some(p) = &spec.write_bw_log {
        out.push((
            format!("{}_bw.{number}.log", prefix(p)),
            log.render(LogKind::Bw),
        ));
    }
    if let Some(p) = &spec.write_iops_log {
        out.push((
            format!("{}_iops.{number}.log", prefix(p)),
            log.render(LogKind::Iops),
        ));
    }
    if let Some(p) = &spec.write_lat_log {
        for k in [LogKind::Slat, LogKind::Clat, LogKind::Lat] {
            out.push((
                format!("{}_{}.{number}.log", prefix(p), k.suffix()),
                log.render(k),
            ));
        }
    }
    out
}
