//! What a candidate cause's test finds ([`Test`], [`Found`]), and the
//! small words its evidence is written with (a percentage, a CPU list,
//! a profile's top layers).

use super::caps::Setting;

/// What a candidate's test found.
pub enum Test {
    /// It holds, with its evidence.
    Holds(Found),
    /// Ruled out, and why.
    No(String),
}

/// A cause that holds: which part of it, the evidence, the setting that
/// holds it (where one does), and how far its deciding figure was past its
/// threshold, percent of the threshold.
pub struct Found {
    pub part: String,
    pub evidence: Vec<String>,
    pub setting: Option<Setting>,
    pub margin_pct: Option<f64>,
}

/// The largest of the costs measured in turns that stand beyond twice
/// their error (`(cost %, error %)`; no error: taken as measured).
pub fn cost_beyond_error(costs: impl Iterator<Item = (Option<f64>, Option<f64>)>) -> Option<f64> {
    costs
        .filter(|(c, e)| e.is_none_or(|e| c.unwrap_or(0.0) > 2.0 * e))
        .filter_map(|(c, _)| c)
        .reduce(f64::max)
}

/// A percentage as the text writes it.
pub fn pct(x: f64) -> String {
    format!("{x:.0} %")
}

/// `0-1,3`.
pub fn cpu_list(cpus: &[u32]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The top layers of a profile as `io_uring 41 %, block-core 26 %`.
pub fn top_layers(layers: &[(String, f64, f64, Option<f64>)], n: usize) -> String {
    layers
        .iter()
        .filter(|l| l.1 >= 5.0)
        .take(n)
        .map(|l| format!("{} {}", l.0, pct(l.1)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the CPU-bound thread's core does: the profile's layers without
/// other processes (named apart).
pub fn core_part(
    emu: bool,
    profile: Option<&ssdready_measured::summary::ProfileSummary>,
) -> String {
    if let Some(p) = profile {
        let mine: Vec<_> = p
            .layers
            .iter()
            .filter(|l| l.0 != "other user")
            .cloned()
            .collect();
        if !mine.is_empty() {
            let mut s = top_layers(&mine, 3);
            if let Some(o) = p.layers.iter().find(|l| l.0 == "other user" && l.1 >= 20.0) {
                s.push_str(&format!(
                    "; other processes took {} of the busy CPU",
                    pct(o.1)
                ));
            }
            return s;
        }
    }
    match emu {
        true => "ssdready's worker loop and the emulator's queue pair (the emulator runs in the process: no kernel below it)".into(),
        false => "its own CPU time (run as root for the split by layer)".into(),
    }
}
