//! fio's verify state files (`verify_state_save`, `verify_state_load`):
//! when a job that writes with verification ends — or is stopped, as by a
//! crash test that cuts power — it records how many blocks it had issued
//! and the offsets of the last writes that had completed. A later job with
//! `verify_state_load=1` (usually `verify_only`) then verifies only what
//! was surely written: every block up to the last `iodepth` writes, and
//! of those only the ones the state lists as completed; it stops at the
//! first it cannot vouch for.
//!
//! The file is fio's (version 3): a 24-byte header (version, size, CRC32C of
//! the rest) and a `thread_io_list` (completions, depth, files, blocks
//! issued, thread index, fio's random state — written as zeroes here, fio
//! does not use it on load — the job name, then `depth × files` completion
//! slots of (file number, offset)). Its name is
//! `local-<job>-<thread index>-verify.state`, in the current directory.

use super::block::fio_crc32c;

/// fio's `VSTATE_HDR_VERSION`.
const VERSION: u64 = 3;
/// Bytes of `struct thread_io_list` before its completion slots.
const LIST_BYTES: usize = 152;
/// Bytes of `struct verify_state_hdr`.
const HDR_BYTES: usize = 24;

/// Why a verify state file cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("{0} bytes is too short for a verify state")]
    TooShort(usize),
    #[error("version {0}, not fio's version {VERSION}")]
    Version(u64),
    #[error("it says {said} bytes follow, but {follow} do")]
    Truncated { said: usize, follow: usize },
    #[error("its CRC32C does not match: the state is corrupt")]
    Corrupt,
}

/// What one worker left behind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SavedState {
    /// The job's iodepth.
    pub depth: u32,
    /// How many files the job had.
    pub files: u32,
    /// Writes issued (fio's `numberio`).
    pub issued: u64,
    /// The worker's 0-based index in the run (fio's thread index).
    pub index: u64,
    /// The job name (at most 63 bytes are kept).
    pub name: String,
    /// The last completed writes, newest first: (file number, offset).
    pub completed: Vec<(u64, u64)>,
}

/// fio's file name for the state of worker `index` of job `name`.
pub fn file_name(name: &str, index: u64) -> String {
    format!("local-{}-{index}-verify.state", name.replace('/', "."))
}

impl SavedState {
    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let slots = self.depth as usize * self.files.max(1) as usize;
        let mut list = vec![0u8; LIST_BYTES + slots * 16];
        let n = self.completed.len().min(slots);
        list[0..8].copy_from_slice(&(n as u64).to_le_bytes());
        list[8..12].copy_from_slice(&self.depth.to_le_bytes());
        list[12..16].copy_from_slice(&self.files.max(1).to_le_bytes());
        list[16..24].copy_from_slice(&self.issued.to_le_bytes());
        list[24..32].copy_from_slice(&self.index.to_le_bytes());
        // 32..88: fio's random state (use64 = 0 and zero words).
        let name = self.name.as_bytes();
        let keep = name.len().min(63);
        list[88..88 + keep].copy_from_slice(&name[..keep]);
        for (i, &(file, offset)) in self.completed.iter().take(n).enumerate() {
            let at = LIST_BYTES + i * 16;
            list[at..at + 8].copy_from_slice(&file.to_le_bytes());
            list[at + 8..at + 16].copy_from_slice(&offset.to_le_bytes());
        }
        let mut out = Vec::with_capacity(HDR_BYTES + list.len());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(list.len() as u64).to_le_bytes());
        out.extend_from_slice(&u64::from(fio_crc32c(&list)).to_le_bytes());
        out.extend_from_slice(&list);
        out
    }

    /// Read a state file's bytes; the error says what is wrong with it.
    pub fn from_bytes(b: &[u8]) -> Result<SavedState, StateError> {
        let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8"));
        let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
        if b.len() < HDR_BYTES + LIST_BYTES {
            return Err(StateError::TooShort(b.len()));
        }
        let version = u64_at(b, 0);
        if version != VERSION {
            return Err(StateError::Version(version));
        }
        let size = usize::try_from(u64_at(b, 8)).unwrap_or(usize::MAX);
        let list = b
            .get(HDR_BYTES..HDR_BYTES.saturating_add(size))
            .filter(|l| l.len() >= LIST_BYTES)
            .ok_or_else(|| StateError::Truncated {
                said: size,
                follow: b.len() - HDR_BYTES,
            })?;
        if u64::from(fio_crc32c(list)) != u64_at(b, 16) {
            return Err(StateError::Corrupt);
        }
        let depth = u32_at(list, 8);
        let files = u32_at(list, 12);
        let slots = (list.len() - LIST_BYTES) / 16;
        let n = usize::try_from(u64_at(list, 0))
            .unwrap_or(usize::MAX)
            .min(slots);
        let name_bytes = &list[88..152];
        let name_len = name_bytes.iter().position(|&c| c == 0).unwrap_or(64);
        Ok(SavedState {
            depth,
            files,
            issued: u64_at(list, 16),
            index: u64_at(list, 24),
            name: String::from_utf8_lossy(&name_bytes[..name_len]).into_owned(),
            completed: (0..n)
                .map(|i| {
                    let at = LIST_BYTES + i * 16;
                    (u64_at(list, at), u64_at(list, at + 8))
                })
                .collect(),
        })
    }

    /// Whether verification must stop before the block at (`file`,
    /// `offset`), after `verified` blocks were read back (fio's rule: within
    /// the last `depth` writes, only blocks listed as completed are known to
    /// be there).
    pub fn should_stop(&self, verified: u64, file: u64, offset: u64) -> bool {
        let depth = u64::from(self.depth);
        let before_window = verified < depth || self.issued.wrapping_sub(verified) > depth;
        if before_window && self.issued > depth {
            return false;
        }
        !self
            .completed
            .iter()
            .any(|&(f, o)| f == file && o == offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> SavedState {
        SavedState {
            depth: 4,
            files: 1,
            issued: 100,
            index: 2,
            name: "crash/test".into(),
            completed: vec![(0, 409_600), (0, 401_408), (0, 397_312)],
        }
    }

    #[test]
    fn a_state_reads_back_and_its_layout_is_fios() {
        let s = state();
        let b = s.to_bytes();
        assert_eq!(b.len(), HDR_BYTES + LIST_BYTES + 4 * 16);
        assert_eq!(SavedState::from_bytes(&b).unwrap(), s);
        assert_eq!(
            file_name(&s.name, s.index),
            "local-crash.test-2-verify.state"
        );
        let mut bad = b.clone();
        bad[HDR_BYTES + 20] ^= 1;
        assert!(SavedState::from_bytes(&bad)
            .unwrap_err()
            .to_string()
            .contains("corrupt"));
        assert!(SavedState::from_bytes(&b[..50]).is_err());
    }

    #[test]
    fn verification_stops_at_the_first_write_not_known_complete() {
        let s = state();
        // Well before the last `depth` writes: verify.
        assert!(!s.should_stop(10, 0, 0));
        // Within them: only the completed ones.
        assert!(!s.should_stop(97, 0, 401_408));
        assert!(s.should_stop(97, 0, 405_504));
        assert!(s.should_stop(98, 1, 409_600));
    }
}
