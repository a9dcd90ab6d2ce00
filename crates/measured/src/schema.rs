//! The study document's name and versions: `DIR/study.json` is schema
//! `ssdready.study`, documented field by field in `docs/study-schema.md`.
//! The whole document is `ssdready-diagnosis`'s model (its judgement
//! included); the crates that only read study documents back (the
//! history) check a document's schema against these without building the
//! judge. A change that renames or removes a field bumps the version.

/// Name of the study schema.
pub const SCHEMA: &str = "ssdready.study";
/// Version of the study schema.
pub const SCHEMA_VERSION: u32 = 2;
/// The oldest version still read (its causes in words, read back as
/// causes; its missing fields as their defaults).
pub const SCHEMA_VERSION_OLDEST: u32 = 1;
