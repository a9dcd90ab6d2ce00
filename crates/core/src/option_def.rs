//! What an option of the table is: its names, whether it takes a value,
//! what it allows, its help, and the setter that applies it to a
//! [`JobSpec`]. The tables (`option_table*.rs`) are lists of these;
//! [`crate::options`] finds and applies them.

use crate::spec::JobSpec;

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// `--opt=value`.
    Value,
    /// `--opt` alone means on; `--opt=0|1` also accepted.
    Flag,
    /// `--opt` alone gives the empty string (a default the setter picks);
    /// `--opt=value` gives the value.
    Optional,
}

/// One option of the table.
pub struct OptionDef {
    /// fio's name.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// Value or flag.
    pub arity: Arity,
    /// The allowed values, as shown in errors and `ssdready options`
    /// (through [`OptionDef::allowed_values`]); `ENGINE_NAMES` for the
    /// engines this build has.
    pub allowed: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Applies a value (already known to be present for `Arity::Value`).
    pub set: fn(&mut JobSpec, &str) -> Result<(), String>,
}

/// `allowed` of an option whose values are the engines this build has,
/// which only the linked program knows ([`crate::engines::runnable`]).
pub const ENGINE_NAMES: &str = "the engines ssdready runs";

impl OptionDef {
    /// The allowed values as errors and `ssdready options` say them.
    pub fn allowed_values(&self) -> &'static str {
        if self.allowed == ENGINE_NAMES {
            crate::engines::runnable()
        } else {
            self.allowed
        }
    }
}
