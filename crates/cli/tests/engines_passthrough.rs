//! The passthrough engines : `ioengine=sg` (SCSI through
//! SG_IO) and `ioengine=io_uring_cmd` (NVMe through io_uring passthrough).
//! fio's own example job files for them parse; their options parse as fio
//! parses them and bad values are one line, exit code 2; at run time a
//! target that cannot take the commands — a regular file, a loop device,
//! a device that is not there — is refused in one line naming what is
//! missing, exit code 2, nothing written. (This machine has no SCSI or NVMe
//! device: the commands themselves are checked by the io crate's unit
//! tests against the SCSI and NVMe specifications.)

use crate::common;
use common::{ssdready, LoopDev};
use std::path::{Path, PathBuf};

/// fio's examples directory, when one is here (FIO_EXAMPLES, FIO_SRC, the
/// Debian package's, or the copy the bench script uses).
fn fio_examples() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(d) = std::env::var("FIO_EXAMPLES") {
        dirs.push(d.into());
    }
    if let Ok(d) = std::env::var("FIO_SRC") {
        dirs.push(Path::new(&d).join("examples"));
    }
    dirs.push("/usr/share/doc/fio/examples".into());
    dirs.push("/tmp/fioex/examples".into());
    dirs.into_iter()
        .find(|d| d.join("uring-cmd-ng.fio").is_file())
}

