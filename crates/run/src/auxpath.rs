//! fio's `--aux-path=DIR`: the directory for the files a run makes beside
//! its results (the verify state files). One per process, set by the
//! command line before the run; unset, they go in the current directory.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static AUX_PATH: OnceLock<PathBuf> = OnceLock::new();

/// Set the directory (the first call wins; later ones are ignored).
pub fn set(dir: &Path) {
    let _ = AUX_PATH.set(dir.to_path_buf());
}

/// `name` in the auxiliary directory, or as given when none is set.
pub fn place(name: &str) -> String {
    match AUX_PATH.get() {
        Some(d) => d.join(name).to_string_lossy().into_owned(),
        None => name.to_string(),
    }
}
