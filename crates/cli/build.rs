//! Puts the git commit the binary is built from into `--version`
//! (`SSDREADY_VERSION`: `0.1.0 (abc123def456)`, with `-dirty` when the work
//! tree has uncommitted changes). Without git or outside a checkout (a
//! source tarball, a vendored copy), the version is the package's alone.

use std::process::Command;

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
    for path in ["HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &r]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
