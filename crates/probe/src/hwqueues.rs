//! Which of a disk's hardware queues complete by polling: the NVMe
//! driver's poll queues (`nvme.poll_queues`), which take no interrupt and
//! serve io_uring's IOPOLL and `hipri`. The block layer's debugfs says it
//! per queue (`/sys/kernel/debug/block/DISK/hctxN/type`: `default`, `read`
//! or `poll`) where debugfs is mounted; elsewhere an NVMe controller's
//! queues are told apart by their interrupts: each interrupt-driven I/O
//! queue has one named `nvmeXqN` (N ≥ 1) in `/proc/interrupts`, and the
//! hardware queues beyond them poll.

use crate::sys::Sys;

/// The number of `disk`'s `hw_queues` that poll, with where it was read;
/// None where neither source tells.
pub fn poll_queues(s: Sys, disk: &str, hw_queues: u32) -> Option<(u32, String)> {
    if hw_queues == 0 {
        return None;
    }
    from_debugfs(s, disk, hw_queues).or_else(|| from_interrupts(s, disk, hw_queues))
}

fn from_debugfs(s: Sys, disk: &str, hw_queues: u32) -> Option<(u32, String)> {
    let dir = format!("/sys/kernel/debug/block/{disk}");
    let types: Vec<String> = (0..hw_queues)
        .map(|i| s.read(&format!("{dir}/hctx{i}/type")))
        .collect::<Option<_>>()?;
    let polled = types.iter().filter(|t| t.as_str() == "poll").count() as u32;
    Some((polled, format!("{dir}/hctx*/type")))
}

/// The NVMe controller that `disk` (a namespace, `nvme0n1`) belongs to:
/// the name its `device` link resolves to, else the name up to `n`.
fn controller(s: Sys, disk: &str) -> Option<String> {
    if !disk.starts_with("nvme") {
        return None;
    }
    let linked = std::fs::canonicalize(s.path(&format!("/sys/block/{disk}/device")))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| n.strip_prefix("nvme").is_some_and(is_number));
    linked.or_else(|| {
        let rest = &disk[4..];
        let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        (!num.is_empty()).then(|| format!("nvme{num}"))
    })
}

fn is_number(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// The I/O queue numbers (≥ 1) of `ctrl` that have an interrupt, from the
/// handler names in `/proc/interrupts` (`nvme0q1`, or several on a shared
/// vector: `nvme0q0, nvme0q1`).
pub fn interrupt_queues(interrupts: &str, ctrl: &str) -> Vec<u32> {
    let prefix = format!("{ctrl}q");
    let mut queues: Vec<u32> = interrupts
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter_map(|t| t.strip_prefix(&prefix)?.parse::<u32>().ok())
        .filter(|&q| q >= 1)
        .collect();
    queues.sort_unstable();
    queues.dedup();
    queues
}

fn from_interrupts(s: Sys, disk: &str, hw_queues: u32) -> Option<(u32, String)> {
    let ctrl = controller(s, disk)?;
    let text = s.read("/proc/interrupts")?;
    let with_irq = interrupt_queues(&text, &ctrl).len() as u32;
    if with_irq == 0 || with_irq > hw_queues {
        return None;
    }
    Some((
        hw_queues - with_irq,
        format!(
            "/proc/interrupts: {with_irq} of {ctrl}'s I/O queues have an interrupt, of {hw_queues} hardware queues"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_tree::Fake;

    const INTERRUPTS: &str = "           CPU0       CPU1
 24:          0         12  PCI-MSIX-0000:00:04.0   0-edge      nvme0q0
 25:        311          0  PCI-MSIX-0000:00:04.0   1-edge      nvme0q1
 26:          0        298  PCI-MSIX-0000:00:04.0   2-edge      nvme0q2
 27:          5          0  PCI-MSIX-0000:00:05.0   0-edge      nvme1q0, nvme1q1
";

    fn tree(files: &[(&str, &str)]) -> Fake {
        let f = Fake::new();
        for (rel, text) in files {
            f.file(rel, text);
        }
        f
    }

    #[test]
    fn queue_interrupts_are_told_per_controller_and_shared_vectors_count() {
        assert_eq!(interrupt_queues(INTERRUPTS, "nvme0"), vec![1, 2]);
        assert_eq!(interrupt_queues(INTERRUPTS, "nvme1"), vec![1]);
        assert!(interrupt_queues(INTERRUPTS, "nvme2").is_empty());
        // nvme1 is not nvme10's prefix match.
        assert!(interrupt_queues(" 30: 1 nvme10q1\n", "nvme1").is_empty());
    }

    #[test]
    fn nvme_queues_without_an_interrupt_are_its_poll_queues() {
        let d = tree(&[("/proc/interrupts", INTERRUPTS)]);
        let s = d.sys();
        let (n, src) = poll_queues(s, "nvme0n1", 4).unwrap();
        assert_eq!(n, 2);
        assert!(src.contains("2 of nvme0's I/O queues"), "{src}");
        // Every queue with its interrupt: none polls.
        assert_eq!(poll_queues(s, "nvme0n1", 2).unwrap().0, 0);
        // More interrupts than queues, or a disk that is not NVMe: unknown.
        assert_eq!(poll_queues(s, "nvme0n1", 1), None);
        assert_eq!(poll_queues(s, "vda", 2), None);
    }

    #[test]
    fn debugfs_queue_types_are_read_first() {
        let d = tree(&[
            ("/proc/interrupts", INTERRUPTS),
            ("/sys/kernel/debug/block/nvme0n1/hctx0/type", "default\n"),
            ("/sys/kernel/debug/block/nvme0n1/hctx1/type", "read\n"),
            ("/sys/kernel/debug/block/nvme0n1/hctx2/type", "poll\n"),
        ]);
        let (n, src) = poll_queues(d.sys(), "nvme0n1", 3).unwrap();
        assert_eq!(n, 1);
        assert!(src.ends_with("hctx*/type"), "{src}");
    }
}
