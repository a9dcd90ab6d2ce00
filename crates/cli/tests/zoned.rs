//! Zoned drives: the emulator's zoned mode (`emu:…,zoned=1`) and fio's
//! `zonemode=zbd` on it and on regular files. fio cannot reach the
//! emulator, so runs on it are held against fio's rules worked by hand;
//! on a regular file (fio's emulated zones) fio 3.33 runs side by side
//! where it is installed.

use crate::common;
use common::fio::*;
use common::ssdready;
use serde_json::Value;

/// A zoned x25e: 16 zones of 8 MiB.
const ZONED: &str = "emu:x25e,size=128m,zoned=1,zone_size=8m";

fn native(args: &[&str]) -> Value {
    let d = tempfile::tempdir().unwrap();
    let (v, out) = native_in(d.path(), args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    v
}

fn write_bytes_ios(v: &Value) -> (u64, u64) {
    let w = &v["jobs"][0]["write"];
    (w["bytes"].as_u64().unwrap(), w["ios"].as_u64().unwrap())
}

/// fio's rule: a sequential zbd write job covers size=4z zone by zone,
/// writes each zone's capacity (6 MiB) and skips its rest (2 MiB, counted
/// toward the size as fio's io_skip_bytes): 4 × 6 MiB = 24 MiB in 384
/// writes of 64 KiB, all at write pointers.
#[test]
fn sequential_zbd_writes_move_the_bytes_fios_rules_give() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let target = format!("--filename={ZONED},zone_capacity=6m");
    let v = native(&[
        "--name=z",
        &target,
        "--zonemode=zbd",
        "--rw=write",
        "--bs=64k",
        "--size=4z",
    ]);
    assert_eq!(write_bytes_ios(&v), (24 << 20, 384));
    let z = &v["emulator"]["zones"];
    assert_eq!(z["writes_refused"], 0, "{z}");
    assert_eq!(z["zones"], 16);
    // Zones 0-3 full: none left open.
    assert_eq!(z["open"], 0, "{z}");
    assert_eq!(
        v["emulator"]["write_amplification"], 1.0,
        "no GC on a zoned drive"
    );
}

/// Random writes from 4 workers under max_open_zones=3 go to write
/// pointers only (the drive refuses none), never keep more than 3 zones
/// open, and reset full zones to go on: a time-based run writes past the
/// 4 zones' 32 MiB.
#[test]
fn random_zbd_writes_never_break_a_write_pointer() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let v = native(&[
        "--name=z",
        &format!("--filename={ZONED},max_open_zones=3"),
        "--zonemode=zbd",
        "--rw=randwrite",
        "--bs=64k",
        "--size=4z",
        "--numjobs=4",
        "--time_based",
        "--runtime=1",
    ]);
    let z = &v["emulator"]["zones"];
    assert_eq!(z["writes_refused"], 0, "{z}");
    assert!(z["open"].as_u64().unwrap() <= 3, "{z}");
    assert_eq!(
        z["implicit_closes"], 0,
        "fio keeps to the limit itself: {z}"
    );
    let (bytes, _) = write_bytes_ios(&v);
    if bytes > 32 << 20 {
        assert!(z["resets"].as_u64().unwrap() > 0, "{z}");
        assert!(v["jobs"][0]["zone_resets"].as_u64().unwrap() > 0);
    }
}

