//! ssdready's own apparatus, weighed as a cause wherever it is on the
//! I/O's path:
//!
//! * the built-in drive behind the kernel: its transport (FUSE + loop, or
//!   ublk) measured with a zero-time drive at each depth
//!   ([`crate::transport::calibration`]) has a ceiling of its own; when it explains
//!   the drive's peak, the apparatus holds the peak — not the device, not
//!   a limit below the host — and the study says so with the transport's
//!   ceiling and the platform's own peak on RAM beside it;
//! * the built-in drive inside ssdready's own process: no kernel is on its
//!   path, so what the study calls the platform there is ssdready itself;
//!   the study says so first and names the commands that do measure this
//!   platform.

pub use crate::zero_drive::TransportCeiling;

use crate::figures::Figures;
use crate::limit::{Cause, Layer, RuledOut};
use ssdready_core::units::fmt_count;
use ssdready_measured::record::{Evidence, TargetKind, TargetProfile, Verdict};

/// The transport's ceiling explains the peak when the peak reaches this
/// share of it: the drive at zero time behind the same transport did no
/// better, within the runs' noise.
pub const EXPLAINS: f64 = 0.8;

/// A drive past this multiple of its transport's zero-time ceiling beat
/// what nothing behind that transport can beat: the ceiling's measurement
/// was disturbed (other work during its turns), and it weighs nothing.
pub const BEATEN: f64 = 1.25;

/// What holds the peak beside the transport, kept: the limits set on the
/// machine for the study's group, and other work, each with evidence of
/// its own (the zero-time drive ran under them too, so its ceiling
/// includes them).
const KEPT: [Cause; 4] = [
    Cause::IoThrottle,
    Cause::CpuQuota,
    Cause::CpusAllowed,
    Cause::OtherWork,
];

/// Weigh the transport's ceiling against the peak: record it, and where
/// it explains the peak (and no limit set on the machine, nor other work,
/// holds it), make the apparatus the cause. A calibration without the
/// zero-time drive's IOPS (kept before they were measured) weighs nothing.
pub fn weigh(f: &mut Figures) {
    let (Some(cal), Some(peak)) = (f.calibration.as_ref(), f.peak.as_ref()) else {
        return;
    };
    let Some(p) = cal.at(peak.qd).filter(|p| p.drive_iops > 0.0) else {
        return;
    };
    let platform = f.platform.as_ref().and_then(|p| p.peak.as_ref());
    let c = TransportCeiling {
        transport: cal.transport.clone(),
        qd: peak.qd,
        iops: p.drive_iops,
        peak_iops: peak.iops,
        device_iops: peak.device_iops,
        platform_iops: platform.map(|p| p.iops),
        platform_qd: platform.map(|p| p.qd),
        explains: peak.iops >= EXPLAINS * p.drive_iops && peak.iops <= BEATEN * p.drive_iops,
        beaten: peak.iops > BEATEN * p.drive_iops,
    };
    let s = &mut f.saturation;
    if c.explains && !KEPT.contains(&s.limit) {
        if s.limit != Cause::Apparatus {
            s.ruled_out.push(RuledOut {
                cause: s.limit,
                why: format!(
                    "the transport's own ceiling explains the peak ({})",
                    c.part()
                ),
            });
        }
        s.limit = Cause::Apparatus;
        s.layer = Layer::Apparatus;
        s.part = c.part();
        s.setting = None;
        s.evidence.insert(0, c.part());
        if let Some(pl) = c.platform() {
            s.evidence.insert(1, pl);
        }
    }
    f.transport_ceiling = Some(c);
}

/// The rules a transport's ceiling that explains the peak replaces: what
/// they would say of the peak is the apparatus's.
pub const REPLACED: [&str; 6] = [
    "below-host-limit",
    "drive-daemon-limit",
    "drive-daemon-limit-beside-the-platform",
    "limit-not-identified",
    "device-limits-reads",
    "device-queue-limit",
];

/// The finding of a transport's ceiling that explains the peak.
pub fn ceiling_verdict(f: &Figures) -> Option<Verdict> {
    let c = f.transport_ceiling.as_ref().filter(|c| c.explains)?;
    if f.saturation.limit != Cause::Apparatus {
        return None;
    }
    let beside = c.platform().map(|p| format!("; {p}")).unwrap_or_default();
    let alone = c
        .device_iops
        .map(|d| format!(" The drive's own model gives {} IOPS there.", fmt_count(d)))
        .unwrap_or_default();
    Some(Verdict {
        rule: "apparatus-transport-ceiling".into(),
        finding: format!(
            "ssdready's own apparatus holds the drive at {} IOPS (QD {}): {}{beside}.{alone} Neither the device nor anything below this host holds it.",
            fmt_count(c.peak_iops),
            c.qd,
            c.part()
        ),
        evidence: Evidence {
            figures: vec![
                ("transport_ceiling_iops".into(), fmt_count(c.iops)),
                ("peak_iops".into(), fmt_count(c.peak_iops)),
                (
                    "platform_peak_iops".into(),
                    c.platform_iops.map_or("not measured".into(), fmt_count),
                ),
            ],
            runs: f.peak.as_ref().map(|p| p.runs.clone()).unwrap_or_default(),
        },
        recommendation: match c.platform_iops {
            Some(p) => format!(
                "Read this platform from its own peak on RAM ({} IOPS), and the drive's curve for its latency and shape at low depth: the transport's ceiling is ssdready's, and no faster device or higher provisioned rate would raise it. To study a device, name it (ssdready study /dev/DEVICE).",
                fmt_count(p)
            ),
            None => "The transport's ceiling is ssdready's, and no faster device or higher provisioned rate would raise it: read this platform from the QD 1 figures less the transport, or study a device by name (ssdready study /dev/DEVICE).".into(),
        },
        confidence: "high".into(),
        confidence_why: "the same transport measured by this study with a zero-time drive at the same depth".into(),
        noise_pct: None,
    })
}

