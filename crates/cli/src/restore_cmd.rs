//! What ssdready changed on the host, put back (`ssdready_tune`): every
//! command run as root first puts back what an ended ssdready left
//! changed ([`recover_left`]); `ssdready restore` does it on demand and
//! says which running ssdready holds what; an exit that does not unwind
//! (an error's exit, the panic hook) puts back this process's own first
//! ([`put_back_own`]).

use crate::stdout::outln;

/// Put back what an ended ssdready left changed (as root), one line each
/// on stderr.
pub fn recover_left() {
    if ssdready_tune::store::euid() == 0 {
        for r in ssdready_tune::recover() {
            crate::say(&r.to_string());
        }
    }
}

/// Put back this process's own changes before it exits without unwinding;
/// what was not clean is said.
pub fn put_back_own() {
    for u in ssdready_tune::put_back_own() {
        if !u.is_clean() {
            crate::say(&u.to_string());
        }
    }
}

/// `ssdready restore`.
pub fn command() {
    if ssdready_tune::store::euid() != 0 {
        crate::fail(
            1,
            &format!(
                "restore needs root: what ssdready changes is journaled in {}, root's alone",
                ssdready_tune::JOURNAL_DIR
            ),
        );
    }
    let report = ssdready_tune::restore_now();
    for line in report.lines() {
        outln!("{line}");
    }
    if !report.clean() {
        std::process::exit(1);
    }
}
