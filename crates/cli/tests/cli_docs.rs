//! The command line's conventions: man pages and shell completions
//! generated from the command-line definition (every subcommand has its
//! page; each shell gets a script), `--version` with the build's commit,
//! and plain output (no escape byte) when standard output is not a
//! terminal.

use crate::common;
use common::ssdready;

/// The subcommands `ssdready --help` lists (clap's own `help` aside).
fn subcommands() -> Vec<String> {
    let out = ssdready(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.split("Commands:")
        .nth(1)
        .unwrap_or("")
        .split("\n\n")
        .next()
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn man_pages_cover_every_subcommand() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let subs = subcommands();
    assert!(subs.len() >= 10, "{subs:?}");
    let dir = tempfile::tempdir().unwrap();
    let out = ssdready(&["man", dir.path().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let top = std::fs::read_to_string(dir.path().join("ssdready.1")).unwrap();
    assert!(
        top.starts_with(".ie") || top.contains(".TH"),
        "not roff: {}",
        &top[..80.min(top.len())]
    );
    for s in &subs {
        let page = dir.path().join(format!("ssdready-{s}.1"));
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(text.contains(".SH NAME"), "{s}");
        assert!(
            top.contains(&format!("ssdready\\-{s}(1)")) || top.contains(s.as_str()),
            "{s} not in ssdready.1"
        );
    }
    // Not a directory: one line, exit 2.
    let file = dir.path().join("ssdready.1");
    let out = ssdready(&["man", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn completions_for_each_shell_know_the_subcommands() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = ssdready(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        for s in ["study", "characterize", "strategies", "run"] {
            assert!(text.contains(s), "{shell}: {s}");
        }
    }
    let out = ssdready(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

#[test]
fn version_names_the_commit_when_built_from_git() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&["--version"]);
    let v = String::from_utf8_lossy(&out.stdout);
    assert!(
        v.starts_with(&format!("ssdready {}", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    let git = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match git {
        Ok(g) if g.status.success() => {
            let commit = String::from_utf8_lossy(&g.stdout).trim().to_string();
            // The binary may predate the newest commit in a work tree that
            // is being committed to; it names a commit of this repository.
            let named = v.split('(').nth(1).map(|c| c.trim_end_matches([')', '\n']));
            let named = named.map(|c| c.trim_end_matches("-dirty")).unwrap_or("");
            assert_eq!(named.len(), 12, "{v}");
            let exists = std::process::Command::new("git")
                .args(["cat-file", "-e", &format!("{named}^{{commit}}")])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(exists, "{v} (HEAD is {commit})");
        }
        _ => eprintln!("no git here: the version alone is checked"),
    }
}

#[test]
fn output_through_a_pipe_has_no_escape_codes() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for format in ["normal", "json", "json+"] {
        let out = ssdready(&[
            "run",
            "--name=j",
            "--ioengine=null",
            "--size=4m",
            "--bs=4k",
            "--rw=randread",
            &format!("--output-format={format}"),
        ]);
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
            "{format}"
        );
    }
}
