//! The apparatus weighed, from recorded studies: the default root study
//! (the built-in drive behind the kernel, FUSE + loop, beside the platform
//! on RAM) with its transport's ceiling at the drive's peak or far above
//! it, and a study of the built-in drive in ssdready's own process.

use super::*;
use crate::model::StudyDoc;

fn fixture(name: &str) -> StudyDoc {
    let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The default root study with its calibration's zero-time drive giving
/// `times` the drive's own IOPS at every depth.
fn root_study(times: f64) -> StudyDoc {
    let mut d = fixture("kernel-drive-default-loaded");
    let curve = d.figures.qd_curve.clone();
    let cal = d.figures.calibration.as_mut().unwrap();
    for p in cal.points.iter_mut() {
        let at = curve.iter().find(|c| c.qd == p.qd).unwrap();
        p.drive_iops = times * at.iops;
    }
    d
}

fn rules(j: &crate::Judgement) -> Vec<&str> {
    j.verdicts.iter().map(|v| v.rule.as_str()).collect()
}

#[test]
fn a_transport_ceiling_that_explains_the_peak_is_the_apparatus_beside_the_platform() {
    let j = crate::rejudge(&root_study(1.05));
    let s = &j.figures.saturation;
    assert_eq!(s.limit, Cause::Apparatus, "{s:?}");
    assert!(
        s.part.contains("the drive's transport (fuse+loop)"),
        "{}",
        s.part
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("this platform alone on RAM gives 150.6K")),
        "{:?}",
        s.evidence
    );
    let c = j.figures.transport_ceiling.as_ref().unwrap();
    assert!(c.explains && c.qd == 256, "{c:?}");
    // The headline is this platform's; the apparatus follows it, with the
    // transport's ceiling and the platform's peak.
    let r = rules(&j);
    let first = r.iter().find(|r| **r != "noisy-machine").unwrap();
    assert_eq!(*first, "platform-peak-headline", "{r:?}");
    let at = r.iter().position(|r| *r == "apparatus-transport-ceiling");
    assert_eq!(
        at,
        r.iter()
            .position(|r| *r == "platform-peak-headline")
            .map(|i| i + 1),
        "{r:?}"
    );
    let v = j
        .verdicts
        .iter()
        .find(|v| v.rule == "apparatus-transport-ceiling")
        .unwrap();
    assert!(
        v.finding
            .contains("ssdready's own apparatus holds the drive at 38.5K"),
        "{}",
        v.finding
    );
    assert!(v.finding.contains("150.6K"), "{}", v.finding);
    for v in &j.verdicts {
        for bad in [
            "a higher provisioned rate raises it",
            "A rate limit below this host",
        ] {
            assert!(
                !v.finding.contains(bad) && !v.recommendation.contains(bad),
                "{}: {v:?}",
                v.rule
            );
        }
    }
    for gone in REPLACED {
        assert!(!r.contains(&gone), "{gone}: {r:?}");
    }
}

#[test]
fn a_transport_far_above_the_peak_leaves_the_cause_as_it_was() {
    let before = crate::rejudge(&fixture("kernel-drive-default-loaded"));
    let j = crate::rejudge(&root_study(10.0));
    assert_eq!(j.figures.saturation.limit, before.figures.saturation.limit);
    assert_eq!(j.figures.saturation.part, before.figures.saturation.part);
    let c = j.figures.transport_ceiling.as_ref().unwrap();
    assert!(!c.explains, "{c:?}");
    assert!(!rules(&j).contains(&"apparatus-transport-ceiling"));
}

#[test]
fn a_transport_ceiling_the_drive_beat_was_disturbed_and_names_nothing() {
    let before = crate::rejudge(&fixture("kernel-drive-default-loaded"));
    // The drive at 2.3 times its transport's zero-time rate.
    let j = crate::rejudge(&root_study(0.43));
    let c = j.figures.transport_ceiling.as_ref().unwrap();
    assert!(c.beaten && !c.explains, "{c:?}");
    assert_eq!(j.figures.saturation.limit, before.figures.saturation.limit);
    let r = rules(&j);
    assert!(!r.contains(&"apparatus-transport-ceiling"), "{r:?}");
    let v = j
        .verdicts
        .iter()
        .find(|v| v.rule == "transport-ceiling-disturbed")
        .unwrap_or_else(|| panic!("{r:?}"));
    assert!(v.finding.contains("measured wrong"), "{}", v.finding);
    assert!(
        v.recommendation.contains("not kept"),
        "{}",
        v.recommendation
    );
    // Within the noise of the peak, the ceiling still explains it.
    let j = crate::rejudge(&root_study(0.9));
    let c = j.figures.transport_ceiling.as_ref().unwrap();
    assert!(c.explains && !c.beaten, "{c:?}");
}

