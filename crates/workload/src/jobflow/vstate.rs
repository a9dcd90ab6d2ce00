//! What a saved verify state vouches for under `verify_policy=fsynced`
//! (newer fio): only the writes issued before the last fsync (or
//! fdatasync) that completed. The point is taken when the sync is issued
//! — the flow lets the queue empty first, so every write before it has
//! completed — and kept once the sync succeeds; a state saved before any
//! sync succeeded vouches for nothing. `sync_file_range` does not count:
//! it makes no data durable.

/// Writes issued before a sync, and the last completed writes then
/// (file, offset; newest first), as the state file lists them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct SyncPoint {
    pub issued: u64,
    pub completed: Vec<(u64, u64)>,
}

/// The sync under way and the last one that completed.
#[derive(Debug, Default)]
pub(super) struct Fsynced {
    pending: Option<SyncPoint>,
    safe: Option<SyncPoint>,
}

impl Fsynced {
    /// A sync is issued with the flow at `point`.
    pub fn issued(&mut self, point: SyncPoint) {
        self.pending = Some(point);
    }

    /// The sync issued last completed (`ok`: it succeeded).
    pub fn completed(&mut self, ok: bool) {
        if let (Some(p), true) = (self.pending.take(), ok) {
            self.safe = Some(p);
        }
    }

    /// What a state saved now vouches for (nothing before a sync succeeded).
    pub fn safe(&self) -> SyncPoint {
        self.safe.clone().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_sync_that_succeeded_moves_the_safe_point() {
        let mut f = Fsynced::default();
        assert_eq!(f.safe(), SyncPoint::default());
        let p = |issued| SyncPoint {
            issued,
            completed: vec![(0, issued * 4096)],
        };
        f.issued(p(16));
        assert_eq!(f.safe().issued, 0, "not yet completed");
        f.completed(true);
        assert_eq!(f.safe(), p(16));
        f.issued(p(32));
        f.completed(false);
        assert_eq!(f.safe(), p(16), "a failed sync vouches for nothing");
        f.completed(true);
        assert_eq!(f.safe(), p(16), "no sync under way");
    }
}
