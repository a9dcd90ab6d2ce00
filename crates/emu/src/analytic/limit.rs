//! The emulated device's own capability, computed from its parameters: the
//! ground truth a study of an emulator must find.
//!
//! A command uses, in order, a controller core (`fw_cmd_ns` +
//! `fw_per_4k_ns` per 4 KiB, on one of `fw_units`), its pages' dies (a read
//! holds one of a die's `planes` for `read_ns` per NAND page plus its pages'
//! channel transfers; a program holds the die for `program_ns` per program
//! unit of `planes` NAND pages), the channels, and the host link; with
//! `cmd_slots` a command also holds a slot from start to completion, and
//! with `iface_depth` the host's interface permit too. Each resource caps
//! the commands per second; the device's limit is the smallest cap, and the
//! resource that sets it is what limits the device. In DRAM mode each of the `dies` units serves a command in
//! `dram_per_4k_ns` per 4 KiB. Writes are bounded by the TLC rate after the
//! SLC cache; over a run of T seconds from fresh the buffer and the SLC
//! cache add to it ([`write_iops_over`], from `crate::analytic`).
//!
//! The bounds are throughput at unlimited queue depth. Random reads that
//! land on random dies collide, so a many-die drive approaches its die bound
//! only at queue depths of several times its read units (dies × planes);
//! the tests check every preset's bound against a virtual-time run at QD
//! 512 (the depth of datasheets' QD 32 × 16 threads).

use crate::config::Params;

use ssdready_measured::basis::{Bound, ModelLimit};

/// What a workload asks of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Writes to a fresh (never garbage-collected) region, sustained: the
    /// write buffer absorbs only a burst of its size.
    Write,
}

fn per_s(ns: f64) -> Option<f64> {
    (ns > 0.0).then(|| 1e9 / ns)
}

fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1000.0)
}

/// The limit of commands of `bs` bytes doing `access` on the device `p`.
pub fn model_limit(p: &Params, access: Access, bs: u64) -> ModelLimit {
    let mut m = Model::new(p, access, bs);
    let idle_latency_ns = if p.dram { m.dram() } else { m.flash() };
    let idle_latency_ns = m.host(idle_latency_ns);
    let bounds = m.bounds;
    let best = bounds
        .iter()
        .min_by(|a, b| a.iops.total_cmp(&b.iops))
        .cloned();
    ModelLimit {
        iops: best.as_ref().map(|b| b.iops),
        bw_bytes_per_s: best.as_ref().map(|b| b.iops * bs as f64),
        bound_by: best.map(|b| format!("the {} ({})", b.resource, b.detail)),
        bounds,
        idle_latency_ns,
    }
}

/// A command's way through the model, and the rate each resource on it
/// bounds.
struct Model<'a> {
    p: &'a Params,
    access: Access,
    /// The command's pages, of `page` bytes each.
    pages: f64,
    page: u64,
    /// The command's data on the host link, and one page on a channel.
    link_ns: f64,
    chan_ns: f64,
    bounds: Vec<Bound>,
}

impl<'a> Model<'a> {
    fn new(p: &'a Params, access: Access, bs: u64) -> Self {
        let page = p.page_bytes as u64;
        let link_ns = if p.link_mbps > 0.0 {
            bs as f64 / (p.link_mbps * 1e6) * 1e9
        } else {
            0.0
        };
        let chan_ns = if p.channel_mbps > 0.0 {
            page as f64 / (p.channel_mbps * 1e6) * 1e9
        } else {
            0.0
        };
        Model {
            p,
            access,
            pages: bs.div_ceil(page).max(1) as f64,
            page,
            link_ns,
            chan_ns,
            bounds: Vec::new(),
        }
    }

    fn push(&mut self, resource: &str, iops: Option<f64>, detail: String) {
        if let Some(iops) = iops {
            self.bounds.push(Bound {
                resource: resource.into(),
                iops,
                detail,
            });
        }
    }

    /// A DRAM device's units; its idle latency.
    fn dram(&mut self) -> f64 {
        let p = self.p;
        let service = p.dram_per_4k_ns as f64 * self.pages * self.page as f64 / 4096.0;
        self.push(
            "DRAM units",
            per_s(service).map(|r| r * p.dies() as f64),
            format!("{} unit(s) × {} per command", p.dies(), us(service)),
        );
        p.dram_cmd_ns as f64 + service + self.link_ns
    }

