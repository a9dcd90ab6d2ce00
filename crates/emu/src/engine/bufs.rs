//! A worker's I/O buffers on the emulator: one per slot, in one lazily
//! zeroed block, given random contents when a slot first writes.

use crate::memory::human;
use ssdready_io::buf::{fill_random, try_zeroed_bytes};
use ssdready_io::EngineError;

/// A worker's I/O buffers: one of `len` bytes per slot, in one lazily
/// zeroed block (a deep queue of large buffers costs nothing until used).
pub(crate) struct SlotBufs {
    pub(super) bytes: Vec<u8>,
    len: usize,
    /// Whether a slot's buffer has its random contents yet: they are made
    /// when the slot first writes, so opening the engine takes no time.
    filled: Vec<bool>,
    seed: u64,
}

impl SlotBufs {
    /// Buffers of `bs` bytes rounded up to 4 KiB (none when `bs` is 0).
    pub(crate) fn new(depth: usize, bs: usize, seed: u64) -> Result<SlotBufs, EngineError> {
        let len = bs.div_ceil(4096) * 4096;
        let bytes = depth
            .checked_mul(len)
            .and_then(try_zeroed_bytes)
            .ok_or_else(|| EngineError::Sys {
                what: format!(
                    "allocating {} of I/O buffers (iodepth {depth} × {len} bytes)",
                    human((depth as u64).saturating_mul(len as u64))
                ),
                source: std::io::ErrorKind::OutOfMemory.into(),
            })?;
        Ok(SlotBufs {
            bytes,
            len,
            filled: vec![false; depth],
            seed,
        })
    }

    /// Whether slot `slot` exists and holds `len` bytes.
    pub(crate) fn holds(&self, slot: u32, len: usize) -> bool {
        (slot as usize) < self.filled.len() && len <= self.len
    }

    /// Slot `slot`'s buffer for the caller to fill or read (its contents
    /// are then the caller's: no random fill comes later); None without
    /// buffers (`nocopy`).
    pub(super) fn slot_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        let i = slot as usize;
        if self.len == 0 || i >= self.filled.len() {
            return None;
        }
        self.filled[i] = true;
        Some(&mut self.bytes[i * self.len..(i + 1) * self.len])
    }

    /// Slot `slot`'s buffer, given its random contents first when it is to
    /// be written and has not been yet.
    pub(crate) fn get(&mut self, slot: u32, write: bool) -> &mut [u8] {
        let i = slot as usize;
        let buf = &mut self.bytes[i * self.len..(i + 1) * self.len];
        if write && !self.filled[i] {
            fill_random(buf, self.seed.wrapping_add(i as u64));
            self.filled[i] = true;
        }
        buf
    }
}
