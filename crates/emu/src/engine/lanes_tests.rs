//! A worker's reads on its own lanes of the device (the engine's side of
//! [`crate::device::queue_reads`]).

use super::tests::{device, req};
use super::*;

#[test]
fn workers_read_on_their_own_queue_pairs_without_a_device_wide_lock() {
    // Two workers at QD 32 on the flash preset with fast timings read
    // 2,000 times each while this thread holds the device's link and
    // channel locks: their reads go on their own lanes of the link,
    // the controller and the channels, and each writes the
    // device-wide ledgers less than once a read (a lock taken per
    // read would hold them here; a shared counter written per read
    // would count one a read).
    let dev = device(
        "nvme-tlc,size=256m,nocopy=1,completion=poll,read_ns=2000,\
         fw_cmd_ns=200,link_mbps=64000,channel_mbps=64000",
    );
    assert!(dev.batches_reads());
    let model = dev.device.read().unwrap();
    let held = model.hold_links();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        for w in 0..2 {
            let (dev, tx) = (dev.clone(), tx.clone());
            s.spawn(move || tx.send(read_a_while(dev, w)).unwrap());
        }
        for w in 0..2 {
            let got = rx.recv_timeout(Duration::from_secs(60));
            let (reads, visits) = got.unwrap_or_else(|_| panic!("worker {w} waits"));
            assert!(visits < reads, "{visits} ledger writes for {reads} reads");
        }
        drop(held);
    });
}

/// A worker's 2,000 random reads at QD 32: how many, and how many
/// times its lanes wrote the ledgers.
fn read_a_while(dev: Arc<SharedDevice>, seed: u64) -> (u64, u64) {
    let spec = JobSpec {
        iodepth: 32,
        ..JobSpec::default()
    };
    let mut e = EmuEngine::new(dev, &spec, seed).unwrap();
    let (mut free, mut out, mut reads, mut x) = ((0..32).collect::<Vec<u32>>(), vec![], 0, seed);
    while reads < 2_000 {
        for slot in free.drain(..) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            e.queue(req(slot, Ddir::Read, (x >> 48) * 4096)).unwrap();
        }
        out.clear();
        e.getevents(1, &mut out).unwrap();
        reads += out.len() as u64;
        free.extend(out.iter().map(|c| c.slot));
    }
    (reads, e.lanes.visits())
}
