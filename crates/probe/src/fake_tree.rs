//! A file-system tree in a temporary directory, for the readers' tests:
//! sysfs, procfs and cgroup files written where a [`Sys`] rooted there
//! reads them. Test modules add their own builders (`impl Fake`).

use crate::sys::Sys;
use std::path::{Path, PathBuf};

pub struct Fake(tempfile::TempDir);

impl Fake {
    pub fn new() -> Fake {
        Fake(tempfile::tempdir().unwrap())
    }
    pub fn root(&self) -> &Path {
        self.0.path()
    }
    pub fn sys(&self) -> Sys<'_> {
        Sys::new(self.0.path())
    }
    /// `rel` (written as an absolute path) in the tree.
    pub fn at(&self, rel: &str) -> PathBuf {
        self.0.path().join(rel.trim_start_matches('/'))
    }
    pub fn file(&self, rel: &str, text: &str) -> &Fake {
        let p = self.at(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }
    pub fn link(&self, rel: &str, target: &str) -> &Fake {
        let p = self.at(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
        self
    }
}
