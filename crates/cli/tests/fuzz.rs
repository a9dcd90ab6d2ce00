//! A job-file and option fuzzer. It starts from the job files in
//! `tests/jobs/` and a line per option of the table, mutates them (lines
//! deleted, duplicated, swapped; values replaced with boundary values: 0,
//! -1, huge, 1e400, NaN, inf, empty, unicode, `%`, `:`, long strings,
//! random characters; broken section headers) and checks that
//!
//! * in process, parsing, building and validating the jobs, reading their
//!   emulator targets and planning their first I/Os never panics;
//! * through the binary with `--parse-only`, the exit code is 0 (with JSON
//!   on stdout) or 2 (with one line on stderr and nothing on stdout), never
//!   a panic's 101 or an abort.
//!
//! The seed is fixed, so a failure repeats; `SSDREADY_FUZZ_ITERS` scales
//! the number of inputs (default 10 000 in process, a 25th of that through
//! the binary: about a second in release mode) and `SSDREADY_FUZZ_SEED`
//! picks another seed.

use crate::common;

use ssdready_core::host::Host;
use ssdready_core::jobfile;
use ssdready_core::options::{self, build_jobs_on, Section};
use ssdready_core::spec::JobSpec;
use ssdready_workload::plan::{IoPlan, PlanConfig, Region};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// splitmix64: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