#[test]
fn a_rate_limit_below_this_host_that_the_transport_explains_is_the_apparatus() {
    // As the README's main command was judged as root: the runs alone
    // pointed below the host (the daemon idle, the device's share low).
    let mut f = crate::rejudge(&root_study(1.05)).figures;
    f.saturation.limit = Cause::BelowHost;
    f.saturation.layer = Layer::BelowHost;
    f.saturation.part = "loop0".into();
    f.saturation.evidence.clear();
    weigh(&mut f);
    let s = &f.saturation;
    assert_eq!((s.limit, s.layer), (Cause::Apparatus, Layer::Apparatus));
    assert!(
        s.evidence[0].contains("gives at most 40.4K IOPS at QD 256"),
        "{:?}",
        s.evidence
    );
    assert!(
        s.evidence[1].contains("this platform alone on RAM"),
        "{:?}",
        s.evidence
    );
    assert!(
        s.ruled_out
            .iter()
            .any(|r| r.cause == Cause::BelowHost && r.why.contains("transport's own ceiling")),
        "{:?}",
        s.ruled_out
    );
    let mut vs = vec![
        Verdict {
            rule: "platform-peak-headline".into(),
            ..Default::default()
        },
        Verdict {
            rule: "below-host-limit".into(),
            ..Default::default()
        },
    ];
    let drive = TargetProfile {
        kind: TargetKind::BlockDevice,
        ..Default::default()
    };
    add_verdicts(&mut vs, &f, &drive);
    let r: Vec<&str> = vs.iter().map(|v| v.rule.as_str()).collect();
    assert_eq!(r, ["platform-peak-headline", "apparatus-transport-ceiling"]);
}

#[test]
fn a_calibration_kept_without_the_zero_time_drives_iops_weighs_nothing() {
    let j = crate::rejudge(&fixture("kernel-drive-default-loaded"));
    assert!(j.figures.transport_ceiling.is_none());
    assert!(!rules(&j).contains(&"apparatus-transport-ceiling"));
}

#[test]
fn a_throttle_on_the_group_stays_the_cause_under_a_transport_that_explains_the_peak() {
    let d = root_study(1.05);
    let mut f = crate::rejudge(&d).figures;
    f.saturation.limit = Cause::IoThrottle;
    f.saturation.part = "blkio".into();
    weigh(&mut f);
    assert_eq!(f.saturation.limit, Cause::IoThrottle);
    assert!(ceiling_verdict(&f).is_none());
}

#[test]
fn the_drive_in_ssdreadys_own_process_says_so_first_and_names_the_commands_that_measure_the_platform(
) {
    let t = TargetProfile {
        spec: "emu:".into(),
        kind: TargetKind::Emulator,
        ..Default::default()
    };
    let line = in_process_line(&t).unwrap();
    assert!(line.contains("no kernel on its path"), "{line}");
    let mut vs = vec![Verdict {
        rule: "device-limits-reads".into(),
        ..Default::default()
    }];
    add_verdicts(&mut vs, &Figures::default(), &t);
    assert_eq!(vs[0].rule, "in-process-drive");
    assert!(vs[0].finding.contains("not Linux"), "{}", vs[0].finding);
    assert!(
        vs[0].recommendation.contains("ssdready study ./"),
        "{}",
        vs[0].recommendation
    );
    assert!(vs[0].recommendation.contains("sudo ssdready study"));
    // A file or a device is no such study.
    let file = TargetProfile {
        kind: TargetKind::File,
        ..t
    };
    assert!(in_process_line(&file).is_none() && in_process_verdict(&file).is_none());
}
