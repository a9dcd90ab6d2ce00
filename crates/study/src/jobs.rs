//! A point's `ssdready run` options: a measured job per target (`m`, or
//! `m0`, `m1`… for several), after a fill job on emulated devices (each run
//! gets a fresh emulated device, and reads of pages never written skip the
//! flash).

use crate::model::{TargetKind, TargetProfile};
use crate::plan::{fmt_bs, Point, Settings, Workload};
use crate::summary::FILL_JOB;

/// Resolve a point's workload once its queue depth is known.
pub fn workload(p: &Point, qd: u32, targets: &[TargetProfile], engine: Option<&str>) -> Workload {
    let paths = p
        .targets
        .iter()
        .map(|&i| {
            let t = &targets[i];
            match (&t.raw_device, p.raw_device) {
                (Some(raw), true) => raw.clone(),
                _ => t.spec.clone(),
            }
        })
        .collect();
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

fn ms(s: f64) -> String {
    format!("{}ms", (s * 1000.0).round() as u64)
}

/// The options of the fill that preconditions a block device: its region
/// written once, sequentially, before any read is measured.
pub fn fill_options(w: &Workload, s: &Settings) -> Vec<String> {
    let mut o: Vec<String> = vec!["--quiet".into(), "--name=precondition".into()];
    for t in &w.targets {
        o.push(format!("--filename={t}"));
    }
    o.extend([
        "--rw=write".into(),
        format!("--bs={}", fmt_bs(w.bs)),
        format!("--iodepth={}", w.qd),
        format!("--size={}", s.region_bytes),
        "--direct=1".into(),
    ]);
    if let Some(e) = &w.engine {
        o.push(format!("--ioengine={e}"));
    }
    o
}

/// The run options of a workload.
pub fn options(
    w: &Workload,
    targets: &[TargetProfile],
    s: &Settings,
    instrumented: bool,
) -> Vec<String> {
    let kind = |path: &str| {
        targets
            .iter()
            .find(|t| t.spec == path)
            .map_or(TargetKind::BlockDevice, |t| t.kind)
    };
    let emu = |path: &str| kind(path) == TargetKind::Emulator;
    let mut o: Vec<String> = vec!["--quiet".into()];
    if instrumented {
        o.push("--profile".into());
        if w.targets.iter().any(|t| !emu(t)) {
            o.push("--decompose".into());
        }
    }
    let size = format!("--size={}", s.region_bytes);
    let reads = w.rw != "randwrite" && w.rw != "write";
    let mut filled = false;
    for t in w.targets.iter().filter(|t| emu(t) && reads) {
        o.extend([
            format!("--name={FILL_JOB}"),
            format!("--filename={t}"),
            "--rw=write".into(),
            "--bs=1m".into(),
            "--iodepth=8".into(),
            size.clone(),
        ]);
        filled = true;
    }
    let several = w.targets.len() > 1;
    for (i, t) in w.targets.iter().enumerate() {
        o.push(if several {
            format!("--name=m{i}")
        } else {
            "--name=m".into()
        });
        if filled && i == 0 {
            o.push("--stonewall".into());
        }
        o.extend([
            format!("--filename={t}"),
            format!("--rw={}", w.rw),
            format!("--bs={}", fmt_bs(w.bs)),
            format!("--iodepth={}", w.qd),
            format!("--numjobs={}", w.threads),
            size.clone(),
            format!("--runtime={}", ms(s.runtime_s)),
            "--time_based".into(),
        ]);
        // After a fill, the dies still program what the write buffer took.
        let ramp = if filled && emu(t) {
            s.ramp_s.max(crate::limit::drain_seconds(t, s.region_bytes))
        } else {
            s.ramp_s
        };
        if ramp > 0.0 {
            o.push(format!("--ramp_time={}", ms(ramp)));
        }
        if let (Some(e), false) = (&w.engine, emu(t)) {
            o.push(format!("--ioengine={e}"));
        }
        if !emu(t) {
            o.push(format!("--direct={}", u8::from(w.direct)));
        }
        if let Some(m) = w.rwmixread {
            o.push(format!("--rwmixread={m}"));
        }
        if let Some(s) = w.strategy.as_deref().and_then(crate::strategies::strategy) {
            o.extend(s.options.iter().map(|x| x.to_string()));
        }
    }
    o
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
        let o = options(&w, &[t], &s, false);
        let at = |x: &str| o.iter().position(|a| a == x).unwrap();
        assert!(at("--name=fill") < at("--stonewall"));
        assert!(o.contains(&"--runtime=1500ms".to_string()));
        assert!(o.contains(&"--iodepth=8".to_string()));
        assert!(!o
            .iter()
            .any(|a| a.starts_with("--ioengine") || a.starts_with("--direct")));
    }
}
