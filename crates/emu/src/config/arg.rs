//! Parsing an emulator parameter's value: [`Arg`] holds the key and its
//! value, each parser's error names the key and the allowed values.

use super::error::{out_of_range, ParamError};
use super::modes::{CompletionMode, GcPolicy};

pub(super) fn parse_size(v: &str) -> Result<u64, ssdready_core::units::UnitError> {
    // The units parser's own error (core's), which the key's error carries.
    ssdready_core::units::parse_size(v, 1024)
}

/// One `key=value` of an emulator target, parsed as its field needs; each
/// error names the key.
pub(super) struct Arg<'a> {
    pub(super) k: &'a str,
    pub(super) v: &'a str,
}

impl Arg<'_> {
    fn unit(&self, why: ssdready_core::units::UnitError) -> ParamError {
        ParamError::Unit {
            key: self.k.into(),
            why,
        }
    }

    pub(super) fn int(&self) -> Result<u64, ParamError> {
        self.v.parse::<u64>().map_err(|_| ParamError::NotWhole {
            key: self.k.into(),
            value: self.v.into(),
        })
    }

    /// A 32-bit field: values past u32 are refused, not truncated.
    pub(super) fn int32(&self) -> Result<u32, ParamError> {
        let n = self.int()?;
        u32::try_from(n).map_err(|_| out_of_range(self.k, n))
    }

    pub(super) fn float(&self) -> Result<f64, ParamError> {
        self.float_of(self.v)
    }

    pub(super) fn float_of(&self, v: &str) -> Result<f64, ParamError> {
        v.parse::<f64>().map_err(|_| ParamError::NotNumber {
            key: self.k.into(),
            value: v.into(),
        })
    }

    /// A fraction, or a percentage with `%`.
    pub(super) fn share(&self) -> Result<f64, ParamError> {
        match self.v.strip_suffix('%') {
            Some(pct) => Ok(self.float_of(pct)? / 100.0),
            None => self.float(),
        }
    }

    pub(super) fn time(&self) -> Result<u64, ParamError> {
        self.time_of(self.v)
    }

    pub(super) fn time_of(&self, v: &str) -> Result<u64, ParamError> {
        ssdready_core::units::parse_time_ns(v, 1).map_err(|e| self.unit(e))
    }

    pub(super) fn boolean(&self) -> Result<bool, ParamError> {
        ssdready_core::units::parse_bool(self.v).map_err(|e| self.unit(e))
    }

    pub(super) fn size(&self) -> Result<u64, ParamError> {
        parse_size(self.v).map_err(|e| self.unit(e))
    }

    /// A 32-bit size, `field` named when it is out of range.
    pub(super) fn size32(&self, field: &str) -> Result<u32, ParamError> {
        let n = self.size()?;
        u32::try_from(n).map_err(|_| out_of_range(field, n))
    }
}

fn choice(key: &str, value: &str, allowed: &'static str) -> ParamError {
    ParamError::Choice {
        key: key.into(),
        value: value.into(),
        allowed,
    }
}

pub(super) fn gc_policy(v: &str) -> Result<GcPolicy, ParamError> {
    match v {
        "greedy" => Ok(GcPolicy::Greedy),
        "fifo" => Ok(GcPolicy::Fifo),
        _ => Err(choice("gc", v, "greedy, fifo")),
    }
}

pub(super) fn completion_mode(v: &str) -> Result<CompletionMode, ParamError> {
    match v {
        "irq" | "interrupt" => Ok(CompletionMode::Irq),
        "poll" => Ok(CompletionMode::Poll),
        "hybrid" => Ok(CompletionMode::Hybrid),
        _ => Err(choice("completion", v, "irq, poll, hybrid")),
    }
}

/// `service`: whether service times are exponential (`exp`) or `fixed`.
pub(super) fn exponential_service(v: &str) -> Result<bool, ParamError> {
    match v {
        "fixed" => Ok(false),
        "exp" => Ok(true),
        _ => Err(choice("service", v, "fixed, exp")),
    }
}