fn iterations() -> usize {
    std::env::var("SSDREADY_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

fn seed() -> u64 {
    std::env::var("SSDREADY_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_f022)
}

fn jobs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/jobs")
}

/// Values at and beyond every boundary an option or parser has.
const BOUNDARY: &[&str] = &[
    "0",
    "-1",
    "1",
    "-0",
    "+5",
    "4294967295",
    "4294967296",
    "4294967297",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "1e400",
    "1e-400",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "",
    " ",
    "%",
    ":",
    "::",
    "/",
    "-",
    ".",
    "..",
    "0x",
    "0X10",
    "0xffffffffffffffffffff",
    "1.5",
    "0.0001",
    "4k-",
    "-4k",
    "4k-1k",
    "0-0",
    "4095",
    "4096",
    "1-4095",
    "16e",
    "16p",
    "1.5t",
    "17179869184p",
    "999999999999d",
    "36500d",
    "1h",
    "1ns",
    "é",
    "日本語",
    "\u{202e}evil",
    "\u{0}",
    "\t",
    "a=b",
    "=",
    "${X}",
    "${",
    "$ncpus",
    "$mb_memory",
    "emu",
    "emu:",
    "emu:nope",
    "emu:x25e,size=0",
    "emu:x25e,size=16e",
    "emu:x25e,channels=4294967297",
    "emu:x25e,channels=0",
    "emu:x25e,op=nan",
    "emu:x25e,op=inf",
    "emu:x25e,op=1e300",
    "emu:x25e,link_mbps=-1",
    "emu:x25e,page_bytes=4294967296",
    "emu:x25e,pages_per_block=4294967295",
    "emu:null,size=1m",
    "emu:dram-ssd,gc=lru",
    "emu:x25e,,,=,",
    "4k/50:8k/",
    "4k/101",
    "4k/0:8k/0",
    "0/100",
    "zipf:1e308",
    "zipf:0",
    "zipf:nan",
    "pareto:1e-300",
    "pareto:0.999999999",
    "normal:1e-300",
    "normal:100",
    "random",
    "randrw",
    "trim",
    "io_uring",
    "libaio",
    "null",
    "psync",
    "split",
    "1000",
    "/dev/null",
    "/no/such/dir/f",
    "/tmp/ssdready-fuzz-never-opened",
    "a:b:c",
];

/// Values an option may well accept, so that mutated jobs get past the
/// first check often enough to reach the later ones.
const PLAUSIBLE: &[&str] = &[
    "1",
    "2",
    "8",
    "32",
    "50",
    "100",
    "4k",
    "64k",
    "1m",
    "64m",
    "1g",
    "10s",
    "1ms",
    "0-1",
    "0x3",
    "read",
    "randread",
    "randwrite",
    "randrw",
    "io_uring",
    "libaio",
    "null",
    "psync",
    "zipf:1.2",
    "pareto:0.5",
    "normal:10",
    "4k/50:64k/50",
    "4k-64k",
    "shared",
    "split",
    "1000",
    "emu:x25e,size=64m",
    "emu:nvme-tlc",
    "emu:null,size=64m",
    "emu:dram-ssd,size=64m",
    "50:99:99.9",
];

/// Numbers at the edges of the integer and float types.
const NUMERIC: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "65535",
    "65536",
    "65537",
    "1048577",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1e300",
    "1e-300",
    "nan",
    "inf",
    "0.5",
    "1p",
    "16p",
    "1t",
    "4095",
    "4096",
    "100",
    "101",
];

/// An emulator key=value, for `emu:` targets.
fn emu_pair(rng: &mut Rng) -> String {
    let k = rng.pick(&[
        "size",
        "op",
        "channels",
        "dies",
        "pages_per_block",
        "page_bytes",
        "read_ns",
        "program",
        "erase",
        "channel_mbps",
        "link_mbps",
        "fw_cmd",
        "fw_units",
        "cmd_slots",
        "write_buffer",
        "dram",
        "gc",
        "gc_bg_free",
        "gc_fg_free",
        "completion",
        "coalesce_n",
        "coalesce_us",
        "nocopy",
        "host_ns",
        "cmd_bytes",
        "extent_bytes",
        "extent_ns",
        "cpl_ns",
        "iface_depth",
        "queues",
        "host_cmd_ns",
        "irq_ns",
        "wake_ns",
        "colour",
    ]);
    let v = match rng.below(3) {
        0 => rng.pick(PLAUSIBLE).to_string(),
        1 => rng.pick(NUMERIC).to_string(),
        _ => rng.pick(BOUNDARY).to_string(),
    };
    format!("{k}={v}")
}

/// A random value: a boundary value, a plausible one, a long run of one
/// character, random characters (any scalar value but a newline, which ends
/// a line), or an emulator target with odd parameters.
fn value(rng: &mut Rng) -> String {
    match rng.below(16) {
        10..=12 => rng.pick(PLAUSIBLE).to_string(),
        14 | 15 => rng.pick(NUMERIC).to_string(),
        13 => {
            let pairs: Vec<String> = (0..1 + rng.below(4)).map(|_| emu_pair(rng)).collect();
            format!(
                "emu:{},{}",
                rng.pick(&["x25e", "nvme-tlc", "null", ""]),
                pairs.join(",")
            )
        }
        0 => rng
            .pick(&["9", "a", ":", "%", "-"])
            .repeat(1 + rng.below(5000)),
        1 => (0..1 + rng.below(40))
            .map(|_| {
                let c = char::from_u32((rng.next() % 0x11_0000) as u32).unwrap_or('?');
                if c == '\n' {
                    ' '
                } else {
                    c
                }
            })
            .collect(),
        2 => format!("{}{}", rng.pick(BOUNDARY), rng.pick(BOUNDARY)),
        _ => rng.pick(BOUNDARY).to_string(),
    }
}

/// An option name: mostly from the table, sometimes ignored, unknown or odd.
fn key(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => rng
            .pick(&[
                "thread",
                "verify",
                "serialize_overlap",
                "iodepht",
                "",
                "=",
                "[",
                "include",
            ])
            .to_string(),
        1 => value(rng),
        _ => {
            let o = *rng.pick(&options::all());
            match rng.below(4) {
                0 if !o.aliases.is_empty() => rng.pick(o.aliases).to_string(),
                _ => o.name.to_string(),
            }
        }
    }
}

