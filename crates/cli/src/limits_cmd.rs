//! `ssdready limits [TARGET] [--json]`: everything that can cap this
//! process's I/O, as the kernel shows it — its cgroups' I/O throttles,
//! latency targets and weights, CPU quota, cpuset and memory limit, its
//! affinity and usable CPUs, and the target's devices with their queues
//! and what a virtual disk's host cannot see — one line per limit with the
//! file it was read from (`ssdready_probe::limits`, words from
//! `ssdready_measured::limits::text`), and the block-device stack under
//! the target (md, device-mapper, loop, partitions; `ssdready_probe::stack`).
//! Nothing is changed. docs/limits.md lists every limit read; docs/stacks.md
//! the stack.

use crate::fail;
use crate::stdout::print;
use ssdready_measured::limits::{text, Inventory};
use ssdready_measured::stack_layers::Stack;
use std::path::PathBuf;

/// The `limits` command line.
#[derive(clap::Args, Debug)]
pub struct LimitsArgs {
    /// A file, directory or block device: the devices it is on are listed
    /// with their queues, and only their throttles (without one: every
    /// device's throttles, and no device).
    pub target: Option<PathBuf>,
    /// Print the inventory as JSON (docs/limits.md).
    #[arg(long)]
    pub json: bool,
}

/// The device numbers of the target, and a note when it has none; bad
/// input ends the command (exit 2).
type Devices = (Vec<(u32, u32)>, Option<String>);

fn target_devices(target: &std::path::Path) -> Result<Devices, crate::Exit> {
    match ssdready_probe::limits_dev::device_of_path(target) {
        Ok(Some(d)) => Ok((vec![d], None)),
        Ok(None) => Ok((
            Vec::new(),
            Some(format!(
                "{} is on no block device (tmpfs, overlay, a network file system): no device's throttle or queue holds it; the throttles listed are every device's",
                target.display()
            )),
        )),
        Err(e) => Err(fail(
            2,
            &format!(
                "limits: target '{}': {e} (allowed: an existing file, directory or block device)",
                target.display()
            ),
        )),
    }
}

fn render_text(
    inv: &Inventory,
    target: Option<&str>,
    note: Option<&str>,
    stack: Option<&Stack>,
) -> String {
    let on = match (target, inv.devices.first()) {
        (Some(t), Some(d)) => format!(" on {t} ({} {})", d.disk, d.device),
        (Some(t), None) => format!(" on {t}"),
        (None, _) => String::new(),
    };
    let mut out = format!(
        "What can cap the I/O of this process (pid {}){on}, as the kernel shows it; nothing was changed.\n\n",
        inv.pid
    );
    if let Some(n) = note {
        out.push_str(&format!("note: {n}\n\n"));
    }
    let lines = text::lines(inv);
    let width = lines.iter().map(|l| l.topic.len()).max().unwrap_or(0);
    for l in &lines {
        out.push_str(&format!(
            "{:<width$}  {}  [{}]\n",
            l.topic, l.text, l.source
        ));
    }
    if let Some(st) = stack {
        out.push_str(&format!(
            "\nthe stack under {} (/sys/block/*/slaves, md/, dm/):\n",
            st.target
        ));
        for l in st.lines() {
            out.push_str(&format!("  {l}\n"));
        }
        if !st.above.is_empty() {
            out.push_str(&format!("  (stacked above it: {})\n", st.above.join(", ")));
        }
        for n in &st.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
    }
    out
}

/// Run `ssdready limits`.
pub fn command(a: LimitsArgs) -> crate::Done {
    let (devices, note) = match &a.target {
        Some(t) => target_devices(t)?,
        None => (Vec::new(), None),
    };
    let inv = ssdready_probe::limits::inventory(std::process::id(), &devices);
    let stack = devices
        .first()
        .and_then(|&(maj, min)| ssdready_probe::stack::stack_of(maj, min))
        .filter(|s| s.is_stacked());
    let target = a.target.as_ref().map(|t| t.display().to_string());
    if a.json {
        let doc = serde_json::json!({
            "target": target,
            "note": note,
            "inventory": inv,
            "stack": stack,
        });
        let text = serde_json::to_string_pretty(&doc).expect("the inventory serialises");
        print(&format!("{text}\n"))
    } else {
        print(&render_text(
            &inv,
            target.as_deref(),
            note.as_deref(),
            stack.as_ref(),
        ))
    }
}
