//! Emulator device files: `emu presets --toml NAME` writes one, and
//! `emu:file=PATH` builds the same drive from it.

use serde_json::Value;
use std::process::{Command, Output};

fn ssdready(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .output()
        .expect("run ssdready")
}

/// A virtual-time run's read figures on `target`.
fn simulate(target: &str) -> Value {
    let f = format!("--filename={target}");
    let o = ssdready(&[
        "emu",
        "simulate",
        "--output-format=native",
        "--name=r",
        &f,
        "--rw=randread",
        "--bs=4k",
        "--iodepth=1",
        "--size=64m",
        "--runtime=1",
        "--time_based",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["jobs"][0]["read"].clone()
}

#[test]
fn a_presets_device_file_builds_the_same_drive() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    for name in ["x25e", "nvme-tlc"] {
        let o = ssdready(&["emu", "presets", "--toml", name]);
        assert!(o.status.success());
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(&format!("preset = \"{name}\"")), "{text}");
        let path = tmp.path().join(format!("{name}.toml"));
        std::fs::write(&path, &text).unwrap();
        let from_file = simulate(&format!("emu:file={},size=256m", path.display()));
        let preset = simulate(&format!("emu:{name},size=256m"));
        assert_eq!(from_file["ios"], preset["ios"], "{name}");
        assert_eq!(
            from_file["lat"]["mean_ns"], preset["lat"]["mean_ns"],
            "{name}"
        );
        // An edited file is a different drive: 100 µs more firmware time
        // per command (reads of unwritten pages skip the NAND).
        let fw = key_ns(&text, "fw_cmd_ns");
        let slow = text.replace(
            &format!("fw_cmd_ns = {fw}"),
            &format!("fw_cmd_ns = {}", fw + 100_000),
        );
        std::fs::write(&path, slow).unwrap();
        let edited = simulate(&format!("emu:file={},size=256m", path.display()));
        assert!(
            edited["lat"]["mean_ns"].as_f64() > preset["lat"]["mean_ns"].as_f64(),
            "{name}: {edited} vs {preset}"
        );
    }
}

fn key_ns(toml: &str, key: &str) -> u64 {
    toml.lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .and_then(|v| v.parse().ok())
        .expect("the key in the file")
}

#[test]
fn bad_device_files_exit_2_with_one_line_and_write_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("result.json");
    let bad = tmp.path().join("bad.toml");
    let missing = tmp.path().join("missing.toml");
    for (text, want) in [
        (
            Some("read_nss = 4\n"),
            "unknown emulator parameter 'read_nss'",
        ),
        (Some("planes = 0\n"), "'planes'"),
        (Some("size = \n"), "TOML parse error"),
        (None, "No such file"),
    ] {
        let path = match text {
            Some(t) => {
                std::fs::write(&bad, t).unwrap();
                &bad
            }
            None => &missing,
        };
        let f = format!("--filename=emu:file={}", path.display());
        let o = ssdready(&[
            "run",
            &format!("--output={}", out.display()),
            "--name=r",
            &f,
            "--rw=randread",
            "--runtime=1",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!out.exists(), "nothing written");
    }
    let o = ssdready(&["emu", "presets", "--toml", "x26e"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("allowed: x25e"));
}
