//! A point's run request: a measured job per target (`m`, or `m0`, `m1`…
//! for several), after a fill job on emulated devices (each run gets a
//! fresh emulated device, and reads of pages never written skip the
//! flash). The study records each as the command line that repeats it
//! ([`RunRequest::command_line`]).

use crate::plan::{fmt_bs, Point, Settings, Workload};
use ssdready_measured::record::{TargetKind, TargetProfile};
use ssdready_measured::summary::FILL_JOB;
use ssdready_run::RunRequest;

/// Resolve a point's workload once its queue depth is known.
pub fn workload(p: &Point, qd: u32, targets: &[TargetProfile], engine: Option<&str>) -> Workload {
    let paths = match p.members.is_empty() {
        false => p.members.clone(),
        true => p
            .targets
            .iter()
            .map(|&i| {
                let t = &targets[i];
                match (&t.raw_device, p.raw_device) {
                    (Some(raw), true) => raw.clone(),
                    _ => t.spec.clone(),
                }
            })
            .collect(),
    };
    Workload {
        rw: p.rw.into(),
        bs: p.bs,
        qd,
        threads: p.threads,
        engine: match p.sweep {
            "engine" => p.engine.map(String::from),
            _ => p.engine.and(engine).map(String::from),
        },
        direct: p.direct,
        scheduler: p.scheduler.clone(),
        rwmixread: p.rwmixread,
        targets: paths,
        strategy: p.strategy.map(String::from),
    }
}

/// The region a job covers on `path`: the study's, within a physical
/// member's own size where `path` is one of a target's stack (a member read
/// alone is smaller than the stack; its size unread, the region's share of
/// one member), in whole MiB.
fn region_on(path: &str, targets: &[TargetProfile], region: u64) -> u64 {
    let Some(disk) = path.strip_prefix("/dev/").map(|d| d.replace('/', "!")) else {
        return region;
    };
    let member = targets
        .iter()
        .filter_map(|t| t.stack.as_ref())
        .find(|st| st.physical.contains(&disk))
        .map(|st| {
            st.layer(&disk)
                .and_then(|l| l.size_bytes)
                .unwrap_or(region / st.physical.len().max(1) as u64)
        });
    match member {
        Some(m) if m < region => match m >> 20 {
            0 => m / 4096 * 4096,
            mib => mib << 20,
        },
        _ => region,
    }
}

fn ms(s: f64) -> String {
    format!("{}ms", (s * 1000.0).round() as u64)
}

/// The request of the fill that preconditions a block device: its region
/// written once, sequentially, before any read is measured.
pub fn fill_request(w: &Workload, s: &Settings) -> RunRequest {
    let mut r = RunRequest {
        quiet: true,
        ..Default::default()
    };
    r.job("precondition");
    for t in &w.targets {
        r.set("filename", t);
    }
    r.set("rw", "write")
        .set("bs", fmt_bs(w.bs))
        .set("iodepth", w.qd)
        .set("size", s.region_bytes)
        .set("direct", 1);
    if let Some(e) = &w.engine {
        r.set("ioengine", e);
    }
    r
}

/// The run request of a workload.
pub fn request(
    w: &Workload,
    targets: &[TargetProfile],
    s: &Settings,
    instrumented: bool,
) -> RunRequest {
    let kind = |path: &str| {
        targets
            .iter()
            .find(|t| t.spec == path)
            .map_or(TargetKind::BlockDevice, |t| t.kind)
    };
    let emu = |path: &str| kind(path) == TargetKind::Emulator;
    let decompose = instrumented && w.targets.iter().any(|t| !emu(t));
    let mut r = RunRequest {
        quiet: true,
        profile: instrumented,
        decompose: decompose.then_some(true),
        ..Default::default()
    };
    let reads = w.rw != "randwrite" && w.rw != "write";
    let mut filled = false;
    for t in w.targets.iter().filter(|t| emu(t) && reads) {
        r.job(FILL_JOB)
            .set("filename", t)
            .set("rw", "write")
            .set("bs", "1m")
            .set("iodepth", 8)
            .set("size", s.region_bytes);
        filled = true;
    }
    let several = w.targets.len() > 1;
    for (i, t) in w.targets.iter().enumerate() {
        if several {
            r.job(&format!("m{i}"));
        } else {
            r.job("m");
        }
        if filled && i == 0 {
            r.flag("stonewall");
        }
        r.set("filename", t)
            .set("rw", &w.rw)
            .set("bs", fmt_bs(w.bs))
            .set("iodepth", w.qd)
            .set("numjobs", w.threads)
            .set("size", region_on(t, targets, s.region_bytes))
            .set("runtime", ms(s.runtime_s))
            .flag("time_based");
        // After a fill, the dies still program what the write buffer took.
        let ramp = if filled && emu(t) {
            s.ramp_s.max(crate::limit::drain_seconds(t, s.region_bytes))
        } else {
            s.ramp_s
        };
        if ramp > 0.0 {
            r.set("ramp_time", ms(ramp));
        }
        if let (Some(e), false) = (&w.engine, emu(t)) {
            r.set("ioengine", e);
        }
        if !emu(t) {
            r.set("direct", u8::from(w.direct));
        }
        if let Some(m) = w.rwmixread {
            r.set("rwmixread", m);
        }
        if let Some(s) = w.strategy.as_deref().and_then(crate::strategies::strategy) {
            crate::strategies::apply(s, &mut r);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Point, Qd};

    #[test]
    fn emulator_reads_start_with_a_fill_phase() {
        let t = TargetProfile {
            spec: "emu:x25e".into(),
            kind: TargetKind::Emulator,
            ..Default::default()
        };
        let p = Point {
            sweep: "qd",
            rw: "randread",
            bs: 4096,
            qd: Qd::Fixed(8),
            threads: 1,
            engine: None,
            direct: true,
            scheduler: None,
            rwmixread: None,
            targets: vec![0],
            raw_device: false,
            members: Vec::new(),
            instrumented: false,
            repeat: 1,
            writes: false,
            strategy: None,
        };
        let w = workload(&p, 8, std::slice::from_ref(&t), Some("io_uring"));
        assert_eq!(w.engine, None);
        let s = Settings {
            runtime_s: 1.5,
            ramp_s: 0.0,
            region_bytes: 32 << 20,
        };
        let o = request(&w, &[t], &s, false).command_line();
        let at = |x: &str| o.iter().position(|a| a == x).unwrap();
        assert!(at("--name=fill") < at("--stonewall"));
        assert!(o.contains(&"--runtime=1500ms".to_string()));
        assert!(o.contains(&"--iodepth=8".to_string()));
        assert!(!o
            .iter()
            .any(|a| a.starts_with("--ioengine") || a.starts_with("--direct")));
    }
}
