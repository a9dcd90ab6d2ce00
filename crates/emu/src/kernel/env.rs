//! The environment variables that tune the kernel drive's daemon
//! ([`due::HOLD_ENV`], [`fuse_serve::THREADS_ENV`]), checked once when a
//! drive is attached: a value set but not taken is refused in one line
//! that names the variable, its value and what is allowed, before anything
//! is mounted. The serving threads read them again later, already checked.

use super::error::KernelError;
use super::{due, fuse_serve};
use std::ffi::OsString;

/// A tuning variable: its name, whether a value is taken, and what is
/// allowed, in words.
type Var = (&'static str, fn(&str) -> bool, &'static str);

/// Every tuning variable of the daemon.
const VARS: [Var; 2] = [
    (
        due::HOLD_ENV,
        |v| due::HoldPolicy::parse(Some(v)).is_some(),
        "a per cent from 0 to 10",
    ),
    (
        fuse_serve::THREADS_ENV,
        |v| fuse_serve::parse_threads(v).is_some(),
        "a whole number of serving threads from 1 to 8",
    ),
];

/// Refuse a tuning variable of the daemon set to a value it does not take.
pub fn check_env() -> Result<(), KernelError> {
    check_with(|name| std::env::var_os(name))
}

/// [`check_env`] with the variables read by `get`.
fn check_with(get: impl Fn(&str) -> Option<OsString>) -> Result<(), KernelError> {
    for (name, takes, allowed) in VARS {
        let Some(value) = get(name) else { continue };
        let ok = value.to_str().is_some_and(takes);
        if !ok {
            return Err(KernelError::BadEnv {
                name,
                value: value.to_string_lossy().into_owned(),
                allowed,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    fn check(pairs: &[(&str, OsString)]) -> Result<(), String> {
        check_with(|n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn unset_and_allowed_values_pass() {
        assert_eq!(check(&[]), Ok(()));
        let ok = [
            (due::HOLD_ENV, OsString::from("0")),
            (fuse_serve::THREADS_ENV, OsString::from(" 8 ")),
        ];
        assert_eq!(check(&ok), Ok(()));
        let ok = [
            (due::HOLD_ENV, OsString::from("10")),
            (fuse_serve::THREADS_ENV, OsString::from("1")),
        ];
        assert_eq!(check(&ok), Ok(()));
    }

    #[test]
    fn a_bad_value_is_refused_naming_the_variable_and_what_is_allowed() {
        for bad in ["0", "9", "-1", "two", "", "1.5"] {
            let e = check(&[(fuse_serve::THREADS_ENV, bad.into())]).unwrap_err();
            assert_eq!(
                e,
                format!(
                    "environment variable SSDREADY_EMU_THREADS='{bad}' is refused \
                     (allowed: a whole number of serving threads from 1 to 8, or unset)"
                )
            );
        }
        for bad in ["11", "-0.5", "NaN", "2%", ""] {
            let e = check(&[(due::HOLD_ENV, bad.into())]).unwrap_err();
            assert!(e.contains(&format!("SSDREADY_EMU_HOLD='{bad}'")), "{e}");
            assert!(e.contains("a per cent from 0 to 10"), "{e}");
        }
        let not_utf8 = OsString::from_vec(vec![b'4', 0xff]);
        let e = check(&[(fuse_serve::THREADS_ENV, not_utf8)]).unwrap_err();
        assert!(e.contains("SSDREADY_EMU_THREADS="), "{e}");
    }

    #[test]
    fn the_allowed_range_is_the_one_the_daemon_uses() {
        assert_eq!(fuse_serve::MAX_THREADS, 8, "update the words in VARS");
    }
}