/// The starting inputs: the test job files and one job per option.
fn corpus() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(jobs_dir())
        .expect("tests/jobs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .map(|p| std::fs::read_to_string(p).expect("job file"))
        .collect();
    v.sort();
    // One job per option, with the first plausible value it accepts, so
    // that mutations start from valid jobs using every option.
    let host = Host::default();
    let globals = [
        "ioengine=null\nsize=1m",
        "ioengine=null\nsize=1m\nruntime=1",
        "ioengine=io_uring\ndirect=1\nsize=1m\nfilename=/tmp/ssdready-fuzz-never-opened",
    ];
    for o in options::all() {
        let job = |g: &str, value: &str| format!("[global]\n{g}\n[{0}]\n{0}={value}\n", o.name);
        let valid = globals
            .iter()
            .flat_map(|g| PLAUSIBLE.iter().map(move |p| job(g, p)))
            .find(|t| exercise(t, &host));
        v.push(valid.unwrap_or_else(|| job(globals[0], "1")));
    }
    v.push("[j]\nfilename=emu:x25e,size=128m\nsize=1m\n".into());
    v
}

/// One to four mutations of `text`. Two inputs in five are mild (values
/// only from [`PLAUSIBLE`]), so that many reach the checks that need a
/// whole valid job.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mild = rng.below(5) < 2;
    let value = move |rng: &mut Rng| {
        if mild {
            rng.pick(PLAUSIBLE).to_string()
        } else {
            value(rng)
        }
    };
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..1 + rng.below(4) {
        let n = lines.len();
        match rng.below(10) {
            0 if n > 0 => {
                lines.remove(rng.below(n));
            }
            1 if n > 0 => {
                let l = lines[rng.below(n)].clone();
                lines.insert(rng.below(n + 1), l);
            }
            2 if n > 1 => {
                let (a, b) = (rng.below(n), rng.below(n));
                lines.swap(a, b);
            }
            3 | 4 if n > 0 => {
                let i = rng.below(n);
                let k = lines[i].split('=').next().unwrap_or("").to_string();
                lines[i] = format!("{k}={}", value(rng));
            }
            5 | 6 => {
                let l = format!("{}={}", key(rng), value(rng));
                lines.insert(rng.below(n + 1), l);
            }
            7 => {
                let h = rng
                    .pick(&[
                        "[global]",
                        "[x]",
                        "[x",
                        "[]",
                        "[ ]",
                        "x]",
                        "include common.inc",
                        "include nope.fio",
                        "include common.inc x",
                    ])
                    .to_string();
                lines.insert(rng.below(n + 1), h);
            }
            8 => {
                let k = key(rng);
                lines.insert(rng.below(n + 1), k);
            }
            _ => {
                let mut s = lines.join("\n");
                let cut = rng.below(s.len() + 1);
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| s.is_char_boundary(c))
                    .unwrap_or(0);
                s.truncate(cut);
                lines = s.lines().map(String::from).collect();
            }
        }
    }
    lines.join("\n") + "\n"
}

fn env(name: &str) -> Option<String> {
    match name {
        "pagesize" => Some("4096".into()),
        "ncpus" => Some("2".into()),
        "mb_memory" => Some("1024".into()),
        "X" => Some("4k".into()),
        _ => None,
    }
}

/// Parse, build and validate `text`; read its emulator targets; plan a few
/// I/Os of each job. Errors are fine; only a panic is a failure.
fn exercise(text: &str, host: &Host) -> bool {
    let common = std::fs::read_to_string(jobs_dir().join("common.inc")).unwrap_or_default();
    let mut include = |f: &str, _: &str| -> Result<jobfile::Included, String> {
        match f {
            "common.inc" => Ok(jobfile::Included {
                label: f.to_string(),
                text: common.clone(),
                path: f.to_string(),
            }),
            _ => Err("no such file".into()),
        }
    };
    let mut sections: Vec<Section> = Vec::new();
    if jobfile::parse_into(text, None, &mut include, &env, &mut sections).is_err() {
        return false;
    }
    let Ok(specs) = build_jobs_on(&sections, host) else {
        return false;
    };
    for s in &specs {
        plan_some(s);
    }
    true
}

