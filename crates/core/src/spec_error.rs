//! [`SpecError`]: a bad option or an inconsistent job, as one line that
//! names the job, where it was written, the option and what is allowed.

use std::fmt;

/// A bad option or an inconsistent job, with everything needed for a
/// one-line message: which job, which option, what was wrong, what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct SpecError {
    /// The job's name, when known.
    pub job: Option<String>,
    /// Where the option was written (`file:line` or `line N`), when from a job file.
    pub at: Option<String>,
    /// The option at fault.
    pub option: String,
    /// What is wrong, including the allowed values.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.job, &self.at) {
            (Some(j), Some(at)) => write!(f, "job '{j}' ({at}): ")?,
            (Some(j), None) => write!(f, "job '{j}': ")?,
            (None, Some(at)) => write!(f, "{at}: ")?,
            (None, None) => {}
        }
        if self.message.starts_with("is ") {
            write!(f, "option '{}' {}", self.option, self.message)
        } else {
            write!(f, "option '{}': {}", self.option, self.message)
        }
    }
}

impl SpecError {
    /// An error about `option`.
    pub fn new(option: &str, message: impl Into<String>) -> Self {
        SpecError {
            job: None,
            at: None,
            option: option.into(),
            message: message.into(),
        }
    }
    /// The same error, attributed to a job (kept if already attributed).
    pub fn in_job(mut self, job: &str) -> Self {
        if self.job.is_none() {
            self.job = Some(job.to_string());
        }
        self
    }
    /// The same error, located in a job file (kept if already located).
    pub fn at(mut self, at: Option<&str>) -> Self {
        if self.at.is_none() {
            self.at = at.map(String::from);
        }
        self
    }
}
