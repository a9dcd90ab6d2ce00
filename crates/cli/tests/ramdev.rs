//! `ssdready ramdev`: make a RAM-backed block device, use it, remove it.

use crate::common;
use common::*;

#[test]
fn ramdev_create_use_list_remove() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !is_root() {
        eprintln!("skipped: ramdev needs root");
        return;
    }
    let out = ssdready(&["ramdev", "create", "--kind=loop", "--size=64m"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(dev.starts_with("/dev/loop"), "{dev}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("leaves out"),
        "says what the path leaves out"
    );
    let list = String::from_utf8_lossy(&ssdready(&["ramdev", "list"]).stdout).to_string();
    assert!(list.contains(&dev), "{list}");
    let f = format!("--filename={dev}");
    let r = run_json(&[
        &f,
        "--rw=randwrite",
        "--ioengine=io_uring",
        "--direct=1",
        "--iodepth=4",
        "--size=8m",
    ]);
    assert_eq!(r["jobs"][0]["write"]["bytes"], 8 << 20);
    let out = ssdready(&["ramdev", "remove", &dev]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = String::from_utf8_lossy(&ssdready(&["ramdev", "list"]).stdout).to_string();
    assert!(!list.contains(&dev), "{list}");
    // Devices it did not make are refused.
    let out = ssdready(&["ramdev", "remove", "/dev/loop7"]);
    assert!(!out.status.success());
}
