//! The emulated device's data in real time: one byte per byte of capacity,
//! in stripes that each have their own lock, so that workers copying to
//! and from different parts of the device (the common case) do not wait
//! for each other; a copy that spans stripes takes them one at a time, in
//! address order. A write and a read of the same bytes at once see the
//! stripe before or after the write's piece there, as a DMA would.
//!
//! Stripes are at least 1 MiB and at most 4,096 in all (each is a mapping
//! of its own, zeroed lazily by the kernel as it is written, however many
//! devices the process made before: a large device does not use up the
//! process's memory mappings).

use ssdready_io::buf::ZeroedPages;
use std::sync::{Mutex, MutexGuard};

/// The smallest stripe.
const MIN_STRIPE: u64 = 1 << 20;
/// The most stripes.
const MAX_STRIPES: u64 = 4096;

/// A device's data (module docs).
pub struct Data {
    stripes: Vec<Stripe>,
    stripe: usize,
    len: usize,
}

/// One stripe behind its lock, on cache lines of its own: workers copying
/// to and from neighbouring stripes do not pass a line back and forth.
#[repr(align(128))]
struct Stripe(Mutex<ZeroedPages>);

/// Which way a copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// From the buffer to the device.
    In,
    /// From the device to the buffer.
    Out,
}

impl Data {
    /// `len` zero bytes, or None when they cannot be reserved.
    pub fn zeroed(len: u64) -> Option<Data> {
        let stripe = len
            .div_ceil(MAX_STRIPES)
            .max(MIN_STRIPE)
            .next_power_of_two();
        let n = len.div_ceil(stripe);
        let stripes = (0..n)
            .map(|i| {
                let size = stripe.min(len - i * stripe);
                usize::try_from(size)
                    .ok()
                    .and_then(ZeroedPages::new)
                    .map(|v| Stripe(Mutex::new(v)))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Data {
            stripes,
            stripe: usize::try_from(stripe).ok()?,
            len: usize::try_from(len).ok()?,
        })
    }

    /// Bytes of data.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none (a `nocopy` device).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copy `buf` in at `offset` or out from it; false when the range is
    /// outside the data (nothing copied).
    pub fn copy(&self, offset: usize, buf: &mut [u8], way: Way) -> bool {
        let fits = offset
            .checked_add(buf.len())
            .is_some_and(|end| end <= self.len);
        if !fits {
            return false;
        }
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done;
            let (i, within) = (at / self.stripe, at % self.stripe);
            let n = (self.stripe - within).min(buf.len() - done);
            let mut s = lock(&self.stripes[i].0);
            let (dev, host) = (&mut s[within..within + n], &mut buf[done..done + n]);
            match way {
                Way::In => dev.copy_from_slice(host),
                Way::Out => host.copy_from_slice(dev),
            }
            done += n;
        }
        true
    }
}

/// A stripe's lock: a copy cannot leave a stripe inconsistent (its bytes
/// are whatever was copied), so a poisoned one is used as it is.
fn lock(m: &Mutex<ZeroedPages>) -> MutexGuard<'_, ZeroedPages> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_across_stripes_comes_back_whole() {
        let d = Data::zeroed(3 * MIN_STRIPE + 100).unwrap();
        assert_eq!(d.stripes.len(), 4);
        let mut w: Vec<u8> = (0..2 * MIN_STRIPE as usize + 10)
            .map(|i| (i % 251) as u8)
            .collect();
        let at = MIN_STRIPE as usize - 5;
        assert!(d.copy(at, &mut w, Way::In));
        let mut r = vec![0u8; w.len()];
        assert!(d.copy(at, &mut r, Way::Out));
        assert_eq!(r, w);
        let mut tail = vec![0u8; 100];
        assert!(d.copy(3 * MIN_STRIPE as usize, &mut tail, Way::Out));
        assert!(!d.copy(d.len() - 99, &mut tail, Way::Out), "past the end");
    }

    #[test]
    fn a_device_costs_what_was_written_even_after_others_were_dropped() {
        let resident = |d: &Data| {
            d.stripes
                .iter()
                .map(|s| lock(&s.0).resident_pages())
                .sum::<usize>()
        };
        for _ in 0..3 {
            let d = Data::zeroed(64 << 20).unwrap();
            assert_eq!(resident(&d), 0);
            let mut page = vec![7u8; 4096];
            assert!(d.copy(5 << 20, &mut page, Way::In));
            assert_eq!(resident(&d), 1);
        }
    }

    #[test]
    fn a_large_device_has_at_most_4096_stripes() {
        let d = Data::zeroed(8 << 30).unwrap();
        assert_eq!(d.stripes.len(), 4096);
        assert_eq!(d.stripe, 2 << 20);
    }
}
