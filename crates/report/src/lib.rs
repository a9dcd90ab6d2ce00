//! # ssdready-report
//!
//! Renderings of a [`ssdready_core::result::RunResult`]:
//! * [`text`] — the terminal summary, units chosen to fit the numbers;
//! * [`json`] — the native, versioned JSON (schema in `docs/result-schema.md`).

pub mod fio_json;
pub mod json;
pub mod terse;
pub mod text;
