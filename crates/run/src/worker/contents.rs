//! What a job's write buffers hold ([`ssdready_workload::buffers`]): filled as
//! the job asks when the loop starts (`zero_buffers`, `buffer_pattern`),
//! then, before each write, refilled (`refill_buffers`, compressible or
//! deduplicable data) or scrambled with the write's offset and issue time
//! (`scramble_buffers`, fio's default) or kept as they are.

use ssdready_io::Engine;
use ssdready_workload::buffers::{BeforeWrite, BufferFiller};

/// A worker's write-buffer contents.
pub(super) struct WriteBuffers {
    filler: BufferFiller,
    before: BeforeWrite,
}

impl WriteBuffers {
    /// The contents `filler` gives writes, `before` each (the job's
    /// resolution: None when writes keep the engine's random bytes
    /// untouched, or the job does not write).
    pub fn new(before: Option<BeforeWrite>, filler: BufferFiller) -> Option<WriteBuffers> {
        before.map(|before| WriteBuffers { filler, before })
    }

    /// Fill the engine's `depth` buffers as they start.
    pub fn prefill<E: Engine>(&self, engine: &mut E, depth: usize) {
        for slot in 0..depth as u32 {
            if let Some(buf) = engine.buffer(slot) {
                self.filler.initial_fill(buf);
            }
        }
    }

    /// Prepare the buffer of a write at `offset` issued at `now_ns`.
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], offset: u64, now_ns: u64) {
        match self.before {
            BeforeWrite::Keep => {}
            BeforeWrite::Refill => self.filler.fill(buf),
            BeforeWrite::Scramble => BufferFiller::scramble(buf, offset, now_ns),
        }
    }
}
