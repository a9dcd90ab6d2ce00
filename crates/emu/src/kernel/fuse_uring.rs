//! FUSE over io_uring, the protocol side: the few definitions of
//! `include/uapi/linux/fuse.h` (6.14 on) the kernel drive needs, written by
//! hand, and the kernel's switch for it
//! (`/sys/module/fuse/parameters/enable_uring`).
//!
//! The connection is set up over `/dev/fuse` as before: the INIT reply asks
//! for `FUSE_OVER_IO_URING` (a bit of `flags2`, which the kernel reads when
//! the reply also sets `FUSE_INIT_EXT`). The server then registers, for
//! every possible CPU's queue, entries (a header of
//! `struct fuse_uring_req_header` and a payload) with
//! `FUSE_IO_URING_CMD_REGISTER`; once every queue has one, the kernel sends
//! each request to the queue of the CPU it was issued on, as the completion
//! of one entry's command, and takes the reply with the entry's next
//! command, `FUSE_IO_URING_CMD_COMMIT_AND_FETCH`, which also asks for the
//! entry's next request. Neither needs a `read(2)` or `write(2)`.
//!
//! Inside an entry's header a request is: its `fuse_in_header` at
//! [`IN_OUT`], the operation's own header (`fuse_read_in`, …) at [`OP_IN`],
//! and at [`ENT_IN_OUT`] the commit id to answer with and the payload's
//! length (a WRITE's data, a LOOKUP's name). A reply is its
//! `fuse_out_header` at [`IN_OUT`], its body in the payload, and the body's
//! length at [`PAYLOAD_SZ`].

use super::error::KernelError;
use super::fuse_proto::op;
use std::path::Path;

/// `FUSE_IO_URING_CMD_REGISTER` and `FUSE_IO_URING_CMD_COMMIT_AND_FETCH`.
pub const CMD_REGISTER: u32 = 1;
pub const CMD_COMMIT_AND_FETCH: u32 = 2;

/// Offsets in `struct fuse_uring_req_header` (288 bytes): `in_out[128]`,
/// `op_in[128]`, then `struct fuse_uring_ent_in_out` (`flags`,
/// `commit_id`, `payload_sz`, `padding`, `reserved`).
pub const IN_OUT: usize = 0;
pub const OP_IN: usize = 128;
pub const ENT_IN_OUT: usize = 256;
pub const COMMIT_ID: usize = ENT_IN_OUT + 8;
pub const PAYLOAD_SZ: usize = ENT_IN_OUT + 16;
pub const REQ_HEADER: usize = ENT_IN_OUT + 32;
/// `sizeof(struct fuse_uring_cmd_req)`: `flags`, `commit_id`, `qid`, 6
/// bytes of padding.
pub const CMD_REQ: usize = 24;

/// Where the kernel's switch is.
pub const PARAM: &str = "/sys/module/fuse/parameters/enable_uring";

/// The 80-byte command area of a register (`commit_id` 0) or
/// commit-and-fetch command for queue `qid`.
pub fn cmd_req(commit_id: u64, qid: u16) -> [u8; 80] {
    let mut c = [0u8; 80];
    c[8..16].copy_from_slice(&commit_id.to_le_bytes());
    c[16..18].copy_from_slice(&qid.to_le_bytes());
    c
}

/// The size of the operation's own header (the request's first argument,
/// which the kernel puts at [`OP_IN`]) for the operations the drive
/// serves; 0 where the first argument is empty (LOOKUP's name and the
/// rest go in the payload).
pub fn op_in_size(opcode: u32) -> usize {
    match opcode {
        op::READ | op::WRITE => 40, // fuse_read_in, fuse_write_in
        op::FALLOCATE => 32,        // fuse_fallocate_in
        op::FSYNC | op::GETATTR => 16,
        op::SETATTR => 88,
        op::OPEN => 8,
        op::FLUSH | op::RELEASE => 24,
        _ => 0,
    }
}

/// The commit id and payload length of the request in an entry's header.
pub fn request_of(header: &[u8]) -> (u64, usize) {
    let id = u64::from_le_bytes(
        header[COMMIT_ID..COMMIT_ID + 8]
            .try_into()
            .expect("8 bytes"),
    );
    let sz = u32::from_le_bytes(
        header[PAYLOAD_SZ..PAYLOAD_SZ + 4]
            .try_into()
            .expect("4 bytes"),
    );
    (id, sz as usize)
}

