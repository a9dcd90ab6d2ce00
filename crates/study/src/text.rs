//! The study's plan as printed before it starts: the targets and the
//! sweeps with their ETA. (The findings printed at the end are the
//! diagnosis's: `ssdready_diagnosis::text`.)

use crate::plan::Plan;
use ssdready_diagnosis::answer::{describe, fmt_duration};
use ssdready_measured::record::TargetProfile;
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
    if p.budget_s > 0.0 && eta > p.budget_s {
        let _ = writeln!(
            s,
            "  more than the budget of {}: the budget's clock drops what does not fit, repeats first",
            fmt_duration(p.budget_s)
        );
    }
    for sw in &p.sweeps {
        let _ = writeln!(s, "  {:<12} {:>3} runs  {}", sw.name, sw.points, sw.what);
    }
    for k in &p.skipped {
        let _ = writeln!(s, "  skipped: {}: {}", k.what, k.why);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{fit_budget, StudyOptions};
    use ssdready_measured::record::TargetKind;

    #[test]
    fn a_plan_longer_than_its_budget_says_the_clock_drops_what_does_not_fit() {
        let t = [TargetProfile {
            spec: "emu:x25e".into(),
            kind: TargetKind::Emulator,
            writable: true,
            logical_block_size: 512,
            ..Default::default()
        }];
        let o = StudyOptions {
            quick: true,
            budget_s: 600.0,
            cpus: 2,
            ..Default::default()
        };
        let mut p = crate::plan::plan(&t, &o);
        fit_budget(&mut p, &t, &o);
        p.budget_s = 600.0;
        assert!(!plan(&t, &p, true).contains("more than the budget"));
        p.budget_s = 20.0;
        let text = plan(&t, &p, true);
        assert!(
            text.contains("more than the budget of 20 s: the budget's clock drops what does not fit, repeats first"),
            "{text}"
        );
    }
}
