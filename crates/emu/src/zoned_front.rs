//! Zoned mode in real time: the zone management commands and report-zones
//! of a [`SharedDevice`] ([`crate::zoned`] has the model).
//!
//! Each command is checked against the zones under the model's lock, before
//! the model serves it (the device does it as it submits,
//! [`SharedDevice::submit_faulty`]): a write that the zones refuse completes with its
//! errno after the controller's command time, and nothing is stored. A zone
//! management command is synchronous, like Linux's `BLKRESETZONE` ioctl:
//! the caller waits until its modelled completion (a reset's erases). A
//! reset zeroes the zone's data, so reads past a write pointer return zeros.

use crate::shared::SharedDevice;
use crate::zoned::{Zone, ZoneCounters, ZoneError, ZoneOp};
use ssdready_io::EngineError;

impl SharedDevice {
    /// Whether the device is zoned.
    pub fn is_zoned(&self) -> bool {
        self.params.zoned.zoned
    }

    /// Report-zones (None when the device is not zoned).
    pub fn report_zones(&self) -> Result<Option<Vec<Zone>>, EngineError> {
        self.with_model(|dev| -> Result<_, ZoneError> {
            Ok(dev
                .ftl
                .as_ref()
                .and_then(|f| f.zones.as_ref())
                .map(|z| z.report().to_vec()))
        })
    }

    /// What the zones have seen (None when the device is not zoned).
    pub fn zone_counters(&self) -> Option<ZoneCounters> {
        let dev = self.device.read().ok()?;
        Some(dev.ftl.as_ref()?.zones.as_ref()?.counters)
    }

    /// Zone management command `op` on zone `zone`, waited for: Ok(Err) when
    /// the drive refuses it (an invalid transition, the open limits).
    pub fn manage_zone(
        &self,
        op: ZoneOp,
        zone: usize,
    ) -> Result<Result<(), ZoneError>, EngineError> {
        let now = self.clock.now();
        let outcome = self.with_model(|dev| -> Result<_, ZoneError> {
            let Some(ftl) = dev.ftl.as_mut() else {
                return Ok(Err(ZoneError::OutOfRange { offset: 0 }));
            };
            let Some(zones) = ftl.zones.as_mut() else {
                return Ok(Err(ZoneError::OutOfRange { offset: 0 }));
            };
            let dies = u64::from(dev.p.dies().max(1));
            let r = zones.manage(op, zone);
            let start_len = zones.report().get(zone).map(|z| (z.start, z.len));
            let blocks = *r.as_ref().unwrap_or(&0);
            ftl.counters.erases += blocks * dies;
            let done = dev.zone_command(now, blocks);
            Ok(r.map(|_| (done, start_len)))
        })?;
        let (done, start_len) = match outcome {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        };
        if let (ZoneOp::Reset, Some((start, len))) = (op, start_len) {
            self.zero_data(start, len);
        }
        while self.clock.now() < done {
            let left = done - self.clock.now();
            std::thread::sleep(std::time::Duration::from_nanos(left.min(1_000_000)));
        }
        Ok(Ok(()))
    }

    /// Zero `len` bytes of data at `start` (nothing with `nocopy`).
    fn zero_data(&self, start: u64, len: u64) {
        if self.params.nocopy {
            return;
        }
        let chunk = vec![0u8; 1 << 20];
        let mut at = start;
        let end = start.saturating_add(len).min(self.data.len() as u64);
        while at < end {
            let n = (end - at).min(chunk.len() as u64) as usize;
            let mut buf = chunk[..n].to_vec();
            self.data.copy(at as usize, &mut buf, crate::data::Way::In);
            at += n as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Params;
    use crate::device::{Extent, Op};
    use crate::zoned::ZoneCond;
    use ssdready_io::clock::Clock;

    fn dev(extra: &str) -> std::sync::Arc<SharedDevice> {
        let p = Params::parse(&format!("x25e,size=128m,zoned=1,zone_size=8m{extra}")).unwrap();
        SharedDevice::new(p, Clock::calibrate()).unwrap()
    }

    fn submit(d: &SharedDevice, op: Op, offset: u64, len: u64) -> Option<i32> {
        let counts = crate::queues::Counts::default();
        let (_, f) = d
            .submit_faulty((0, &counts), d.clock.now(), op, Extent { offset, len })
            .unwrap();
        f.errno
    }

    #[test]
    fn writes_off_the_write_pointer_fail_with_eio_and_are_counted() {
        let d = dev("");
        assert_eq!(submit(&d, Op::Write, 0, 4096), None);
        assert_eq!(submit(&d, Op::Write, 0, 4096), Some(5));
        assert_eq!(submit(&d, Op::Write, 8192, 4096), Some(5));
        assert_eq!(submit(&d, Op::Write, 4096, 4096), None);
        assert_eq!(d.zone_counters().unwrap().writes_refused, 2);
        let z = d.report_zones().unwrap().unwrap();
        assert_eq!((z[0].wp, z[0].cond), (8192, ZoneCond::ImplicitOpen));
    }

    #[test]
    fn a_reset_erases_waits_and_zeroes_the_zone() {
        let d = dev("");
        let mut buf = vec![0xabu8; 4096];
        assert!(d.data.copy(0, &mut buf, crate::data::Way::In));
        assert_eq!(submit(&d, Op::Write, 0, 4096), None);
        let t0 = d.clock.now();
        d.manage_zone(ZoneOp::Reset, 0).unwrap().unwrap();
        let took = d.clock.now() - t0;
        // x25e: 1.5 ms per erase.
        assert!(
            took >= d.params.erase_ns,
            "a reset waits for its erases: {took} ns"
        );
        let mut back = vec![1u8; 4096];
        assert!(d.data.copy(0, &mut back, crate::data::Way::Out));
        assert!(back.iter().all(|&b| b == 0));
        assert_eq!(d.report_zones().unwrap().unwrap()[0].cond, ZoneCond::Empty);
        let dev = d.device.read().unwrap();
        let ftl = dev.ftl.as_ref().unwrap();
        assert!(ftl.counters.erases > 0);
        assert_eq!(ftl.write_amplification(), 1.0, "no GC on a zoned drive");
    }
}
