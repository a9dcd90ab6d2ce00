//! The HTML report: one self-contained file per study or run
//! (`report.html`), rendered from its JSON alone (`study.json`, schema
//! `ssdready.study`, or a run's native JSON, schema `ssdready.run`), so a
//! report can be re-rendered at any time and renders the same bytes.
//!
//! The charts are inline SVG drawn here ([`svg`], [`charts`]); the page
//! has a strict Content-Security-Policy and no `http(s)` reference, so it
//! opens offline and fetches nothing ([`page`]). The answer comes first:
//! the key figures and the verdicts, each linked to the chart behind it;
//! every chart has a title, units on its axes and its data in a table
//! under it, and a chart that could not be measured says why instead of
//! drawing an empty box.
//!
//! Data flows one way: the report reads the study's model
//! (`ssdready-study`), which never depends on the report.

mod applications;
mod bars;
mod capacity;
mod characterize;
pub mod charts;
mod compare;
mod costs;
mod curves;
mod exactcpu;
mod figure;
mod fleet;
mod heatmap;
pub mod page;
mod run;
mod stack;
mod strategies;
mod study;
pub mod svg;
pub mod timeline;
mod trials;
mod workloads;

use serde_json::Value;
use ssdready_characterize_judge::model::CharacterizeDoc;
use ssdready_core::result::RunResult;
use ssdready_diagnosis::model::StudyDoc;

/// A document a report can be rendered from.
#[derive(Clone, Debug)]
pub enum ReportDoc {
    /// `study.json` (schema `ssdready.study`).
    Study(Box<StudyDoc>),
    /// A run's native JSON (schema `ssdready.run`).
    Run(Box<RunResult>),
    /// `characterize.json` (schema `ssdready.characterize`).
    Characterize(Box<CharacterizeDoc>),
}

/// Why a document cannot be rendered.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LoadError {
    #[error("not JSON ({0})")]
    NotJson(String),
    #[error("schema {0} is not one ssdready renders (allowed: ssdready.study, ssdready.run, ssdready.characterize)")]
    Schema(String),
    #[error("{schema} version {found} is not one this ssdready reads (allowed: {allowed})")]
    Version {
        schema: String,
        found: String,
        /// The versions read: one number, or "1 to 2".
        allowed: String,
    },
    #[error("{schema} document does not match its schema ({why})")]
    Shape { schema: String, why: String },
}

/// Read a study or run document from JSON text, checking its schema and
/// version.
pub fn load(text: &str) -> Result<ReportDoc, LoadError> {
    let v: Value = serde_json::from_str(text).map_err(|e| LoadError::NotJson(e.to_string()))?;
    load_value(v)
}

/// [`load`] from a parsed value.
pub fn load_value(v: Value) -> Result<ReportDoc, LoadError> {
    let schema = match v.get("schema") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(LoadError::Schema(format!("{other}"))),
        None => return Err(LoadError::Schema("(none: no 'schema' field)".into())),
    };
    let study = schema == ssdready_measured::schema::SCHEMA;
    let allowed = match schema.as_str() {
        ssdready_measured::schema::SCHEMA => ssdready_measured::schema::SCHEMA_VERSION,
        ssdready_core::result::SCHEMA => ssdready_core::result::SCHEMA_VERSION,
        ssdready_characterize_judge::model::SCHEMA => {
            ssdready_characterize_judge::model::SCHEMA_VERSION
        }
        _ => return Err(LoadError::Schema(format!("'{schema}'"))),
    };
    let version = v.get("schema_version").cloned().unwrap_or(Value::Null);
    let oldest = match study {
        true => ssdready_measured::schema::SCHEMA_VERSION_OLDEST,
        false => allowed,
    };
    if !version
        .as_u64()
        .is_some_and(|v| (u64::from(oldest)..=u64::from(allowed)).contains(&v))
    {
        return Err(LoadError::Version {
            schema,
            found: version.to_string(),
            allowed: match oldest == allowed {
                true => allowed.to_string(),
                false => format!("{oldest} to {allowed}"),
            },
        });
    }
    let shape = |e: serde_json::Error| LoadError::Shape {
        schema: schema.clone(),
        why: e.to_string(),
    };
    if schema == ssdready_measured::schema::SCHEMA {
        let d: StudyDoc = serde_json::from_value(v).map_err(shape)?;
        if d.targets.is_empty() {
            return Err(LoadError::Shape {
                schema,
                why: "it names no target".into(),
            });
        }
        Ok(ReportDoc::Study(Box::new(d)))
    } else if schema == ssdready_characterize_judge::model::SCHEMA {
        Ok(ReportDoc::Characterize(Box::new(
            serde_json::from_value(v).map_err(shape)?,
        )))
    } else {
        Ok(ReportDoc::Run(Box::new(
            serde_json::from_value(v).map_err(shape)?,
        )))
    }
}

/// The report page of a document.
pub fn render(d: &ReportDoc) -> String {
    match d {
        ReportDoc::Study(s) => study::render(s),
        ReportDoc::Run(r) => run::render(r),
        ReportDoc::Characterize(c) => characterize::render(c),
    }
}

/// The report page of a study.
pub fn render_study(d: &StudyDoc) -> String {
    study::render(d)
}

/// The report page of a single run.
pub fn render_run(r: &RunResult) -> String {
    run::render(r)
}

/// A comparison page: `differences` (JSON: an array of objects, or an
/// object with a `differences` array) first, then the two documents'
/// curves overlaid, A solid and B dashed.
pub fn render_compare(a: &ReportDoc, b: &ReportDoc, differences: &Value) -> String {
    compare::render(a, b, differences)
}

/// The anchor of the chart that shows a study fact (for links from
/// elsewhere, e.g. a comparison's table).
pub fn chart_anchor(fact: &str) -> &'static str {
    study::anchor_of(fact).0
}