fn plan_some(s: &JobSpec) {
    let capacity = if s.on_emulator() {
        let name = s.filename.first().map(String::as_str).unwrap_or("emu:");
        let body = name
            .strip_prefix("emu:")
            .or(name.strip_prefix("emu"))
            .unwrap_or("");
        match ssdready_emu::config::Params::parse(body) {
            Ok(p) => p.logical_pages() * u64::from(p.page_bytes),
            Err(_) => return,
        }
    } else {
        1 << 30
    };
    let Ok(r) = ssdready_run::virtual_time::region(s, capacity) else {
        return;
    };
    let r = Region {
        len: r.len.min(1 << 40),
        ..r
    };
    if r.len < u64::from(s.bs.max()) {
        return;
    }
    let mut plan = IoPlan::new(&PlanConfig::new(s), &[r], 0);
    for _ in 0..64 {
        if plan.next_io().is_none() {
            break;
        }
    }
}

/// The panic message of a caught panic.
fn message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "?".into())
}

#[test]
fn mutated_job_files_never_panic_in_the_parse_and_validate_path() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let corpus = corpus();
    let host = Host {
        cpus: Some(vec![0, 1]),
        aio_requests: Some(65536),
    };
    let mut rng = Rng(seed());
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    let n = iterations();
    let mut accepted = 0;
    for _ in 0..n {
        let base = &corpus[rng.below(corpus.len())];
        let text = mutate(base, &mut rng);
        match catch_unwind(AssertUnwindSafe(|| exercise(&text, &host))) {
            Ok(ok) => accepted += usize::from(ok),
            Err(p) => failures.push(format!("{}\n--- input ---\n{text}", message(p))),
        }
    }
    let emu_failures: Vec<String> = (0..n / 4)
        .filter_map(|_| {
            let pairs: Vec<String> = (0..1 + rng.below(5)).map(|_| emu_pair(&mut rng)).collect();
            let preset = rng.pick(&["x25e", "nvme-tlc", "null", "dram-ssd", "iodrive", ""]);
            let spec = format!("{preset},{}", pairs.join(","));
            catch_unwind(|| {
                let _ = ssdready_emu::config::Params::parse(&spec);
            })
            .err()
            .map(|p| format!("{}\n--- emulator target ---\nemu:{spec}", message(p)))
        })
        .collect();
    std::panic::set_hook(quiet);
    eprintln!(
        "{n} mutated job files, {accepted} accepted, {} panicked",
        failures.len()
    );
    failures.extend(emu_failures);
    assert!(
        failures.is_empty(),
        "{} of {n} inputs panicked; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn the_binary_answers_mutated_input_with_exit_0_or_one_line_and_exit_2() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(jobs_dir().join("common.inc"), dir.path().join("common.inc")).unwrap();
    let corpus = corpus();
    let mut rng = Rng(seed() ^ 0xb1);
    let n = (iterations() / 25).max(50);
    let mut codes = [0usize; 3];
    for i in 0..n {
        let base = &corpus[rng.below(corpus.len())];
        let text = mutate(base, &mut rng);
        let file = dir.path().join(format!("f{i}.fio"));
        std::fs::write(&file, &text).unwrap();
        let mut args: Vec<String> = vec![
            "run".into(),
            "--parse-only".into(),
            file.display().to_string(),
        ];
        for _ in 0..rng.below(3) {
            args.push(format!("--{}={}", key(&mut rng), value(&mut rng)).replace('\0', ""));
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::ssdready(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        let shown = || format!("args {args:?}\n--- job file ---\n{text}--- stderr ---\n{err}");
        codes[out.status.code().unwrap_or(1).clamp(0, 2) as usize] += 1;
        match out.status.code() {
            Some(0) => {
                let v: Result<serde_json::Value, _> = serde_json::from_slice(&out.stdout);
                assert!(v.is_ok(), "exit 0 without JSON: {}", shown());
            }
            Some(2) => {
                assert!(
                    out.stdout.is_empty(),
                    "exit 2 printed a result: {}",
                    shown()
                );
                assert_eq!(
                    err.trim_end().lines().count(),
                    1,
                    "not one line: {}",
                    shown()
                );
                assert!(err.starts_with("ssdready: "), "{}", shown());
            }
            other => panic!("exit {other:?}: {}", shown()),
        }
    }
    eprintln!("{n} runs: {} exit 0, {} exit 2", codes[0], codes[2]);
}
