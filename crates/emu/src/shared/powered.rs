//! A [`SharedDevice`]'s writes and flushes with the power-cut model on
//! ([`crate::powercut`] has the model and its undo log): the N-th write
//! cuts the power, a FUA write waits for the model's buffer, a command in
//! flight at a cut fails.

use super::{failed, SharedDevice};
use crate::engine::bufs::SlotBufs;
use ssdready_core::IoReq;
use ssdready_io::EngineError;
use std::sync::atomic::Ordering::Relaxed;

impl SharedDevice {
    /// Store request `req`'s write from its slot in `bufs` with the
    /// power-cut model on (module docs): the N-th write first cuts the
    /// power; only the first `keep` bytes are stored (a silent tear stores
    /// less); a FUA write completes (after `done`) once the model's buffer
    /// has drained, as a flush does. Returns its completion time and its
    /// sequence number for [`Power::result`].
    pub(crate) fn write_powered(
        &self,
        bufs: &mut SlotBufs,
        req: &IoReq,
        keep: u64,
        (done, fua): (u64, bool),
    ) -> Result<(u64, u64), EngineError> {
        let Some(power) = &self.power else {
            return Err(failed(
                "a powered write on a device without the power model",
            ));
        };
        let done = match fua {
            true => done.max(self.flush_powered(self.clock.now(), false)?.0),
            false => done,
        };
        let now = self.clock.now();
        if power.writes.fetch_add(1, Relaxed) + 1 == power.cut_after {
            // The model's lock, then the log's: the order everywhere.
            self.with_model(|dev| -> Result<(), std::convert::Infallible> {
                let r = power.log().cut(&self.data, now, dev.volatile_bytes(now));
                let c = &mut dev.faults.counts;
                c.power_cuts += 1;
                c.writes_lost += r.writes_lost;
                c.writes_torn_at_cut += r.writes_torn;
                c.commands_aborted += r.commands_aborted;
                c.bytes_lost += r.bytes_lost;
                Ok(())
            })?;
        }
        let len = req.len as usize;
        if !bufs.holds(req.slot, len) {
            return Err(failed(&format!("slot {} holds no {len} bytes", req.slot)));
        }
        let buf = &mut bufs.get(req.slot, true)[..len];
        let keep = (keep as usize).min(len);
        let seq = power
            .log()
            .write(&self.data, now, req.offset, &mut buf[..keep], (done, fua));
        Ok((done, seq))
    }

    /// A flush with the power-cut model on: it waits for the model's write
    /// buffer (and may spike); returns its completion time and, when it
    /// `covers` the writes before it (a host flush, not a FUA write's own
    /// wait), its sequence.
    pub(crate) fn flush_powered(&self, now: u64, covers: bool) -> Result<(u64, u64), EngineError> {
        let done = self.with_model(|dev| {
            let done = dev.submit(now, crate::device::Op::Flush, &[])?;
            Ok::<_, crate::ftl::FtlError>(done.saturating_add(dev.faults.decide_flush().extra_ns))
        })?;
        let seq = match &self.power {
            Some(p) if covers => p.log().flush(done),
            _ => 0,
        };
        Ok((done, seq))
    }

    /// A command's result, EIO when it was in flight at a cut.
    pub(crate) fn power_result(&self, seq: u64, res: i64) -> i64 {
        self.power.as_ref().map_or(res, |p| p.result(seq, res))
    }
}
