//! Puts the git commit the binary is built from into `--version`
//! (`SSDREADY_VERSION`: `0.1.0 (abc123def456)`, with `-dirty` when the work
//! tree has uncommitted changes). Without git or outside a checkout (a
//! source tarball, a vendored copy), the version is the package's alone.

use std::path::Path;
use std::process::Command;

/// Where git keeps `path` (a ref, HEAD), as an absolute path.
fn git_path(path: &str) -> Option<String> {
    git(&["rev-parse", "--path-format=absolute", "--git-path", path])
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let pkg = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let version = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            let dirty = Command::new("git")
                .args(["diff", "--quiet", "HEAD", "--"])
                .status()
                .map(|s| s.code() == Some(1))
                .unwrap_or(false);
            format!("{pkg} ({commit}{})", if dirty { "-dirty" } else { "" })
        }
        None => pkg,
    };
    println!("cargo:rustc-env=SSDREADY_VERSION={version}");
    // Rebuild the version when HEAD moves (a commit, a checkout).
    // Only paths that exist are watched: cargo counts a missing watched
    // path as always stale, which would relink the binary on every build (a
    // fresh clone has no `packed-refs`; a packed branch has no loose ref).
    // The branch's own loose ref is watched, not `refs/heads`: cargo scans
    // a watched directory whole, so a commit on any other branch (another
    // worktree's) would relink this one. Only while the branch has no loose
    // ref is `refs/heads` watched, so that its first loose ref is noticed.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let loose = branch
        .as_deref()
        .and_then(git_path)
        .filter(|p| Path::new(p).exists());
    match (branch, loose) {
        (Some(r), Some(_)) => watched.push(r),
        (Some(_), None) => watched.push("refs/heads".to_string()),
        (None, _) => {}
    }
    for path in &watched {
        if let Some(p) = git_path(path).filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
