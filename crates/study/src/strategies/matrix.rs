//! What `ssdready strategies` runs: the seven submission/completion
//! strategies × Shin's four Iozone patterns ([`super`], shared with the
//! study's strategies sweep), each the request of an ordinary
//! `ssdready run` on the target.

use super::{Strategy, BS, THREADS};
use crate::limit;
use ssdready_run::RunRequest;

/// The target as the runs name it.
#[derive(Clone, Debug)]
pub enum Target {
    /// `emu:PRESET[,k=v…]` with its parameters.
    Emulator {
        spec: String,
        params: Box<ssdready_emu::config::Params>,
    },
    /// A regular file (`size` bytes) or a block device (size None).
    Real { path: String, size: Option<u64> },
}

impl Target {
    pub fn spec(&self) -> &str {
        match self {
            Target::Emulator { spec, .. } => spec,
            Target::Real { path, .. } => path,
        }
    }

    /// Add the options every run on this target gets to the request's last
    /// job. The emulator skips data copies (`nocopy=1`): what is measured
    /// is the host's path, not memcpy.
    pub fn apply(&self, r: &mut RunRequest) {
        match self {
            Target::Emulator { spec, .. } if spec.contains("nocopy") => {
                r.set("filename", spec);
            }
            Target::Emulator { spec, .. } => {
                r.set("filename", format_args!("{spec},nocopy=1"));
            }
            Target::Real { path, size } => {
                r.set("filename", path)
                    .set("ioengine", "io_uring")
                    .set("direct", 1);
                if let Some(s) = size {
                    r.set("size", s);
                }
            }
        }
    }
}

/// A target `ssdready strategies` cannot run on: one line for the user,
/// with what is allowed (bad input).
#[derive(Debug, thiserror::Error)]
pub enum BadTarget {
    /// An emulated drive whose parameters are refused.
    #[error("target '{target}': {why}")]
    Emulator {
        target: String,
        why: ssdready_emu::config::ParamError,
    },
    #[error(
        "target '{target}': {err} (allowed: an existing file, a block device, or emu:PRESET[,key=value…])"
    )]
    Missing { target: String, err: std::io::Error },
    #[error(
        "target '{target}': not a regular file or block device (allowed: an existing file, a block device, or emu:PRESET[,key=value…])"
    )]
    NotFileOrDevice { target: String },
    #[error("target '{target}': {bytes} bytes is too small (allowed: a file of 16 MiB or more)")]
    TooSmall { target: String, bytes: u64 },
}

/// Check TARGET: one line for the user when it is not usable.
pub fn target(spec: &str) -> Result<Target, BadTarget> {
    if let Some(body) = spec.strip_prefix("emu:") {
        let body = if body.trim().is_empty() {
            "nvme-tlc"
        } else {
            body
        };
        let params = limit::params_of(body).map_err(|why| BadTarget::Emulator {
            target: spec.into(),
            why,
        })?;
        return Ok(Target::Emulator {
            spec: format!("emu:{body}"),
            params: Box::new(params),
        });
    }
    use std::os::unix::fs::FileTypeExt;
    let m = std::fs::metadata(spec).map_err(|err| BadTarget::Missing {
        target: spec.into(),
        err,
    })?;
    if m.file_type().is_block_device() {
        return Ok(Target::Real {
            path: spec.into(),
            size: None,
        });
    }
    if !m.is_file() {
        return Err(BadTarget::NotFileOrDevice {
            target: spec.into(),
        });
    }
    if m.len() < 16 << 20 {
        return Err(BadTarget::TooSmall {
            target: spec.into(),
            bytes: m.len(),
        });
    }
    Ok(Target::Real {
        path: spec.into(),
        size: Some(m.len().min(1 << 30)),
    })
}

/// Why strategy `s` does not apply to target `t` at all, if it does not:
/// it is then not planned, and said once (not run and refused).
pub fn not_applicable(t: &Target, s: &Strategy) -> Option<String> {
    match t {
        Target::Emulator { .. } if s.needs_io_uring() => Some(super::NOT_ON_THE_EMULATOR.into()),
        _ => None,
    }
}

/// The run request of one point.
pub fn run_request(t: &Target, s: &Strategy, rw: &str, runtime_s: f64) -> RunRequest {
    let mut r = RunRequest {
        quiet: true,
        ..Default::default()
    };
    r.job("strategies");
    t.apply(&mut r);
    r.set("rw", rw)
        .set("bs", BS)
        .set("numjobs", THREADS)
        .set("runtime", format_args!("{runtime_s}s"))
        .flag("time_based");
    super::apply(s, &mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_targets_are_refused_with_what_is_allowed() {
        let e = target("emu:nonesuch").unwrap_err().to_string();
        assert!(e.contains("allowed"), "{e}");
        let e = target("/nonexistent/x").unwrap_err().to_string();
        assert!(e.contains("allowed"), "{e}");
        assert!(target("emu:").unwrap().spec() == "emu:nvme-tlc");
    }

    #[test]
    fn sqpoll_is_not_planned_on_the_in_process_emulator() {
        let emu = target("emu:").unwrap();
        let sq = super::super::strategy("sqpoll").unwrap();
        assert!(not_applicable(&emu, sq).unwrap().contains("io_uring"));
        let base = super::super::strategy(super::super::BASELINE).unwrap();
        assert!(not_applicable(&emu, base).is_none());
    }
}