/// Without zonemode=zbd, random writes on a zoned drive miss its write
/// pointers: the drive fails them with EIO (5), as Linux reports an
/// unaligned write to a zoned device.
#[test]
fn writes_off_the_write_pointer_fail_with_eio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let (v, out) = ssdready_in(
        d.path(),
        &[
            "--name=z",
            &format!("--filename={ZONED}"),
            "--rw=randwrite",
            "--bs=4k",
            "--size=8m",
        ],
    );
    assert_eq!(
        v["jobs"][0]["error"],
        5,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// fio's limits and zone sizes: a max_open_zones above the drive's is
/// refused with fio's message, a zonesize that is not the drive's too,
/// and emulated zones need a zonesize; each one line, exit 2.
#[test]
fn zone_limits_and_sizes_are_checked_as_fio_does() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("f");
    std::fs::write(&file, vec![0u8; 4 << 20]).unwrap();
    let fname = format!("--filename={}", file.display());
    let limited = format!("--filename={ZONED},max_open_zones=2");
    let cases: [(&[&str], &str); 3] = [
        (
            &[&limited, "--max_open_zones=4"],
            "Specified --max_open_zones (4) is larger than max (2)",
        ),
        (
            &[ZONED_ARG, "--zonesize=4m"],
            "does not match disk zone size",
        ),
        (
            &[&fname, "--direct=1"],
            "Specifying the zone size is mandatory",
        ),
    ];
    for (extra, needle) in cases {
        let mut a = vec![
            "run",
            "--name=z",
            "--zonemode=zbd",
            "--rw=write",
            "--size=1m",
        ];
        a.extend_from_slice(extra);
        let out = ssdready(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(needle) && err.contains("job 'z'"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

const ZONED_ARG: &str = "--filename=emu:x25e,size=128m,zoned=1,zone_size=8m";

/// A read-only zbd job on a fresh drive has nothing below any write
/// pointer to read and ends at once, as fio's; after a fill it reads only
/// written data.
#[test]
fn zbd_reads_stay_below_write_pointers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let jf = d.path().join("r.fio");
    std::fs::write(
        &jf,
        format!(
            "[global]\nfilename={ZONED}\nzonemode=zbd\nbs=64k\n\
             [empty]\nrw=read\nsize=2z\n\
             [fill]\nstonewall\nrw=write\nsize=12m\n\
             [read]\nstonewall\nrw=read\nsize=2z\n"
        ),
    )
    .unwrap();
    let (v, out) = native_in(d.path(), &[jf.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = |i: usize| v["jobs"][i]["read"]["bytes"].as_u64().unwrap_or(0);
    assert_eq!(bytes(0), 0, "nothing written, nothing read");
    assert_eq!(bytes(2), 12 << 20, "the 12 MiB written, no more");
    assert_eq!(v["emulator"]["zones"]["reads_refused"], 0);
}

/// zonemode=zbd on a regular file: fio's emulated zones (1 MiB, 768 KiB
/// writable). A sequential job writes 3 MiB of its 4 in 48 writes; a
/// random one its 4 MiB in 64 writes, resetting 4 full zones (fio 3.33:
/// the same, "4 zone resets").
#[test]
fn zbd_on_a_regular_file_matches_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let run = |tool: &Runner, rw: &str| -> (u64, u64) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("zf"), vec![0u8; 4 << 20]).unwrap();
        let rw = format!("--rw={rw}");
        let (v, out) = tool(
            d.path(),
            &[
                "--name=z",
                "--filename=zf",
                "--size=4m",
                "--zonemode=zbd",
                "--zonesize=1m",
                "--zonecapacity=768k",
                &rw,
                "--bs=64k",
                "--direct=1",
            ],
        );
        let w = &v["jobs"][0]["write"];
        assert_eq!(
            v["jobs"][0]["error"],
            0,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            w["io_bytes"].as_u64().unwrap(),
            w["total_ios"].as_u64().unwrap(),
        )
    };
    let ours = (run(&ssdready_in, "write"), run(&ssdready_in, "randwrite"));
    assert_eq!(ours, ((3 << 20, 48), (4 << 20, 64)));
    if have_fio() {
        assert_eq!((run(&fio_in, "write"), run(&fio_in, "randwrite")), ours);
    } else {
        eprintln!("fio not installed: checked against fio's rules only");
    }
}

type Runner = dyn Fn(&std::path::Path, &[&str]) -> (Value, std::process::Output);

/// The options of fio's four zbd example job files (examples/zbd-*.fio),
/// for a zoned block device, and the same jobs with the device replaced by
/// an emulated zoned drive and scaled down 64× (256 MiB zones to 4 MiB).
fn fio_zbd_examples(target: &str, scaled: bool) -> Vec<(&'static str, String)> {
    let s = |big: &'static str, small: &'static str| if scaled { small } else { big };
    let run = if scaled { "1" } else { "30" };
    // The emulator brings its own engine.
    let eng = |e: &str| {
        if scaled {
            String::new()
        } else {
            format!("ioengine={e}\n")
        }
    };
    vec![
        (
            "zbd-rand-write-trim-gc",
            format!(
                "[global]\ngroup_reporting\nzonemode=zbd\nzonesize={}\ndirect=1\ntime_based\nruntime={run}\n\
                 filename={target}\noffset=524z\n\
                 [warmup]\nrw=randwrite\nbs={}\nsize=128z\n{}runtime={run}\n\
                 [wjob]\nwait_for=warmup\nrw=randwrite\nbs={}\nsize=128z\n{}flow=128\n\
                 [trimjob]\nwait_for=warmup\nrw=randtrim\nbs={}\nsize=128z\n{}flow=1\n",
                s("256M", "4M"),
                s("2M", "32k"),
                eng("libaio"),
                s("2M", "32k"),
                eng("libaio"),
                s("256M", "4M"),
                eng("psync")
            ),
        ),
        (
            "zbd-rand-write-zone-reset-gc",
            format!(
                "[global]\nname=zbd-rand-write-gc\ngroup_reporting\nrw=randwrite\nzonemode=zbd\nzonesize={}\n\
                 bs={}\ndirect=1\ntime_based\nruntime={run}\n\
                 [dev1]\nfilename={target}\nsize=8z\noffset=524z\nzone_reset_threshold=0.7\nzone_reset_frequency=0.125\n{}",
                s("256M", "4M"),
                s("32M", "512k"),
                eng("psync")
            ),
        ),
        (
            "zbd-rand-write",
            format!(
                "[global]\nname=zbd-rand-write\ngroup_reporting\nrw=randwrite\nzonemode=zbd\nzonesize={}\n\
                 max_open_zones=32\nbs={}\ndirect=1\nnumjobs=16\ntime_based\nruntime={run}\n[dev1]\nfilename={target}\n{}",
                s("256M", "4M"),
                s("512K", "8k"),
                eng("psync")
            ),
        ),
        (
            "zbd-seq-read",
            format!(
                "[global]\nname=zbd-seq-read\nrw=read\nbs={}\ndirect=1\nnumjobs=1\nzonemode=zbd\nzonesize={}\n\
                 read_beyond_wp=0\n[dev1]\nfilename={target}\noffset={}\nsize={}\n{}iodepth=16\n",
                s("256K", "4k"),
                s("256M", "4M"),
                s("140660178944", "2197815296"),
                s("10G", "160M"),
                eng("libaio")
            ),
        ),
    ]
}

#[test]
fn fios_zbd_examples_parse_and_run_on_an_emulated_zoned_drive() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for (name, text) in fio_zbd_examples("/dev/sdb", false) {
        let f = d.path().join(format!("{name}.fio"));
        std::fs::write(&f, text).unwrap();
        let out = ssdready(&["run", "--parse-only", f.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // 704 zones of 4 MiB: room for zones 524..652.
    let drive = "emu:x25e,size=2816m,nocopy=1,zoned=1,zone_size=4m";
    for (name, text) in fio_zbd_examples(drive, true) {
        let f = d.path().join(format!("{name}-emu.fio"));
        std::fs::write(&f, text).unwrap();
        let (v, out) = native_in(d.path(), &[f.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let z = &v["emulator"]["zones"];
        assert_eq!(z["writes_refused"], 0, "{name}: {z}");
        let writes: u64 = v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["write"]["ios"].as_u64().unwrap_or(0))
            .sum();
        match name {
            // Nothing written on a fresh drive: nothing to read (as fio).
            "zbd-seq-read" => assert_eq!(writes, 0),
            _ => assert!(writes > 0, "{name}"),
        }
        if name != "zbd-seq-read" {
            assert!(z["open"].as_u64().unwrap() <= 128, "{name}: {z}");
        }
    }
}
