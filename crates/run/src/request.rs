//! What a run is asked to do: the parsed `run` command line (its job
//! sections and the tool's switches).

use ssdready_core::options::Section;
use std::path::PathBuf;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The terminal summary.
    Normal,
    /// fio's JSON layout, plus an `ssdready` object per job.
    Json,
    /// fio's json+ (histogram bins added).
    JsonPlus,
    /// ssdready's native, versioned JSON (docs/result-schema.md).
    Native,
    /// fio's terse format, version 3 (`--minimal`).
    Terse,
}

/// When live progress is shown (fio's `--eta`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Eta {
    /// When stderr is a terminal (fio's `auto`).
    #[default]
    Auto,
    /// Always; as lines when stderr is not a terminal.
    Always,
    /// Never.
    Never,
}

/// A parsed `run` command line.
#[derive(Debug, Default)]
pub struct RunArgs {
    pub formats: Vec<Format>,
    pub output: Option<PathBuf>,
    /// `--report=DIR`: the native JSON and the HTML report go there.
    pub report: Option<PathBuf>,
    pub quiet: bool,
    pub allow_destructive: bool,
    pub parse_only: bool,
    /// `--profile`: system-wide CPU samples by kernel layer.
    pub profile: bool,
    /// `--decompose` (Some(true)), `--no-decompose` (Some(false)), or
    /// neither: on when root and a job's I/O reaches a block device.
    pub decompose: Option<bool>,
    /// `--save`: record the run in the history database.
    pub save: bool,
    /// `--db=PATH`: the history database (default: the user's data directory).
    pub db: Option<PathBuf>,
    /// `--baseline=ID|PATH`: a saved run to check this one against.
    pub baseline: Option<String>,
    /// Every section in effect order: command-line globals, job files, command-line jobs.
    pub sections: Vec<Section>,
    /// `--eta`.
    pub eta: Eta,
    /// `--eta-newline=T`: progress as a new line every T (ns).
    pub eta_newline_ns: Option<u64>,
    /// `--status-interval=T`: cumulative figures every T (ns).
    pub status_interval_ns: Option<u64>,
    /// `--bandwidth-log[=NAME]`: NAME-{read,write,trim}_bw.log.
    pub bandwidth_log: Option<String>,
}