/// The line said first of a study of the built-in drive inside ssdready's
/// own process.
pub fn in_process_line(t: &TargetProfile) -> Option<String> {
    (t.kind == TargetKind::Emulator).then(|| {
        "IN SSDREADY'S OWN PROCESS: the built-in drive was studied with no kernel on its path (no system call, block layer or driver): every figure of \"the platform\" below is ssdready's own, not Linux's".to_string()
    })
}

/// How to measure this platform instead.
pub const MEASURE_THE_PLATFORM: &str = "To measure this platform, study a file on this file system (ssdready study ./ssdready-study.dat, no root needed), or, as root, the built-in drive behind the kernel (sudo ssdready study)";

/// The headline of a study of the built-in drive inside ssdready's own
/// process.
pub fn in_process_verdict(t: &TargetProfile) -> Option<Verdict> {
    (t.kind == TargetKind::Emulator).then(|| Verdict {
        rule: "in-process-drive".into(),
        finding: "This study measured the built-in drive inside ssdready's own process: no kernel is on that path, so what it says of \"the platform\" (how much of the drive it delivers, what it adds to latency) describes ssdready's engine, not Linux on this machine.".into(),
        evidence: Evidence {
            figures: vec![("target".into(), t.spec.clone())],
            runs: Vec::new(),
        },
        recommendation: format!("{MEASURE_THE_PLATFORM}."),
        confidence: "high".into(),
        confidence_why: "the target is the emulator's in-process engine".into(),
        noise_pct: None,
    })
}

/// The finding of a transport's ceiling the drive beat: its measurement
/// was disturbed, so neither the ceiling nor the transport's time taken
/// out of the drive's latency is to be trusted, and it is not kept.
pub fn beaten_verdict(f: &Figures) -> Option<Verdict> {
    let c = f.transport_ceiling.as_ref().filter(|c| c.beaten)?;
    Some(Verdict {
        rule: "transport-ceiling-disturbed".into(),
        finding: format!(
            "The drive's transport was measured wrong: {}. A zero-time drive behind the same transport cannot be slower than the drive, so that measurement was disturbed (other work during its turns); it is not used to name what holds the peak, and the transport's time taken out of the drive's latency is suspect too.",
            c.part()
        ),
        evidence: Evidence {
            figures: vec![
                ("transport_ceiling_iops".into(), fmt_count(c.iops)),
                ("peak_iops".into(), fmt_count(c.peak_iops)),
            ],
            runs: f.peak.as_ref().map(|p| p.runs.clone()).unwrap_or_default(),
        },
        recommendation: "The measurement is not kept: the next study of the built-in drive measures its transport again; run it on a quiet machine.".into(),
        confidence: "high".into(),
        confidence_why: "the drive's own peak against the zero-time drive's rate at the same depth".into(),
        noise_pct: None,
    })
}

/// Where a finding said after this platform's own headline goes: just
/// after it, or first where there is none.
pub fn after_headline(verdicts: &[Verdict]) -> usize {
    verdicts
        .iter()
        .position(|v| v.rule == "platform-peak-headline")
        .map_or(0, |i| i + 1)
}

/// Put the apparatus's findings in their places: a study in ssdready's
/// own process says so first; a transport's ceiling that explains the
/// peak replaces what the rules said of the peak, after the platform's
/// own headline where there is one.
pub fn add_verdicts(verdicts: &mut Vec<Verdict>, f: &Figures, t: &TargetProfile) {
    if let Some(v) = ceiling_verdict(f) {
        verdicts.retain(|v| !REPLACED.contains(&v.rule.as_str()));
        verdicts.insert(after_headline(verdicts), v);
    }
    if let Some(v) = beaten_verdict(f) {
        verdicts.insert(after_headline(verdicts), v);
    }
    if let Some(v) = in_process_verdict(t) {
        verdicts.insert(0, v);
    }
}

#[cfg(test)]
#[path = "apparatus_tests.rs"]
mod tests;
