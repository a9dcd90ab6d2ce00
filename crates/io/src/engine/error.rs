//! Why an engine stops its worker ([`EngineError`]), below the engines and
//! the buffers and memory they set up, which all return it.

/// An engine failure that stops the worker (not a failed I/O: those come
/// back as negative results).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine cannot work with this job on this machine; the message says
    /// why and what to do.
    #[error("{0}")]
    Unsupported(String),
    /// A system call of the engine itself failed.
    #[error("{what}: {source}")]
    Sys {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}
