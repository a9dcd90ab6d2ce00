//! What `ssdready characterize` is asked to run on, checked before
//! anything runs or is written: the request's values (queue depth, engine,
//! times) and the target — an emulated device (`emu:PRESET[,k=v…]`, in
//! virtual time only, whose writes must take time and whose model must fit
//! in memory) or a block device or file (through the run library's safety
//! checks, at least 16 MiB, rounded to its logical blocks). Every refusal
//! is one line saying what, where and what is allowed ([`Error`]).

use crate::real::RealTarget;
use ssdready_core::units::{parse_size, parse_time_ns};
use ssdready_run::Failure as RunFailure;

/// What the command line asked for (its values as given).
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// emu:PRESET[,key=value…], a block device, or a file.
    pub target: String,
    pub quick: bool,
    /// Run an emulated target in virtual time.
    pub virtual_time: bool,
    pub allow_destructive: bool,
    /// TRIM the whole block device before each test.
    pub purge: bool,
    /// Time per point, e.g. 30s.
    pub point_time: Option<String>,
    pub iodepth: u32,
    /// WSAT's time limit.
    pub wsat_time: Option<String>,
    /// Bytes of a file or device to characterize.
    pub size: Option<String>,
    /// Only these tests.
    pub tests: Vec<String>,
    /// Engine of real runs.
    pub ioengine: String,
}

/// Why the command cannot run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: exit code 2, nothing written.
    #[error("{0}")]
    BadInput(String),
    /// The run library's checks of the target refused it (with their
    /// exit code).
    #[error("{}", .0.message())]
    Target(RunFailure),
}

impl Error {
    /// The process exit code this error ends with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::BadInput(_) => 2,
            Error::Target(f) => f.exit_code(),
        }
    }
}

fn bad<T>(msg: String) -> Result<T, Error> {
    Err(Error::BadInput(msg))
}

/// What the target turned out to be.
#[derive(Clone, Debug)]
pub enum Target {
    Emulated(Box<ssdready_emu::config::Params>),
    Real {
        target: RealTarget,
        logical_block_size: u64,
        /// The block device it is, or that holds the file.
        device: Option<String>,
    },
}

/// A time option in seconds, at least `min_s`.
pub fn time_s(opt: &str, v: &str, min_s: f64) -> Result<f64, Error> {
    let ns = parse_time_ns(v, 1_000_000_000).map_err(|e| {
        Error::BadInput(format!(
            "option '--{opt}': {e} (allowed: a time such as 30s or 2m)"
        ))
    })?;
    let s = ns as f64 / 1e9;
    if s < min_s {
        return bad(format!(
            "option '--{opt}': {v} is too short (allowed: {min_s} s or more)"
        ));
    }
    Ok(s)
}

/// Check the request and the target; `warnings` gets what the safety
/// checks let through on `--allow-destructive`.
pub fn check(a: &Request, warnings: &mut Vec<String>) -> Result<Target, Error> {
    if !(1..=4096).contains(&a.iodepth) {
        return bad(format!(
            "option '--iodepth': {} (allowed: 1 to 4096)",
            a.iodepth
        ));
    }
    // Checked for every target, an emulated one too (which brings its own
    // engine and ignores this one, but a wrong name is still wrong).
    if !["io_uring", "libaio", "psync"].contains(&a.ioengine.as_str()) {
        return bad(format!(
            "option '--ioengine': '{}' (allowed: io_uring, libaio, psync)",
            a.ioengine
        ));
    }
    let is_emu = a.target == "emu" || a.target.starts_with("emu:");
    match (is_emu, a.virtual_time) {
        (true, false) => bad(format!(
            "target '{}': an emulated device is characterized in virtual time: add --virtual (in real \
             time every run would build a fresh device and lose the preconditioning)",
            a.target
        )),
        (false, true) => bad(format!(
            "option '--virtual': target '{}' is not an emulated device (allowed: emu:PRESET[,key=value…])",
            a.target
        )),
        (true, true) => emulated(a),
        (false, false) => real(a, warnings),
    }
}

fn emulated(a: &Request) -> Result<Target, Error> {
    if a.size.is_some() {
        return bad(
            "option '--size': give an emulated device's size in its spec, e.g. emu:x25e,size=256m"
                .into(),
        );
    }
    if a.purge {
        return bad("option '--purge': applies to block devices (an emulated device is made fresh before each test anyway)".into());
    }
    let body = a.target.trim_start_matches("emu").trim_start_matches(':');
    let p = ssdready_emu::config::Params::parse(body)
        .map_err(|e| Error::BadInput(format!("target '{}': {e}", a.target)))?;
    // Every test writes: on a device whose writes take no time, virtual
    // time would not advance (known before anything runs or is written).
    let writes = ssdready_emu::analytic::limit::model_limit(
        &p,
        ssdready_emu::analytic::limit::Access::Write,
        4096,
    );
    if writes.iops.is_none() && p.host_ns == 0 {
        return bad(format!(
            "target '{}': its writes take no time (preset {}, host_ns=0), so in virtual time no \
             test would advance; give them a cost (e.g. {},host_ns=1us) or choose a preset with \
             flash timings (e.g. emu:x25e)",
            a.target, p.preset, a.target
        ));
    }
    let spec = ssdready_core::spec::JobSpec {
        filename: vec![a.target.clone()],
        ioengine: ssdready_core::spec::EngineKind::Emu,
        iodepth: a.iodepth,
        rw: ssdready_core::spec::RwMode::RandWrite,
        ..Default::default()
    };
    let params = std::collections::BTreeMap::from([(a.target.clone(), p.clone())]);
    ssdready_run::emulated::check_memory(&[spec], &params, ssdready_emu::memory::TimeBase::Virtual)
        .map_err(|e| Error::BadInput(e.to_string()))?;
    Ok(Target::Emulated(Box::new(p)))
}

