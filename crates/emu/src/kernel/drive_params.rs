//! What a kernel drive makes of the emulator's parameters: those it cannot
//! honour ([`unsupported`]), the block size ([`block_size`]) and the queue
//! depth ([`queue_depth`]) it offers the kernel. Below the drive and its
//! transports, which all read them.

use crate::config::Params;

/// Parameters a kernel drive cannot honour, in one line; None when fine.
pub fn unsupported(p: &Params) -> Option<String> {
    if p.zoned.zoned {
        return Some("zoned=1: a loop device cannot be zoned; attach a conventional drive".into());
    }
    let page = u64::from(p.page_bytes.max(1));
    if !p.size.is_multiple_of(page) {
        return Some(format!(
            "size={}: not a whole number of the drive's {page}-byte pages (allowed: a multiple of {page}, e.g. size={})",
            p.size,
            (p.size / page).max(1) * page
        ));
    }
    if p.faults.power_cut() {
        return Some(
            "fault_power_cut_after / torn writes: the power-cut model is for in-process runs only"
                .into(),
        );
    }
    None
}

/// The logical block size the drive offers: its page, within what a loop
/// device takes (512 B – 4 KiB).
pub fn block_size(p: &Params) -> u32 {
    p.page_bytes.clamp(512, 4096).next_power_of_two().min(4096)
}

/// The queue depth the drive offers the kernel (`max_background`): the
/// emulator's interface depth, or 128 — the loop driver's own — when the
/// model has no limit.
pub fn queue_depth(p: &Params) -> u16 {
    match p.iface_depth {
        0 => 128,
        d => d.min(1024) as u16,
    }
}
