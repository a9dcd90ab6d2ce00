//! Shell completions and man pages, generated from the command-line
//! definition itself (clap's `Command`), so they never drift from it:
//! `ssdready completions bash|zsh|fish|elvish|powershell` prints a script;
//! `ssdready man DIR` writes `ssdready.1` and one page per subcommand
//! (`ssdready-run.1`, …). `docs/cli.md` says how to install them.

use clap::Command;
use std::path::Path;

/// The shells `completions` knows, as clap_complete names them.
pub const SHELLS: &str = "bash, zsh, fish, elvish or powershell";

/// Print the completion script for `shell` to standard output (a bad
/// shell name ends the command with exit code 2; standard output that
/// cannot take it with exit code 1).
pub fn completions(mut cmd: Command, shell: &str) -> crate::Done {
    use clap_complete::Shell;
    let sh: Shell = shell.parse().map_err(|_| {
        let why = format!("completions: '{shell}' is not a shell (allowed: {SHELLS})");
        crate::fail(2, &why)
    })?;
    let mut out = Vec::new();
    clap_complete::generate(sh, &mut cmd, "ssdready", &mut out);
    crate::stdout::print(&String::from_utf8_lossy(&out))
}

/// Every man page of `cmd`: (file name, roff text), the top command's
/// first, then each subcommand's (`ssdready-run.1`), depth first.
pub fn pages(cmd: &Command) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    collect(cmd.clone(), "ssdready", &mut out)?;
    Ok(out)
}

fn collect(cmd: Command, name: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), String> {
    let cmd = cmd
        .display_name(name.to_string())
        .bin_name(name.replace('-', " "));
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .date("")
        .render(&mut buf)
        .map_err(|e| format!("man page of {name}: {e}"))?;
    out.push((format!("{name}.1"), buf));
    // A hidden subcommand is the program's own (a server's job process).
    for sub in cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
    {
        collect(sub.clone(), &format!("{name}-{}", sub.get_name()), out)?;
    }
    Ok(())
}

/// Write every page of [`pages`] into `dir` (created if missing; each file
/// written atomically by the one writer: a temporary file made with
/// `O_EXCL | O_NOFOLLOW`, then a rename; a page's name that is a block
/// device, a link to one or not a regular file is refused).
pub fn write_pages(cmd: &Command, dir: &Path) -> Result<usize, String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!("man: {} is not a directory", dir.display()));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("man: {}: {e}", dir.display()))?;
    let pages = pages(cmd)?;
    for (file, text) in &pages {
        let path = dir.join(file);
        ssdready_io::writer::replace(&path, text)
            .map_err(|e| format!("man: {}: {e}", path.display()))?;
    }
    Ok(pages.len())
}