/// Write a reply's `fuse_out_header` and its body's length into an
/// entry's header (the body is in the payload already).
pub fn put_reply(header: &mut [u8], unique: u64, error: i32, body: usize) {
    let h = super::fuse_proto::out_header(unique, error, body);
    header[IN_OUT..IN_OUT + h.len()].copy_from_slice(&h);
    header[PAYLOAD_SZ..PAYLOAD_SZ + 4].copy_from_slice(&(body as u32).to_le_bytes());
}

/// How many queues the kernel wants: one per possible CPU
/// (`/sys/devices/system/cpu/possible`, e.g. `0-1` or `0-3,6`: the highest
/// CPU + 1, as queue ids are CPU numbers).
pub fn possible_cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    parse_cpu_list(&s)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn parse_cpu_list(s: &str) -> Option<usize> {
    let mut top = None;
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let last = part.rsplit('-').next()?;
        let n: usize = last.trim().parse().ok()?;
        top = Some(top.map_or(n, |t: usize| t.max(n)));
    }
    top.map(|t| t + 1)
}

/// The kernel's switch: Some(true) for Y, Some(false) for N, None when this
/// kernel has no FUSE over io_uring.
pub fn enabled() -> Option<bool> {
    let v = std::fs::read_to_string(PARAM).ok()?;
    Some(v.trim() == "Y" || v.trim() == "1")
}

/// Where the switch's value before any attachment turned it on is kept
/// (the first attachment that turns it on writes it; the last one to go
/// puts it back and removes the file).
pub fn was_path(run_dir: &Path) -> std::path::PathBuf {
    run_dir.join("enable_uring.was")
}

/// Turn the kernel's switch on (root), keeping what it was in `run_dir`
/// unless an earlier attachment already did. Ok(None) when it was on;
/// Ok(Some(line)) saying that it was turned on.
pub fn turn_on(run_dir: &Path) -> Result<Option<String>, KernelError> {
    match enabled() {
        None => Err(KernelError::NoUringSwitch { param: PARAM }),
        Some(true) => Ok(None),
        Some(false) => {
            keep_was(run_dir)?;
            std::fs::write(PARAM, "Y").map_err(|err| KernelError::TurnOn { param: PARAM, err })?;
            Ok(Some(format!(
                "turned FUSE over io_uring on ({PARAM}: N → Y); it is put back to N when the last \
                 drive using it is detached"
            )))
        }
    }
}

/// Record that the switch was off, unless an earlier attachment did:
/// written and synced (with its directory) before the switch is flipped,
/// so that a process killed right after the flip leaves the record that
/// the next `emu list`, `emu detach` or `emu attach` puts the switch back
/// by. A record there that another user could have written is refused.
fn keep_was(run_dir: &Path) -> Result<(), KernelError> {
    let was = was_path(run_dir);
    let kept = match super::state::read_checked(&was) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => super::state::write(&was, b"N\n"),
        Err(why) => Err(std::io::Error::other(why)),
    };
    kept.map_err(|err| KernelError::KeepSwitch {
        param: PARAM,
        path: was,
        err,
    })
}

/// The value the switch's record says to put back: None when there is no
/// record, or when it fails the checks of [`super::state`] (then it is
/// not acted on, and one line on stderr says so) or holds anything but
/// `N` or `Y`.
pub fn recorded(run_dir: &Path) -> Option<&'static str> {
    match super::state::read(&was_path(run_dir))?.trim() {
        "Y" => Some("Y"),
        "N" => Some("N"),
        _ => None,
    }
}

