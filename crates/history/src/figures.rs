//! A result reduced to named figures, each with the way that is better and
//! the noise it came with: the input of a comparison and the summary a
//! history row keeps.
//!
//! A **study** (`study.json`) gives, for every point it measured (`qd-16`,
//! `threads-2x1`, `bs-64k-read`, …), IOPS, mean and p99 latency and
//! whole-system CPU per I/O, each the median of the point's repeats; plus
//! the peak IOPS, the knee, delivered % and the platform's share of QD 1
//! latency. Its noise is what its repeats showed: the spread (max − min
//! over the median) of the point's own repeats, or, for a point measured
//! once, the study's typical spread for that figure (the median over its
//! repeated points).
//!
//! A **run** (native JSON) gives, per job and direction, IOPS, bandwidth,
//! mean and p99 latency, and per phase whole-system and process CPU per
//! I/O. A single run has no repeats; its noise comes from its per-second
//! series: twice the standard deviation of the whole seconds' IOPS over
//! their mean (about the range three or four repeats would show, to match
//! a study's spread). Mean latency takes the same noise (at a fixed queue
//! depth it moves inversely with IOPS); p99 takes twice it (no per-second
//! percentiles are kept, and tails move more than means); CPU per I/O
//! takes the larger of its phase's IOPS noise and the CPU source's own
//! error bound. A run shorter than three whole seconds has no noise
//! estimate.
//!
//! **Key figures** are those a regression check (`--baseline`) judges:
//! IOPS, mean and p99 latency, and whole-system CPU per I/O — of every job
//! of a run; of a study, the peak IOPS and the QD 1 latency and CPU.

use serde_json::Value;
use ssdready_core::result::RunResult;

mod model;
mod run;
mod study;
mod view;

pub use model::{join_command, Better, Figure, Fingerprint, KeyFigures, Kind, Series, Side, Unit};

pub(crate) use run::describe;
pub use run::{from_run, job_workload};
pub use study::from_study;
pub use view::{DeviceLimitView, FiguresView, PlanView, PlatformShareView, StudyView};

/// JSON text that is neither a study document nor a run's native JSON
/// this ssdready reads.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("{schema} schema version {version} is newer than this ssdready's {supported}")]
    Newer {
        schema: String,
        version: u64,
        supported: u32,
    },
    #[error("{schema} without a schema_version")]
    NoVersion { schema: String },
    #[error("a study document that does not read: {0}")]
    Study(serde_json::Error),
    #[error("a run result that does not read: {0}")]
    Run(serde_json::Error),
    #[error("fio's JSON layout (allowed: ssdready's native JSON, --output-format=native, or a study.json)")]
    FioLayout,
    #[error(
        "schema '{schema}' is not ssdready's (allowed: a study.json, schema {}, or a run's native JSON, schema {})",
        ssdready_measured::schema::SCHEMA,
        ssdready_core::result::SCHEMA
    )]
    Foreign { schema: String },
}

/// A study document or a run's native JSON, told apart by its `schema`.
pub enum Document {
    /// A study, as the history reads it ([`StudyView`]).
    Study(Box<StudyView>),
    Run(Box<RunResult>),
}

impl Document {
    /// Parse JSON text; the error says what it is when it is neither.
    pub fn parse(text: &str) -> Result<Document, DocumentError> {
        let v: Value = serde_json::from_str(text).map_err(DocumentError::NotJson)?;
        let schema = v.get("schema").and_then(Value::as_str).unwrap_or("");
        let version = v.get("schema_version").and_then(Value::as_u64);
        let check = |name: &str, supported: u32| match version {
            Some(x) if x as u32 <= supported => Ok(()),
            Some(x) => Err(DocumentError::Newer {
                schema: name.into(),
                version: x,
                supported,
            }),
            None => Err(DocumentError::NoVersion {
                schema: name.into(),
            }),
        };
        match schema {
            ssdready_measured::schema::SCHEMA => {
                check(schema, ssdready_measured::schema::SCHEMA_VERSION)?;
                serde_json::from_value(v)
                    .map(|d| Document::Study(Box::new(d)))
                    .map_err(DocumentError::Study)
            }
            ssdready_core::result::SCHEMA => {
                check(schema, ssdready_core::result::SCHEMA_VERSION)?;
                serde_json::from_value(v)
                    .map(|d| Document::Run(Box::new(d)))
                    .map_err(DocumentError::Run)
            }
            _ if v.get("fio version").is_some() => Err(DocumentError::FioLayout),
            _ => Err(DocumentError::Foreign {
                schema: schema.into(),
            }),
        }
    }

    /// Reduce it.
    pub fn side(&self) -> Side {
        match self {
            Document::Study(d) => from_study(d),
            Document::Run(r) => from_run(r),
        }
    }
}
