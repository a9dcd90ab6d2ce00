//! `ssdready limits`: what only the binary shows — a target that is not
//! there refused in one line with exit code 2 and nothing printed, and the
//! JSON of the command's own process with the target's device in it.
//! (The readers are tested in `ssdready-probe`, the words in
//! `ssdready-diagnosis`.)

use crate::common;
use common::ssdready;

#[test]
fn a_target_that_is_not_there_is_refused_in_one_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&["limits", "/no/such/place"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("'/no/such/place'") && err.contains("allowed"),
        "{err}"
    );
}

#[test]
fn the_json_describes_the_commands_own_process_and_the_targets_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&["limits", "--json", env!("CARGO_MANIFEST_DIR")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["target"], env!("CARGO_MANIFEST_DIR"));
    let inv = &v["inventory"];
    let pid = inv["pid"].as_u64().unwrap();
    assert!(pid > 0 && pid != u64::from(std::process::id()));
    let online = inv["cpus"]["online"].as_array().unwrap();
    assert!(!online.is_empty());
    let usable = inv["cpus"]["usable"].as_f64().unwrap();
    assert!(usable > 0.0 && usable <= online.len() as f64);
    // This source tree is on a block device, or the note says it is not.
    match inv["devices"].as_array().unwrap().first() {
        Some(d) => {
            assert_eq!(d["role"], "target");
            assert!(
                d["source"].as_str().unwrap().starts_with("/sys/block/"),
                "{d}"
            );
        }
        None => assert!(
            v["note"].as_str().unwrap().contains("no block device"),
            "{v}"
        ),
    }
}