    /// A flash device's controller, dies and channels; its idle latency.
    fn flash(&mut self) -> f64 {
        let (p, access, pages, chan_ns, link_ns) =
            (self.p, self.access, self.pages, self.chan_ns, self.link_ns);
        let fw = p.fw_cmd_ns as f64 + p.fw_per_4k_ns as f64 * pages * self.page as f64 / 4096.0;
        self.push(
            "controller",
            per_s(fw).map(|r| r * p.fw_units as f64),
            format!("{} core(s) × {} per command", p.fw_units, us(fw)),
        );
        let nand = Nand::of(p, pages);
        self.dies(&nand);
        self.push(
            "channels",
            per_s(chan_ns * pages).map(|r| r * p.channels as f64),
            format!(
                "{} channels at {} MB/s, {} per page",
                p.channels,
                p.channel_mbps,
                us(chan_ns)
            ),
        );
        let per_chan = (pages / p.channels as f64).ceil();
        let per_die = (pages / p.dies() as f64).ceil();
        match access {
            Access::Read => fw + nand.plane_reads * p.read_ns as f64 + per_chan * chan_ns + link_ns,
            // A write buffer completes a write once its data has arrived;
            // the program happens behind it (and bounds the rate: dies).
            Access::Write if p.write_buffer > 0 => fw + link_ns,
            Access::Write => fw + link_ns + per_chan * chan_ns + per_die * p.program_ns as f64,
        }
    }

    /// The dies' (or planes') bound.
    fn dies(&mut self, nand: &Nand) {
        let (p, pages, chan_ns) = (self.p, self.pages, self.chan_ns);
        let (die_ns, units) = match self.access {
            // Plane time per command: its NAND page reads and transfers.
            Access::Read => (
                nand.reads * p.read_ns as f64 + pages * chan_ns,
                p.dies() as f64 * nand.planes,
            ),
            Access::Write => (pages * p.program_ns as f64 / nand.unit, p.dies() as f64),
        };
        let detail = match self.access {
            Access::Read => format!(
                "{} dies × {} planes, {} per NAND page read + {} per page transfer, {} page(s) per command",
                p.dies(),
                nand.planes,
                us(p.read_ns as f64),
                us(chan_ns),
                pages
            ),
            Access::Write => format!(
                "{} dies × {} per program unit of {} pages, {} page(s) per command",
                p.dies(),
                us(p.program_ns as f64),
                nand.unit,
                pages
            ),
        };
        self.push("dies", per_s(die_ns).map(|r| r * units), detail);
    }

    /// The host link, the interface's depth and the command slots; the idle
    /// latency with each command's own costs added.
    fn host(&mut self, idle_latency_ns: f64) -> f64 {
        let p = self.p;
        self.push(
            "host link",
            per_s(self.link_ns),
            format!("{} MB/s, {} per command", p.link_mbps, us(self.link_ns)),
        );
        // Once per command: its own bytes on the link, its completion (and a
        // one-extent command's extent set-up, in the controller or DRAM unit).
        let cmd_link_ns = if p.link_mbps > 0.0 {
            p.cmd_bytes as f64 / (p.link_mbps * 1e6) * 1e9
        } else {
            0.0
        };
        let idle_latency_ns = idle_latency_ns + cmd_link_ns + (p.cpl_ns + p.extent_ns) as f64;
        if p.iface_depth > 0 {
            self.push(
                "host interface",
                per_s(idle_latency_ns).map(|r| r * p.iface_depth as f64),
                format!(
                    "{} command(s) outstanding, each for {}",
                    p.iface_depth,
                    us(idle_latency_ns)
                ),
            );
        }
        if p.cmd_slots > 0 {
            self.push(
                "command slots",
                per_s(idle_latency_ns).map(|r| r * p.cmd_slots as f64),
                format!(
                    "{} slots, each held for a command's {}",
                    p.cmd_slots,
                    us(idle_latency_ns)
                ),
            );
        }
        idle_latency_ns
    }
}

/// How a command's pages meet a flash device's NAND array.
struct Nand {
    planes: f64,
    /// Pages per program unit.
    unit: f64,
    /// NAND page reads of one command: its pages are striped over the dies,
    /// a die's share lies in consecutive pages and so in whole NAND pages.
    reads: f64,
    /// Of those, the most one plane does in turn.
    plane_reads: f64,
}

impl Nand {
    fn of(p: &Params, pages: f64) -> Nand {
        let per_page = (p.flash_page_bytes / p.page_bytes.max(1)).max(1) as f64;
        let dies = p.dies().max(1) as f64;
        let planes = p.planes.max(1) as f64;
        let per_die = (pages / dies).ceil();
        let die_reads = (per_die / per_page).ceil();
        Nand {
            planes,
            unit: per_page * planes,
            reads: pages.min(dies) * die_reads,
            plane_reads: (die_reads / planes).ceil(),
        }
    }
}

