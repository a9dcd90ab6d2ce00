//! The file-system root that the probes read sysfs and procfs below
//! ([`Sys`]: `/` in use, a fake tree in tests), and the kernel's CPU list
//! form they write ([`cpu_list`]).

use std::path::{Path, PathBuf};

/// Paths below a file-system root.
#[derive(Clone, Copy)]
pub struct Sys<'a> {
    root: &'a Path,
}

impl<'a> Sys<'a> {
    pub fn new(root: &'a Path) -> Self {
        Sys { root }
    }
    /// `rel` (written as an absolute path) below the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel))
            .ok()
            .map(|s| s.trim().to_string())
    }
    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }
    /// Names in directory `rel`, sorted (empty when it does not exist).
    pub fn list(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(rel))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
    /// Numbered entries `prefixN` of directory `rel`, by number.
    pub fn numbered(&self, rel: &str, prefix: &str) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .list(rel)
            .iter()
            .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
            .collect();
        v.sort_unstable();
        v
    }
}

/// A CPU set in the kernel's list form: `0-3,6` (empty for none).
pub fn cpu_list(cpus: &[u32]) -> String {
    ssdready_core::units::fmt_cpu_list(cpus.iter().map(|&c| c as usize))
}
