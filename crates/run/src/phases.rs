//! A run's phases (split at `stonewall`) and reporting groups. A leaf.

use ssdready_core::spec::JobSpec;

/// Split jobs into phases at `stonewall` and number their reporting groups
/// (a new group at `new_group`, which stonewall implies).
pub fn phases_and_groups(specs: &[JobSpec]) -> (Vec<Vec<usize>>, Vec<u32>) {
    let mut phases: Vec<Vec<usize>> = Vec::new();
    let mut groups = Vec::new();
    let mut group = 0u32;
    for (i, s) in specs.iter().enumerate() {
        if i > 0 && s.new_group {
            group += 1;
        }
        groups.push(group);
        if phases.is_empty() || (i > 0 && s.stonewall) {
            phases.push(Vec::new());
        }
        phases.last_mut().expect("a phase").push(i);
    }
    (phases, groups)
}