fn real(a: &Request, warnings: &mut Vec<String>) -> Result<Target, Error> {
    let size = match a.size.as_deref() {
        Some(v) => Some(parse_size(v, 1024).map_err(|e| {
            Error::BadInput(format!(
                "option '--size': {e} (allowed: a size such as 64g)"
            ))
        })?),
        None => None,
    };
    ssdready_run::validate::check_device_exists("characterize", &a.target)
        .map_err(Error::Target)?;
    if size.is_none() && std::fs::metadata(&a.target).is_err() {
        return bad(format!(
            "target '{}' does not exist: give the size of the file to create with --size (e.g. --size=4g)",
            a.target
        ));
    }
    let needs = ssdready_io::target::TargetNeeds {
        bytes: size,
        offset: 0,
        modifies: true,
        allow_destructive: a.allow_destructive,
        allow_mounted_write: false,
    };
    let t = ssdready_io::target::resolve(std::path::Path::new(&a.target), needs)
        .map_err(|e| Error::Target(ssdready_run::validate::target_failure("characterize", e)))?;
    warnings.extend(t.overridden.clone());
    let block = t.kind == ssdready_io::target::TargetKind::Block;
    let capacity = match (size, block) {
        (Some(s), true) if s > t.size => {
            return bad(format!(
                "option '--size': {s} is more than {}'s {} bytes",
                a.target, t.size
            ))
        }
        (Some(s), _) => s,
        (None, _) if t.size > 0 => t.size,
        (None, _) => {
            return bad(format!(
            "target '{}': the file is empty or does not exist: give its size with --size (e.g. --size=4g)",
            a.target
        ))
        }
    };
    if a.purge && !block {
        return bad(format!(
            "option '--purge': {} is not a block device (a file cannot be purged)",
            a.target
        ));
    }
    let lbs = t.logical_block_size.max(512);
    let capacity = capacity / lbs * lbs;
    if capacity < 16 << 20 {
        // The size as given (rounding to blocks may have made it 0).
        let shown = size.unwrap_or(capacity);
        return bad(format!(
            "target '{}': {shown} bytes is too small to characterize (allowed: 16 MiB or more)",
            a.target
        ));
    }
    Ok(Target::Real {
        target: RealTarget {
            path: a.target.clone(),
            capacity,
            block_device: block,
            discard: t.discard,
        },
        logical_block_size: lbs,
        device: t.device.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(target: &str) -> Request {
        Request {
            target: target.into(),
            iodepth: 32,
            ioengine: "io_uring".into(),
            ..Request::default()
        }
    }

    fn refused(r: &Request) -> String {
        match check(r, &mut Vec::new()) {
            Err(Error::BadInput(m)) => m,
            other => panic!("not refused as bad input: {other:?}"),
        }
    }

    #[test]
    fn bad_values_are_one_line_naming_what_is_allowed() {
        let mut r = req("emu:x25e");
        r.virtual_time = true;
        r.iodepth = 0;
        assert!(refused(&r).contains("allowed: 1 to 4096"));
        r.iodepth = 32;
        r.ioengine = "spdk".into();
        assert!(refused(&r).contains("allowed: io_uring, libaio, psync"));
        assert!(time_s("point-time", "soon", 1.0).is_err());
        let e = time_s("point-time", "500ms", 1.0).unwrap_err();
        assert!(e.to_string().contains("too short"), "{e}");
        assert_eq!(e.exit_code(), 2);
        assert_eq!(time_s("wsat-time", "2m", 1.0).unwrap(), 120.0);
    }

    #[test]
    fn an_emulated_device_runs_in_virtual_time_only_and_real_targets_in_real_time() {
        assert!(refused(&req("emu:x25e")).contains("add --virtual"));
        let mut r = req("/nonexistent/file");
        r.virtual_time = true;
        assert!(refused(&r).contains("not an emulated device"));
        let mut r = req("emu:x25e");
        r.virtual_time = true;
        r.purge = true;
        assert!(refused(&r).contains("--purge"));
        r.purge = false;
        r.size = Some("1g".into());
        assert!(refused(&r).contains("--size"));
    }

    #[test]
    fn an_emulated_device_whose_writes_take_no_time_is_refused_before_anything_runs() {
        let mut r = req("emu:null");
        r.virtual_time = true;
        assert!(refused(&r).contains("writes take no time"));
        r.target = "emu:x25e,size=256m".into();
        match check(&r, &mut Vec::new()) {
            Ok(Target::Emulated(p)) => assert_eq!(p.preset, "x25e"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_file_is_checked_for_its_size_and_rounded_to_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t");
        let mut r = req(f.to_str().unwrap());
        assert!(refused(&r).contains("--size"));
        r.size = Some("1m".into());
        assert!(refused(&r).contains("too small"));
        r.size = Some("16m".into());
        r.purge = true;
        assert!(refused(&r).contains("not a block device"));
        r.purge = false;
        match check(&r, &mut Vec::new()).unwrap() {
            Target::Real { target, .. } => {
                assert_eq!(target.capacity, 16 << 20);
                assert!(!target.block_device);
            }
            t => panic!("{t:?}"),
        }
    }
}