fn parse_only(args: &[&str]) -> std::process::Output {
    let mut a = vec!["run", "--parse-only"];
    a.extend_from_slice(args);
    ssdready(&a)
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One line on stderr, exit code 2, containing `says`.
fn refused(o: &std::process::Output, says: &str) {
    common::assert_refused(o, "the engine", &[says]);
}

#[test]
fn every_sg_and_io_uring_cmd_example_of_fio_parses() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(dir) = fio_examples() else {
        eprintln!("skipped: no fio examples directory here (set FIO_EXAMPLES)");
        return;
    };
    let mut tried = 0;
    for name in [
        "sg_verify.fio",
        "sg_verify-fail.fio",
        "sg_write_same_ndob.fio",
        "uring-cmd-ng.fio",
        "uring-cmd-zoned.fio",
        "uring-cmd-zoned-append.fio",
        "uring-cmd-pi-ext.fio",
        "uring-cmd-pi-sb.fio",
        "uring-cmd-trim-multi-range.fio",
        "uring-cmd-write-mode.fio",
        "uring-cmd-fdp.fio",
    ] {
        let f = dir.join(name);
        if !f.is_file() {
            eprintln!("{name}: not in this fio's examples");
            continue;
        }
        tried += 1;
        let o = parse_only(&[f.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
    assert!(
        tried >= 5,
        "only {tried} example files found in {}",
        dir.display()
    );
}

/// The engines' options, each with fio's values (written here, not copied
/// from fio's examples), parse; `ssdready options` lists them.
#[test]
fn the_engines_options_parse_with_fios_values() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for mode in [
        "write",
        "write_and_verify",
        "verify",
        "write_same",
        "same",
        "write_same_ndob",
        "write_stream",
        "verify_bytchk_00",
        "verify_bytchk_01",
        "verify_bytchk_11",
    ] {
        let m = format!("--sg_write_mode={mode}");
        let o = parse_only(&[
            "--name=s",
            "--filename=/dev/sdz",
            "--ioengine=sg",
            "--rw=write",
            "--size=1m",
            &m,
            "--readfua=1",
            "--writefua=1",
            "--hipri",
            "--stream_id=3",
        ]);
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
    }
    let o = parse_only(&[
        "--name=n",
        "--filename=/dev/ng9n1",
        "--ioengine=io_uring_cmd",
        "--cmd_type=nvme",
        "--rw=randwrite",
        "--size=1m",
        "--iodepth=32",
        "--fixedbufs",
        "--registerfiles",
        "--sqthread_poll=1",
        "--nonvectored=0",
        "--write_mode=write/50:zeroes/:uncor/",
        "--deac=1",
        "--pi_act=0",
        "--pi_chk=GUARD,APPTAG,REFTAG",
        "--apptag=0x0888",
        "--apptag_mask=0xFFFF",
        "--md_per_io_size=64",
        "--fdp=1",
        "--fdp_pli=0,1,4-6",
        "--fdp_pli_select=roundrobin",
        "--num_range=8",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed = String::from_utf8_lossy(&ssdready(&["options"]).stdout).into_owned();
    for opt in [
        "sg_write_mode",
        "cmd_type",
        "write_mode",
        "pi_chk",
        "num_range",
        "readfua",
    ] {
        assert!(listed.contains(opt), "ssdready options lacks {opt}");
    }
}

#[test]
fn bad_values_and_unaligned_sizes_are_one_line_at_parse() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let base = [
        "--name=j",
        "--filename=/dev/sdz",
        "--ioengine=sg",
        "--rw=write",
        "--size=1m",
    ];
    for (arg, says) in [
        ("--sg_write_mode=erase", "'erase' is not an sg write mode"),
        ("--bs=1000", "1000 is not a multiple of 512"),
        ("--offset=100", "100 is not a multiple of 512"),
    ] {
        let mut a = base.to_vec();
        a.push(arg);
        refused(&parse_only(&a), says);
    }
    let base = [
        "--name=j",
        "--filename=/dev/ng9n1",
        "--ioengine=io_uring_cmd",
        "--size=1m",
    ];
    for (arg, says) in [
        ("--write_mode=write/60:zeroes/60", "add to 120"),
        ("--pi_chk=GUARD,CRC", "'CRC' is not GUARD"),
        ("--cmd_type=scsi", "not nvme or bsg"),
        ("--num_range=300", "more than 256"),
        ("--apptag=0x10000", "more than 65535"),
    ] {
        let mut a = base.to_vec();
        a.push(arg);
        refused(&parse_only(&a), says);
    }
}

#[test]
fn a_regular_file_is_refused_naming_the_device_the_engine_needs_and_is_left_alone() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let fa = format!("--filename={}", f.display());
    for (engine, says) in [
        ("sg", "is a regular file: sg needs /dev/sgN or a SCSI disk's block device"),
        ("io_uring_cmd", "is a regular file: io_uring_cmd needs an NVMe namespace's generic character device (/dev/ngXnY)"),
    ] {
        let e = format!("--ioengine={engine}");
        let o = ssdready(&["run", "--name=j", &fa, &e, "--rw=write", "--size=1m", "--bs=4k"]);
        refused(&o, says);
    }
    assert!(std::fs::read(&f).unwrap() == data, "the file was changed");
    // What io_uring_cmd does not implement is named before any device is asked.
    for (arg, says) in [
        ("--fdp=1", "dataplacement=fdp"),
        ("--cmd_type=bsg", "cmd_type=bsg"),
        ("--pi_chk=GUARD", "protection information"),
        ("--zonemode=zbd", "zonemode=zbd with ioengine=io_uring_cmd"),
    ] {
        let o = ssdready(&[
            "run",
            "--name=j",
            &fa,
            "--ioengine=io_uring_cmd",
            "--rw=write",
            "--size=1m",
            arg,
        ]);
        refused(&o, says);
    }
}

#[test]
fn a_device_that_is_not_there_or_not_nvme_is_named() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let o = ssdready(&[
        "run",
        "--name=j",
        "--filename=/dev/sg-none",
        "--ioengine=sg",
        "--rw=read",
        "--size=1m",
    ]);
    refused(&o, "/dev/sg-none does not exist: sg needs /dev/sgN");
    let o = ssdready(&[
        "run",
        "--name=j",
        "--filename=/dev/null",
        "--ioengine=io_uring_cmd",
        "--rw=read",
        "--size=1m",
    ]);
    refused(&o, "/dev/null does not answer NVMe ioctls");
}

#[test]
fn a_loop_device_answers_neither_sg_io_nor_nvme_passthrough() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("passthru", 8) else {
        return;
    };
    let fa = format!("--filename={}", l.dev);
    for rw in ["read", "write"] {
        let r = format!("--rw={rw}");
        let o = ssdready(&["run", "--name=j", &fa, "--ioengine=sg", &r, "--size=1m"]);
        refused(
            &o,
            &format!("{} does not answer SG_IO (not a SCSI device)", l.dev),
        );
        let o = ssdready(&[
            "run",
            "--name=j",
            &fa,
            "--ioengine=io_uring_cmd",
            &r,
            "--size=1m",
        ]);
        refused(
            &o,
            &format!("{} is a block device, not a character device", l.dev),
        );
    }
}
