//! A loop device's disk measured against itself: the stack's `ceiling`
//! sweep reads the loop device's backing file directly, in turns with the
//! loop device ([`crate::stack::ceiling()`]). Where the disk under it gave,
//! within the loop device's runs, what it gives read directly
//! ([`crate::stack::ceiling::MEMBER_FULL_PCT`] or more beyond the rounds'
//! error), the disk is what holds the I/O, whatever the loop device's own
//! counters say of where the I/Os waited: the time before the disk is the
//! queue for it.

use ssdready_measured::record::RunRecord;
use ssdready_measured::stack_layers::Stack;

/// The evidence that the disk under a loop device holds it, as said: the
/// file read directly against the disk within the loop device's runs.
/// None without a loop device over a file, without the sweep, or where
/// the disk gave clearly less within the stack than alone.
pub fn loop_disk_full(stack: &Stack, runs: &[RunRecord]) -> Option<String> {
    let c = crate::stack::ceiling::ceiling(stack, runs)?;
    let f = c.fullest.as_ref().filter(|f| f.full)?;
    let file = stack.loop_file_on(&f.disk)?;
    Some(format!(
        "read directly, {file} (on {disk}) gave {alone:.0} IOPS; within {loop_dev}'s runs {disk} gave {within:.0}, {pct:.0} % (± {err:.0} %) of that, in turns over {rounds} round(s): the disk gives through {loop_dev} what it gives alone",
        disk = f.disk,
        alone = f.alone_iops,
        loop_dev = c.stack,
        within = f.in_stack_iops,
        pct = f.pct,
        err = f.pct_err,
        rounds = c.rounds,
    ))
}
