//! The house stays layered: among the top-level modules of `core` (the
//! job language and the result model), of `workload` (what each worker
//! does next) and of the binary crate, no module reaches back to one that
//! reaches it, beyond a pair. A module
//! depends on another when its code (not its comments or unit tests) names
//! `crate::OTHER`; a directory module counts as one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Each top-level module and the top-level modules its code names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module = |f: &Path| -> String {
        let rel = f.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let mods: BTreeSet<String> = files.iter().map(|f| module(f)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = module(f);
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let edges = g.entry(m.clone()).or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name != m && mods.contains(&name) {
                    edges.insert(name);
                }
            }
        }
    }
    g
}

/// The strongly connected groups of more than `max` modules.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>, max: usize) -> Vec<Vec<String>> {
    // Reachability by search from each module (the graphs are small).
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in g.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let all: BTreeMap<&String, BTreeSet<String>> = g.keys().map(|m| (m, reach(m))).collect();
    let mut groups: Vec<Vec<String>> = Vec::new();
    for m in g.keys() {
        let group: Vec<String> = g
            .keys()
            .filter(|n| all[m].contains(*n) && all[*n].contains(m))
            .cloned()
            .collect();
        if group.len() > max && !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src")
}

#[test]
fn core_has_no_module_cycle_beyond_a_pair() {
    let found = cycles(&graph(&src("core")), 2);
    assert!(found.is_empty(), "modules that reach each other: {found:?}");
}

#[test]
fn the_workload_has_no_module_cycle_beyond_a_pair() {
    let g = graph(&src("workload"));
    assert!(g.contains_key("plan") && g.contains_key("jobflow"), "{g:?}");
    let found = cycles(&g, 2);
    assert!(found.is_empty(), "modules that reach each other: {found:?}");
}

#[test]
fn the_binary_has_no_module_cycle_beyond_a_pair() {
    let found = cycles(&graph(&src("cli")), 2);
    assert!(found.is_empty(), "modules that reach each other: {found:?}");
}

#[test]
fn a_cycle_is_found() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let edge = |g: &mut BTreeMap<String, BTreeSet<String>>, a: &str, b: &str| {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    };
    edge(&mut g, "spec", "options");
    edge(&mut g, "options", "spec");
    assert!(cycles(&g, 2).is_empty(), "a pair is allowed");
    edge(&mut g, "options", "plan");
    edge(&mut g, "plan", "spec");
    assert_eq!(cycles(&g, 2), vec![vec!["options", "plan", "spec"]]);
}
