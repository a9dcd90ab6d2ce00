//! The calibrated presets' error table, as the README shows it: every
//! published figure ([`ssdready_run::calibration::FIGURES`]) against the
//! preset measured in virtual time at the source's condition.
//! `bench/calibration.sh` runs it.

use ssdready_run::calibration::{error_pct, measure, FIGURES, TOLERANCE};

fn main() -> std::process::ExitCode {
    println!("| preset | figure | source | emulator | error | source name |");
    println!("|---|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    for f in FIGURES {
        match measure(f) {
            Ok(v) => {
                let e = error_pct(v, f.source_value);
                worst = worst.max(e.abs());
                println!(
                    "| `{}` | {} | {} {} | {} {} | {:+.1} % | {} |",
                    f.preset,
                    f.what,
                    show(f.source_value),
                    f.unit,
                    show(v),
                    f.unit,
                    e,
                    f.source
                );
            }
            Err(e) => {
                eprintln!("{}: {}: {e}", f.preset, f.what);
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    println!(
        "\n{} figures, largest error {worst:.1} % (bar: {:.0} %)",
        FIGURES.len(),
        TOLERANCE * 100.0
    );
    std::process::ExitCode::SUCCESS
}

/// Three significant figures, thousands grouped.
fn show(v: f64) -> String {
    if v >= 100_000.0 {
        format!("{:.0}K", v / 1e3)
    } else if v >= 10_000.0 {
        format!("{:.1}K", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