/// Commands per second of `bs`-byte writes over a run of `window_s`
/// seconds from fresh, at unlimited depth: the other resources' cap on
/// the host's rate, through the write buffer, the SLC cache and then TLC
/// ([`crate::analytic::fresh_write_bytes`]). None when nothing bounds it.
pub fn write_iops_over(p: &Params, bs: u64, window_s: f64) -> Option<f64> {
    let l = model_limit(p, Access::Write, bs);
    let host = l
        .bounds
        .iter()
        .filter(|b| b.resource != "dies")
        .map(|b| b.iops * bs as f64)
        .reduce(f64::min);
    if window_s <= 0.0 || p.dram {
        return l.iops;
    }
    let bytes = crate::analytic::fresh_write_bytes(p, host, window_s);
    bytes.is_finite().then(|| bytes / bs as f64 / window_s)
}

/// The queue depth at which the device could first reach its limit:
/// limit × idle latency (Little's law), at least 1.
pub fn model_qd(l: &ModelLimit) -> Option<f64> {
    l.iops.map(|i| (i * l.idle_latency_ns / 1e9).max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(preset: &str) -> ModelLimit {
        model_limit(&Params::parse(preset).unwrap(), Access::Read, 4096)
    }

    #[test]
    fn x25e_reads_are_bound_by_its_one_controller() {
        let l = limit("x25e");
        assert!((l.iops.unwrap() - 35_714.0).abs() < 1.0, "{l:?}");
        assert!(l.bound_by.clone().unwrap().contains("controller"));
        // 28 us controller + 25 us read + 81.9 us channel + 13.7 us link
        // + 0.2 us for the command's own 64 B on the link
        assert!(
            (l.idle_latency_ns - 148_783.0).abs() < 100.0,
            "{}",
            l.idle_latency_ns
        );
    }

    #[test]
    fn iodrive_reads_are_bound_by_its_four_command_slots() {
        let l = limit("iodrive");
        assert!(l.bound_by.clone().unwrap().contains("command slots"));
        let qd = model_qd(&l).unwrap();
        assert!((3.9..4.1).contains(&qd), "{qd}");
    }

    #[test]
    fn buffered_writes_hold_a_command_slot_only_until_their_data_arrives() {
        let p = Params::parse("iodrive").unwrap();
        let l = model_limit(&p, Access::Write, 4096);
        assert!(l.bound_by.clone().unwrap().contains("dies"), "{l:?}");
        assert!((l.iops.unwrap() - 128_000.0).abs() < 1.0);
        let p = Params::parse("iodrive,write_buffer=0").unwrap();
        let l = model_limit(&p, Access::Write, 4096);
        assert!(l.bound_by.unwrap().contains("command slots"));
    }

    #[test]
    fn null_has_no_limit() {
        let l = limit("null");
        assert_eq!(l.iops, None);
        assert_eq!(l.idle_latency_ns, 0.0);
    }

    #[test]
    fn big_reads_are_bound_by_bandwidth() {
        let p = Params::parse("x25e").unwrap();
        let l = model_limit(&p, Access::Read, 1 << 20);
        let bw = l.bw_bytes_per_s.unwrap();
        assert!((bw - 300e6).abs() < 1e3, "{bw}");
        assert!(l.bound_by.unwrap().contains("host link"));
        // nvme-tlc: 256 pages over 16 dies × 4 planes (64 NAND page reads of
        // 37 µs, 20.7 GB/s) and 8 channels (9.6 GB/s) beat the 7 GB/s link.
        let l = model_limit(&Params::parse("nvme-tlc").unwrap(), Access::Read, 1 << 20);
        assert!(l.bound_by.clone().unwrap().contains("host link"), "{l:?}");
        let dies = l.bounds.iter().find(|b| b.resource == "dies").unwrap();
        assert!(
            (dies.iops * (1 << 20) as f64 - 20.7e9).abs() < 0.1e9,
            "{dies:?}"
        );
        // 1 MiB reads of a device whose 4 KiB pages are its NAND pages: one
        // read per page, as before the multi-plane model.
        let l = model_limit(&Params::parse("iodrive").unwrap(), Access::Read, 1 << 20);
        let dies = l.bounds.iter().find(|b| b.resource == "dies").unwrap();
        assert!(
            (dies.iops - 32.0 / (256.0 * 32.24e-6)).abs() < 1.0,
            "{dies:?}"
        );
    }
}
