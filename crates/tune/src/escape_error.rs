//! Why the process could not leave its groups for groups of ssdready's
//! own ([`EscapeError`]), shared by the move ([`crate::escape`]) and the
//! limits a group of its own keeps ([`crate::escape_only`]).

/// Why the process could not leave its groups.
#[derive(Debug, thiserror::Error)]
pub enum EscapeError {
    #[error("measuring from a cgroup of ssdready's own needs root")]
    NotRoot,
    #[error("reading {path}: {why}")]
    Read { path: String, why: String },
    #[error("writing the journal {path}: {why}; no cgroup was made")]
    Journal { path: String, why: String },
    #[error("making the cgroup {dir}: {err}")]
    Make { dir: String, err: std::io::Error },
    #[error("moving this process into {dir}: {err}")]
    Move { dir: String, err: std::io::Error },
    #[error("this process already measures from cgroups of its own ({path})")]
    AlreadyOpen { path: String },
    #[error("keeping {file} = {value} in {dir}: {why}")]
    Keep {
        dir: String,
        file: String,
        value: String,
        why: String,
    },
}