/// Put the switch back as the first attachment found it (when one turned
/// it on and none of them is left: `others_live` false). The line saying
/// so, if it did.
pub fn put_back(run_dir: &Path, others_live: bool) -> Option<String> {
    let was = was_path(run_dir);
    if others_live {
        return None;
    }
    let v = recorded(run_dir)?;
    let _ = std::fs::remove_file(&was);
    match std::fs::write(PARAM, v) {
        Ok(()) => Some(format!("put {PARAM} back to {v}")),
        Err(e) => Some(format!("could not put {PARAM} back to {v}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::fuse_proto::{INIT_EXT, OVER_IO_URING_FLAGS2};

    /// From include/uapi/linux/fuse.h: sizeof(struct fuse_uring_req_header)
    /// = 288, sizeof(struct fuse_uring_ent_in_out) = 32,
    /// sizeof(struct fuse_uring_cmd_req) = 24, FUSE_URING_IN_OUT_HEADER_SZ =
    /// FUSE_URING_OP_IN_OUT_SZ = 128.
    const KERNEL_REQ_HEADER: usize = 288;
    const KERNEL_IN_OUT_HEADER_SZ: usize = 128;
    const KERNEL_CMD_REQ: usize = 24;

    #[test]
    fn the_hand_written_layouts_have_the_kernel_header_sizes_and_offsets() {
        assert_eq!(REQ_HEADER, KERNEL_REQ_HEADER);
        assert_eq!(REQ_HEADER, ssdready_io::fuse_uring::HEADER_BYTES);
        assert_eq!(OP_IN, KERNEL_IN_OUT_HEADER_SZ);
        assert_eq!(ENT_IN_OUT, 2 * KERNEL_IN_OUT_HEADER_SZ);
        assert_eq!(CMD_REQ, KERNEL_CMD_REQ);
        // fuse_uring_ent_in_out: flags @0, commit_id @8, payload_sz @16.
        assert_eq!((COMMIT_ID - ENT_IN_OUT, PAYLOAD_SZ - ENT_IN_OUT), (8, 16));
        // enum fuse_uring_cmd; FUSE_OVER_IO_URING = 1ULL << 41.
        assert_eq!((CMD_REGISTER, CMD_COMMIT_AND_FETCH), (1, 2));
        assert_eq!(((OVER_IO_URING_FLAGS2 as u64) << 32), 1u64 << 41);
        assert_eq!(INIT_EXT, 0x4000_0000);
    }

    #[test]
    fn a_command_names_its_request_and_queue() {
        let c = cmd_req(0x0102_0304_0506_0708, 3);
        assert_eq!(&c[0..8], &[0; 8], "flags");
        assert_eq!(
            u64::from_le_bytes(c[8..16].try_into().unwrap()),
            0x0102_0304_0506_0708
        );
        assert_eq!(u16::from_le_bytes(c[16..18].try_into().unwrap()), 3);
        assert!(c[18..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_reply_and_a_request_sit_where_the_kernel_reads_them() {
        let mut h = vec![0u8; REQ_HEADER];
        h[COMMIT_ID..COMMIT_ID + 8].copy_from_slice(&77u64.to_le_bytes());
        h[PAYLOAD_SZ..PAYLOAD_SZ + 4].copy_from_slice(&4096u32.to_le_bytes());
        assert_eq!(request_of(&h), (77, 4096));
        put_reply(&mut h, 77, -5, 8);
        assert_eq!(u32::from_le_bytes(h[0..4].try_into().unwrap()), 16 + 8);
        assert_eq!(i32::from_le_bytes(h[4..8].try_into().unwrap()), -5);
        assert_eq!(u64::from_le_bytes(h[8..16].try_into().unwrap()), 77);
        assert_eq!(request_of(&h), (77, 8));
    }

    #[test]
    fn the_operation_headers_have_their_uapi_sizes() {
        assert_eq!(op_in_size(op::READ), 40);
        assert_eq!(op_in_size(op::WRITE), super::super::fuse_proto::WRITE_IN);
        assert_eq!(op_in_size(op::FALLOCATE), 32);
        assert_eq!(op_in_size(op::FSYNC), 16);
        assert_eq!(op_in_size(op::LOOKUP), 0);
    }

    #[test]
    fn the_switch_record_is_kept_before_the_flip_and_refused_once_others_can_write_it() {
        use std::os::unix::fs::PermissionsExt;
        let run = tempfile::tempdir().unwrap();
        assert_eq!(recorded(run.path()), None);
        keep_was(run.path()).unwrap();
        assert_eq!(recorded(run.path()), Some("N"));
        // A second attachment keeps the first one's record.
        std::fs::write(was_path(run.path()), "Y\n").unwrap();
        keep_was(run.path()).unwrap();
        assert_eq!(recorded(run.path()), Some("Y"));
        // Rewritable by another user: not acted on, and not kept over.
        let was = was_path(run.path());
        std::fs::set_permissions(&was, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(recorded(run.path()), None);
        assert!(keep_was(run.path()).is_err());
        assert_eq!(put_back(run.path(), false), None);
        assert!(was.exists());
    }

    #[test]
    fn queues_count_every_possible_cpu() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(2));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-3,6"), Some(7));
        assert_eq!(parse_cpu_list(""), None);
        assert!(possible_cpus() >= 1);
    }
}
