//! Why a workload did not give a result ([`Error`]).

/// Why a workload did not give a result.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request cannot be run as given (exit code 2, nothing written).
    #[error("{0}")]
    BadInput(String),
    /// Something this machine lacks (e.g. PostgreSQL not installed).
    #[error("{0}")]
    Missing(String),
    /// A failure while running.
    #[error("{0}")]
    Runtime(String),
    /// Stopped by a signal before anything could be measured.
    #[error("interrupted before the timed phase")]
    Interrupted,
}

impl Error {
    pub(crate) fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        Error::Runtime(format!("{what} {}: {e}", path.display()))
    }
}
