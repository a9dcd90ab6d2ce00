//! The memory estimate against what devices really take: the growth of this
//! process's resident memory while a device is built and written all over.
//! One test, so that no other test's allocations run beside it.

use ssdready_core::spec::{BlockSizes, EngineKind, JobSpec};
use ssdready_core::{Ddir, IoReq};
use ssdready_emu::config::Params;
use ssdready_emu::device::{Device, Extent, Op};
use ssdready_emu::engine::{EmuEngine, SharedDevice};
use ssdready_emu::memory::{self, JobLoad, TimeBase};
use ssdready_io::clock::Clock;
use ssdready_io::Engine;

fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

fn assert_near(what: &str, measured: u64, estimated: u64) {
    let (m, e) = (measured as f64, estimated as f64);
    // 10 % either way, and 4 MiB for the allocator and the test harness.
    let slack = 0.10 * e + (4 << 20) as f64;
    eprintln!(
        "{what}: grew {:.1} MiB, estimated {:.1} MiB",
        m / 1048576.0,
        e / 1048576.0
    );
    assert!(
        (m - e).abs() <= slack,
        "{what}: resident memory grew {:.1} MiB, the estimate is {:.1} MiB",
        m / 1048576.0,
        e / 1048576.0
    );
}

/// A filled device in real time: its data pages once (not twice), plus the
/// worker's buffers.
fn filled_device_costs_its_size_once() {
    let p = Params::parse("null,size=256m").unwrap();
    let spec = JobSpec {
        iodepth: 8,
        bs: BlockSizes::Fixed(1 << 20),
        ioengine: EngineKind::Emu,
        ..JobSpec::default()
    };
    let need = memory::estimate(&[&p], &[vec![JobLoad::of(&spec)]], TimeBase::Real);
    assert_eq!(need.data_pages, 256 << 20);
    assert_eq!(need.buffers, 8 << 20);
    let before = rss();
    let dev = SharedDevice::new(p, Clock::calibrate()).unwrap();
    let mut e = EmuEngine::new(dev, &spec, 7).unwrap();
    let mut out = Vec::new();
    for (i, off) in (0..256u64 << 20).step_by(1 << 20).enumerate() {
        e.queue(IoReq {
            slot: (i % 8) as u32,
            file: 0,
            ddir: Ddir::Write,
            offset: off,
            len: 1 << 20,
        })
        .unwrap();
        e.getevents(1, &mut out).unwrap();
        out.clear();
    }
    let grown = rss().saturating_sub(before);
    assert_near("a filled 256 MiB device", grown, need.total());
}

/// A flash device's FTL in virtual time (no data): maps and block tables,
/// all of them touched by writing every page.
fn ftl_tables_cost_what_the_estimate_says() {
    let p = Params::parse("nvme-tlc,size=8g").unwrap();
    let need = memory::device(&p, TimeBase::Virtual);
    assert_eq!(need.data_pages, 0);
    let before = rss();
    let mut d = Device::new(&p);
    let mut t = 0;
    for off in (0..8u64 << 30).step_by(1 << 20) {
        t = d
            .submit(
                t,
                Op::Write,
                &[Extent {
                    offset: off,
                    len: 1 << 20,
                }],
            )
            .expect("a sequential fill is within the model's limits");
    }
    let grown = rss().saturating_sub(before);
    assert_near("the FTL of an 8 GiB flash device", grown, need.total());
    drop(d);
}

#[test]
fn the_estimate_matches_what_devices_really_take() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    filled_device_costs_its_size_once();
    ftl_tables_cost_what_the_estimate_says();
}
