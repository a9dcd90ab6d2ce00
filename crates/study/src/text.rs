//! The study's plan as printed before it starts: the targets and the
//! sweeps with their ETA. (The findings printed at the end are the
//! diagnosis's: `ssdready_diagnosis::text`.)

use crate::plan::Plan;
use ssdready_diagnosis::answer::{describe, fmt_duration};
use ssdready_diagnosis::model::TargetProfile;
use std::fmt::Write as _;

/// The plan, before the study starts.
pub fn plan(targets: &[TargetProfile], p: &Plan, quick: bool) -> String {
    let mut s = String::new();
    for t in targets {
        let _ = writeln!(s, "target {}", describe(t));
    }
    let eta = p.eta_s(0);
    let _ = writeln!(
        s,
        "plan ({}): up to {} runs of {:.1} s{} over {}, about {} (the queue-depth sweep stops once saturated)",
        if quick { "quick" } else { "full" },
        p.points.len(),
        p.settings.runtime_s,
        if p.settings.ramp_s > 0.0 {
            format!(" after a {:.1} s ramp", p.settings.ramp_s)
        } else {
            String::new()
        },
        ssdready_core::units::fmt_bytes(p.settings.region_bytes as f64),
        fmt_duration(eta)
    );
    for sw in &p.sweeps {
        let _ = writeln!(s, "  {:<12} {:>3} runs  {}", sw.name, sw.points, sw.what);
    }
    for k in &p.skipped {
        let _ = writeln!(s, "  skipped: {}: {}", k.what, k.why);
    }
    s
}
