//! # ssdready-report
//!
//! Renderings of a [`ssdready_core::result::RunResult`]:
//! * [`text`] — the terminal summary, units chosen to fit the numbers;
//! * [`json`] — the native, versioned JSON (schema in `docs/result-schema.md`);
//! * [`html`] — the HTML report of a study or a run (inline SVG charts,
//!   self-contained), and the comparison page of two.

#![forbid(unsafe_code)]

pub mod fio_json;
pub mod html;
pub mod json;
pub mod terse;
pub mod text;
