//! The calibrated presets hold their sources: every published figure in
//! `ssdready_run::calibration::FIGURES`, measured on its preset in virtual
//! time at the source's condition, within 15 % (the bar), and
//! every calibrated preset listed with a description and at least four
//! figures.

use ssdready_emu::config::PRESETS;
use ssdready_run::calibration::{error_pct, measure, FIGURES, TOLERANCE};

#[test]
fn every_calibrated_figure_is_within_15_percent_of_its_source() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut off = Vec::new();
    for f in FIGURES {
        let v = measure(f).unwrap_or_else(|e| panic!("{}: {}: {e}", f.preset, f.what));
        let e = error_pct(v, f.source_value);
        eprintln!(
            "{:9} {:45} source {:>10.1} model {:>10.1} {:+6.1} %",
            f.preset, f.what, f.source_value, v, e
        );
        if e.abs() > TOLERANCE * 100.0 {
            off.push(format!(
                "{} {}: {v:.1} vs {} ({e:+.1} %)",
                f.preset, f.what, f.source_value
            ));
        }
    }
    assert!(off.is_empty(), "outside the bar: {off:#?}");
}

#[test]
fn each_calibrated_class_is_a_listed_preset_with_its_figures() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for name in ["nvme-tlc", "dc-tlc", "qlc-sata", "optane"] {
        let (_, desc) = PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        assert!(desc.contains("calibrated"), "{name}: {desc}");
        let n = FIGURES.iter().filter(|f| f.preset == name).count();
        assert!(n >= 4, "{name}: {n} figures");
    }
}

/// The measurement can fail a preset: the same figures on a preset fitted
/// to something else are far off (a test that cannot fail proves nothing).
#[test]
fn a_preset_of_another_class_misses_the_figures() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let f = FIGURES
        .iter()
        .find(|f| f.preset == "optane" && f.what.contains("QD 1"))
        .unwrap();
    let other = ssdready_run::calibration::Figure {
        preset: "qlc-sata",
        ..*f
    };
    let v = measure(&other).unwrap();
    assert!(error_pct(v, f.source_value) > 100.0, "{v}");
}
