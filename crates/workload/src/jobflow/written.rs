//! The blocks a worker has written and not yet verified (fio's `io_hist`):
//! in write order when each block is written once per pass (a random map or
//! sequential writes), else sorted by (file, offset), a newer write
//! replacing every older one it overlaps — so the last write of a block is
//! what is expected there.

use std::collections::{BTreeMap, VecDeque};

/// One block written with verify headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Target index.
    pub file: u32,
    /// Byte offset.
    pub offset: u64,
    /// Length.
    pub len: u32,
    /// The write's sequence number in its worker.
    pub generation: u64,
    /// The seed of its data.
    pub seed: u64,
}

/// The written, unverified blocks.
#[derive(Debug)]
pub enum Written {
    /// In write order.
    InOrder(VecDeque<Piece>),
    /// By (file, offset), overlaps resolved in favour of the newest.
    Sorted(BTreeMap<(u32, u64), Piece>),
}

impl Written {
    /// An empty log: `in_order` when no block can be written twice in a pass.
    pub fn new(in_order: bool) -> Self {
        if in_order {
            Written::InOrder(VecDeque::new())
        } else {
            Written::Sorted(BTreeMap::new())
        }
    }

    /// Blocks waiting to be verified.
    pub fn len(&self) -> usize {
        match self {
            Written::InOrder(q) => q.len(),
            Written::Sorted(m) => m.len(),
        }
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record a completed write.
    pub fn add(&mut self, p: Piece) {
        match self {
            Written::InOrder(q) => q.push_back(p),
            Written::Sorted(m) => {
                let end = p.offset + u64::from(p.len);
                // Older pieces of this file that overlap [offset, end).
                let stale: Vec<(u32, u64)> = m
                    .range((p.file, 0)..(p.file, end))
                    .rev()
                    .take_while(|(_, o)| o.offset + u64::from(o.len) > p.offset)
                    .map(|(k, _)| *k)
                    .collect();
                for k in stale {
                    m.remove(&k);
                }
                m.insert((p.file, p.offset), p);
            }
        }
    }

    /// The next block to verify.
    pub fn pop(&mut self) -> Option<Piece> {
        match self {
            Written::InOrder(q) => q.pop_front(),
            Written::Sorted(m) => m.pop_first().map(|(_, p)| p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(offset: u64, len: u32, generation: u64) -> Piece {
        Piece {
            file: 0,
            offset,
            len,
            generation,
            seed: generation,
        }
    }

    #[test]
    fn the_newest_write_of_a_block_is_the_one_expected() {
        let mut w = Written::new(false);
        w.add(piece(8192, 4096, 1));
        w.add(piece(0, 4096, 2));
        w.add(piece(8192, 4096, 3));
        // Overlaps [4096, 12288): both the block at 8192 and none at 0.
        w.add(piece(6144, 4096, 4));
        assert_eq!(w.len(), 2);
        assert_eq!(w.pop(), Some(piece(0, 4096, 2)));
        assert_eq!(w.pop(), Some(piece(6144, 4096, 4)));
        assert_eq!(w.pop(), None);
    }

    #[test]
    fn in_order_keeps_the_write_order() {
        let mut w = Written::new(true);
        w.add(piece(8192, 4096, 1));
        w.add(piece(0, 4096, 2));
        assert_eq!(w.pop().unwrap().offset, 8192);
    }
}
