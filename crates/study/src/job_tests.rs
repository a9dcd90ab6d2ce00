//! The job as the study's point: refusals, the run length, the variants
//! (one thing changed each), the figures per job and together, and a
//! rate-limited job's rates, from recorded figures.

use super::*;
use ssdready_core::result::{DirResult, JobResult, RunResult};
use ssdready_core::spec::JobSpec;

fn opt(k: &str, v: &str) -> RawOption {
    RawOption {
        key: k.into(),
        value: Some(v.into()),
        at: Some("line 3".into()),
    }
}

fn section(name: &str, global: bool, opts: &[(&str, &str)]) -> Section {
    Section {
        name: name.into(),
        global,
        options: opts.iter().map(|(k, v)| opt(k, v)).collect(),
    }
}

/// A database's profile: 8 KiB random reads and writes 70/30, four jobs
/// at QD 16, 30 s.
fn oltp() -> Vec<Section> {
    vec![
        section(
            "global",
            true,
            &[
                ("ioengine", "libaio"),
                ("direct", "1"),
                ("bs", "8k"),
                ("iodepth", "16"),
                ("runtime", "30"),
                ("time_based", "1"),
            ],
        ),
        section(
            "oltp",
            false,
            &[("rw", "randrw"), ("rwmixread", "70"), ("numjobs", "4")],
        ),
    ]
}

#[test]
fn a_job_that_runs_commands_around_it_or_has_no_job_is_refused() {
    let mut s = oltp();
    s[1].options.push(opt("exec_prerun", "sync"));
    let e = check(&s, "db.fio").unwrap_err();
    assert!(
        e.to_string().starts_with("option 'exec_prerun' (line 3)"),
        "{e}"
    );
    let e = check(&s[..1], "db.fio").unwrap_err();
    assert!(e.to_string().contains("defines no job"), "{e}");
    assert!(check(&oltp(), "db.fio").is_ok());
}

#[test]
fn the_target_replaces_the_filename_and_a_long_job_is_cut_and_said() {
    let (s, note) = prepared(&oltp(), Some("/dev/loop3"), 10.0);
    assert_eq!(spec(&s, 1).filename, ["/dev/loop3"]);
    assert_eq!(spec(&s, 1).runtime_ns, Some(10_000_000_000));
    let note = note.expect("the cut is said");
    assert!(
        note.contains("at most 10 s") && note.contains("[oltp] 30 s"),
        "{note}"
    );
    // Phases in turn share the run, and a ramp counts in its share.
    let two = [
        section("fill", false, &[("rw", "write"), ("runtime", "30")]),
        section(
            "read",
            false,
            &[("stonewall", "1"), ("ramp_time", "2"), ("runtime", "30")],
        ),
    ];
    let (s, note) = prepared(&two, None, 10.0);
    assert_eq!(spec(&s, 0).runtime_ns, Some(5_000_000_000));
    assert_eq!(spec(&s, 1).runtime_ns, Some(3_000_000_000));
    let note = note.expect("the cut is said");
    assert!(
        note.contains("2 phases") && note.contains("[read] 30 s → 3 s"),
        "{note}"
    );
    assert_eq!(run_wall_s(&s, 10.0), 10.0);
    // A ramp longer than half a phase's share is cut to half of it.
    let (s, note) = prepared(&two, None, 3.0);
    assert_eq!(spec(&s, 1).ramp_time_ns, 750_000_000);
    assert!(note.unwrap().contains("[read] ramp_time 2.0 s → 0.8 s"));
    assert_eq!(run_wall_s(&s, 3.0), 1.0 + 1.75);
    // A job that fits keeps its own length, and nothing is said.
    let (s, note) = prepared(&oltp(), None, 60.0);
    assert_eq!(spec(&s, 1).runtime_ns, Some(30_000_000_000));
    assert_eq!(note, None);
    assert!(spec(&s, 1).filename.is_empty());
}

#[test]
fn a_job_on_a_synchronous_engine_gets_no_deeper_queue_to_try() {
    for (engine, deeper) in [
        ("psync", false),
        ("sync", false),
        ("pvsync2", false),
        ("libaio", true),
    ] {
        let sections = [section(
            "j",
            false,
            &[("ioengine", engine), ("rw", "randread")],
        )];
        let names: Vec<String> = variants(&sections).into_iter().map(|v| v.what).collect();
        assert_eq!(
            names.iter().any(|n| n.starts_with("iodepth")),
            deeper,
            "{engine}: {names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("ioengine")),
            "{engine}: {names:?}"
        );
    }
}

#[test]
fn jobs_of_different_depths_are_each_scaled_and_their_best_file_keeps_each_ones() {
    // fio's examples/aio-read.fio: four jobs at QD 4, 32, 8 and 16.
    let mut file = vec![section(
        "global",
        true,
        &[("ioengine", "libaio"), ("rw", "randread")],
    )];
    for (name, qd) in [
        ("file1", "4"),
        ("file2", "32"),
        ("file3", "8"),
        ("file4", "16"),
    ] {
        file.push(section(name, false, &[("iodepth", qd)]));
    }
    let vs = variants(&file);
    let twice = vs
        .iter()
        .find(|v| v.what.starts_with("iodepth ×2"))
        .unwrap();
    assert_eq!(twice.what, "iodepth ×2 (4, 32, 8, 16 → 8, 64, 16, 32)");
    assert_eq!(twice.option, "iodepth=×2");
    assert!(
        twice
            .asks
            .contains("keeps 8, 64, 16, 32 (one value per job) I/Os"),
        "{}",
        twice.asks
    );
    let depths = |s: &[Section]| -> Vec<u32> { (1..s.len()).map(|i| spec(s, i).iodepth).collect() };
    assert_eq!(depths(&twice.sections), [8, 64, 16, 32]);
    // The best configuration applies the factor to each job, as measured.
    let best =
        ssdready_diagnosis::limit::job::best::apply(&file, std::slice::from_ref(&twice.option));
    assert_eq!(depths(&best), [8, 64, 16, 32]);
    let half = vs
        .iter()
        .find(|v| v.what.starts_with("iodepth ×½"))
        .unwrap();
    assert_eq!(depths(&half.sections), [2, 16, 4, 8]);
    // One numjobs for all: its value, as before.
    let jobs = vs.iter().find(|v| v.what.starts_with("numjobs")).unwrap();
    assert_eq!(
        (jobs.what.as_str(), jobs.option.as_str()),
        ("numjobs ×2 (1 → 2)", "numjobs=2")
    );
}

#[test]
fn each_variant_changes_one_thing_and_keeps_the_rest_as_written() {
    let base = oltp();
    let vs = variants(&base);
    let names: Vec<&str> = vs.iter().map(|v| v.what.as_str()).collect();
    for want in [
        "iodepth ×½ (16 → 8)",
        "iodepth ×2 (16 → 32)",
        "iodepth ×4 (16 → 64)",
        "numjobs ×2 (4 → 8)",
        "ioengine libaio → io_uring",
        "ioengine libaio → psync",
        "bs ×2 (8k → 16k)",
    ] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    // What fio runs of each option, as core resolves it.
    let fields = |s: &JobSpec| {
        [
            ("iodepth", s.iodepth.to_string()),
            ("numjobs", s.numjobs.to_string()),
            ("ioengine", engine_named(s)),
            ("bs", format!("{:?}", s.bs)),
            ("rw", s.rw.name().to_string()),
            ("rwmixread", s.rwmixread.to_string()),
            ("direct", s.direct.to_string()),
            ("runtime", format!("{:?}", s.runtime_ns)),
        ]
    };
    let was = fields(&spec(&base, 1));
    for v in &vs {
        let now = fields(&spec(&v.sections, 1));
        let changed: Vec<&str> = was
            .iter()
            .zip(&now)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.0)
            .collect();
        assert_eq!(changed.len(), 1, "{}: {changed:?}", v.what);
        assert!(
            v.option.starts_with(changed[0]),
            "{} {}",
            v.option,
            changed[0]
        );
    }
    // Mixed block sizes have no one size to double.
    let mut mixed = oltp();
    mixed[0].options.push(opt("bssplit", "4k/50:64k/50"));
    assert!(variants(&mixed).iter().all(|v| !v.what.starts_with("bs")));
}

fn dir(iops: f64, mean_us: f64, p99_us: u64) -> DirResult {
    DirResult {
        ios: 1000,
        iops,
        bw_bytes_per_s: iops * 8192.0,
        clat: ssdready_core::hist::LatSummary {
            n: 1000,
            mean_ns: mean_us * 1e3,
            percentiles: vec![(99.0, p99_us * 1000), (99.9, p99_us * 2000)],
            ..Default::default()
        },
        ..Default::default()
    }
}

fn result(jobs: &[(f64, f64)]) -> RunResult {
    RunResult {
        jobs: jobs
            .iter()
            .enumerate()
            .map(|(i, (r, w))| JobResult {
                name: format!("j{i}"),
                read: Some(dir(*r, 100.0 * (i + 1) as f64, 300)),
                write: Some(dir(*w, 50.0, 900)),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn the_figures_are_per_job_and_together() {
    let f = RunFigures::of(&result(&[(7000.0, 3000.0), (1000.0, 0.0)]));
    assert_eq!(f.jobs.len(), 2);
    let r = f.together.read.as_ref().unwrap();
    assert_eq!(r.iops, 8000.0);
    // Weighted by the I/Os: (7000 × 100 + 1000 × 200) / 8000 µs.
    assert!((r.lat_mean_ns - 112_500.0).abs() < 1.0, "{}", r.lat_mean_ns);
    assert_eq!(r.lat_p99_ns, Some(300_000));
    assert_eq!(r.lat_p999_ns, Some(600_000));
    assert_eq!(f.iops(), 11000.0);
    assert!(f.split.is_empty(), "no decomposition, no split");
    // A run that split its latency along the path (root, a block device).
    let mut r = result(&[(1000.0, 0.0)]);
    r.phases.push(ssdready_core::result::PhaseResult {
        decomposition: Some(ssdready_core::result::Decomposition {
            parts: vec![ssdready_core::result::PartShare {
                part: "driver and device".into(),
                mean_ns: 80_000.0,
                share_pct: 80.0,
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    let f = RunFigures::of(&r);
    assert_eq!(f.split.len(), 1);
    assert_eq!(f.split[0].share_pct, 80.0);
    assert_eq!(f.split[0].part, "driver and device");
    // Two phases (a stonewalled file): each part names its phase's jobs.
    let mut two = r.clone();
    two.jobs.push(two.jobs[0].clone());
    two.jobs[1].name = "read".into();
    two.phases[0].jobs = vec![0];
    let mut second = two.phases[0].clone();
    second.jobs = vec![1];
    two.phases.push(second);
    let f = RunFigures::of(&two);
    let parts: Vec<&str> = f.split.iter().map(|p| p.part.as_str()).collect();
    let first = format!("[{}] driver and device", two.jobs[0].name);
    assert_eq!(parts, [first.as_str(), "[read] driver and device"]);
    // Each job's CPU per I/O where its phase held it alone; none where a
    // phase held two jobs (the process's counters are not split by job).
    let cpu = |user_ns: u64, ios: u64| ssdready_core::result::CpuCost {
        ios,
        process: ssdready_core::result::ProcessCpu {
            user_ns,
            sys_ns: user_ns,
            ..Default::default()
        },
        ..Default::default()
    };
    (two.phases[0].cpu, two.phases[1].cpu) = (Some(cpu(2_000_000, 1000)), Some(cpu(300_000, 100)));
    let f = RunFigures::of(&two);
    let each: Vec<Option<f64>> = f.jobs.iter().map(|j| j.cpu_per_io_ns).collect();
    assert_eq!(each, [Some(4000.0), Some(6000.0)]);
    two.phases.truncate(1);
    two.phases[0].jobs = vec![0, 1];
    let f = RunFigures::of(&two);
    assert!(f.jobs.iter().all(|j| j.cpu_per_io_ns.is_none()), "{f:?}");
}

#[test]
fn a_variant_gains_only_beyond_the_spread_and_ten_percent() {
    let (median, spread) = median_spread(&[10_000.0, 10_400.0, 9_800.0]).unwrap();
    assert_eq!(median, 10_000.0);
    assert!((spread - 6.0).abs() < 0.01);
    // The oltp job's 8 KiB reads and writes: each on IOPS.
    let repeats: Vec<RunFigures> = [(10_000.0, 0.0), (10_400.0, 0.0), (9_800.0, 0.0)]
        .iter()
        .map(|&r| RunFigures::of(&result(&[r])))
        .collect();
    let base = ssdready_diagnosis::limit::job::gain::baseline(&repeats, &oltp());
    let mut v = VariantResult {
        figures: Some(RunFigures::of(&result(&[(8000.0, 0.0)]))),
        ..Default::default()
    };
    ssdready_diagnosis::limit::job::gain::judge_variant(&mut v, &base);
    assert!(v.beyond_noise && v.gain_pct.unwrap() < -19.0, "{v:?}");
    v.figures = Some(RunFigures::of(&result(&[(10_800.0, 0.0)])));
    ssdready_diagnosis::limit::job::gain::judge_variant(&mut v, &base);
    assert!(!v.beyond_noise, "{v:?}");
    // A wide spread swallows a larger gain.
    let mut wide = base.clone();
    wide[0].spread_pct = 30.0;
    v.figures = Some(RunFigures::of(&result(&[(12_500.0, 0.0)])));
    ssdready_diagnosis::limit::job::gain::judge_variant(&mut v, &base);
    assert!(v.beyond_noise, "{v:?}");
    ssdready_diagnosis::limit::job::gain::judge_variant(&mut v, &wide);
    assert!(!v.beyond_noise);
}

#[test]
fn a_rate_limited_job_says_whether_it_reached_its_rate_and_its_p99_there() {
    let mut r = result(&[(4990.0, 1200.0)]);
    let j = &mut r.jobs[0];
    j.workers = 2;
    j.spec.rate_iops = [Some(2500), Some(1000), None];
    j.spec.thinktime_ns = 50_000;
    let lines = rates(&r);
    assert!(
        lines[0].starts_with("[j0] reads: 4990 of 5000 IOPS asked (reached), p99 300"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("1200 of 2000 IOPS asked (not reached: 40 % short)"),
        "{lines:?}"
    );
    assert!(lines[2].contains("thinks 50"), "{lines:?}");
    // A job without a rate asks nothing.
    assert!(rates(&result(&[(100.0, 1.0)])).is_empty());
}

/// A job file's sections as `study --job` reads it (`run`'s parser,
/// includes expanded from beside it), from its text and the files beside.
fn read_file(text: &str, beside: &[(&str, &str)]) -> Vec<Section> {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in beside {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let f = dir.path().join("job.fio");
    std::fs::write(&f, text).unwrap();
    let arg = f.to_str().unwrap().to_string();
    ssdready_cmdline::args::parse(&[arg]).unwrap().sections
}

/// The index of the job section `name`.
fn at(sections: &[Section], name: &str) -> usize {
    sections.iter().position(|s| s.name == name).unwrap()
}

/// kubestr's default job file, as its project spells it (`readwrite=`,
/// a value-less `time_based`, `name=` renaming each job).
const KUBESTR: &str = "[global]\nrandrepeat=0\nverify=0\nioengine=libaio\ndirect=1\ngtod_reduce=1\n\
[job1]\nname=read_iops\nbs=4K\niodepth=64\nsize=2G\nreadwrite=randread\ntime_based\nramp_time=2s\nruntime=15s\n\
[job2]\nname=write_iops\nbs=4K\niodepth=64\nsize=2G\nreadwrite=randwrite\ntime_based\nramp_time=2s\nruntime=15s\n";

#[test]
fn kubestr_s_default_job_is_read_as_fio_runs_it_random_reads_then_random_writes() {
    let s = read_file(KUBESTR, &[]);
    let (one, two) = (at(&s, "job1"), at(&s, "job2"));
    assert_eq!(
        described(&s, one),
        "[job1] random reads, 4k blocks, libaio, QD 64 × 1 job, direct"
    );
    assert_eq!(
        described(&s, two),
        "[job2] random writes, 4k blocks, libaio, QD 64 × 1 job, direct"
    );
    // `--section job1`: the study's point is 4 KiB random reads at QD 64,
    // so read-ahead and writeback throttling are judged for what it runs.
    let job1: Vec<Section> = s[..=one].to_vec();
    let p = crate::trials::on_job::job_point(&job1);
    assert_eq!(
        (p.rw.as_str(), p.bs, p.qd, p.threads),
        ("randread", 4096, 64, 1)
    );
    assert!(p.direct && p.describe().starts_with("4 KiB random reads at QD 64"));
    let written = crate::trials::on_job::job_point(&[s[0].clone(), s[two].clone()]);
    assert_eq!(written.rw, "randwrite");
    // Its length as written (ramp 2 s, 15 s) is cut to the study's share.
    let (cut, note) = prepared(&job1, None, 10.0);
    assert_eq!(spec(&cut, one).runtime_ns, Some(8_000_000_000));
    assert!(note.unwrap().contains("[job1] 15 s → 8 s"));
}

#[test]
fn a_kbench_style_job_with_blocksize_in_an_included_file_is_varied_from_its_own_block() {
    let main = "[rand-write-iops]\nreadwrite=randwrite\ninclude iops-include.fio\n";
    let include = "blocksize=8k\niodepth=128\nioengine=libaio\ndirect=1\nnumjobs=2\ntimeout=30\n";
    let s = read_file(main, &[("iops-include.fio", include)]);
    let j = at(&s, "rand-write-iops");
    assert_eq!(
        described(&s, j),
        "[rand-write-iops] random writes, 8k blocks, libaio, QD 128 × 2 jobs, direct"
    );
    let p = crate::trials::on_job::job_point(&s);
    assert_eq!(
        (p.rw.as_str(), p.bs, p.qd, p.threads),
        ("randwrite", 8192, 128, 2)
    );
    // `timeout` is fio's other name for `runtime`: the written 30 s is cut.
    let (_, note) = prepared(&s, None, 10.0);
    assert!(note.unwrap().contains("[rand-write-iops] 30 s → 10 s"));
    let vs = variants(&s);
    let names: Vec<&str> = vs.iter().map(|v| v.what.as_str()).collect();
    for want in [
        "iodepth ×2 (128 → 256)",
        "numjobs ×2 (2 → 4)",
        "bs ×2 (8k → 16k)",
    ] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    // Each variant is written by fio's own name after the job's own
    // spelling, and core reads the value intended.
    let block = vs.iter().find(|v| v.what.starts_with("bs")).unwrap();
    let b = spec(&block.sections, j);
    assert_eq!(b.bs, ssdready_core::spec::BlockSizes::Fixed(16384));
    assert_eq!(b.rw, ssdready_core::spec::RwMode::RandWrite);
    let deeper = vs.iter().find(|v| v.option == "iodepth=256").unwrap();
    assert_eq!(spec(&deeper.sections, j).iodepth, 256);
    // The file written back keeps one line per option, and `run` reads
    // it as intended.
    let text = ssdready_diagnosis::limit::job::best::render(
        &ssdready_diagnosis::limit::job::best::apply(&s, &["iodepth=256".into()]),
        "",
    );
    assert!(
        text.contains("iodepth=256") && !text.contains("iodepth=128"),
        "{text}"
    );
    let again = read_file(&text, &[]);
    let a = spec(&again, at(&again, "rand-write-iops"));
    assert_eq!((a.iodepth, a.numjobs, a.rw.name()), (256, 2, "randwrite"));
    assert_eq!(a.bs, ssdready_core::spec::BlockSizes::Fixed(8192));
}

#[test]
fn a_split_of_block_sizes_is_described_by_its_range_and_mean() {
    // fio's examples/iometer-file-access-server.fio.
    let text = "[iometer]\nbssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10\n\
rw=randrw\nrwmixread=80\ndirect=1\nioengine=libaio\niodepth=64\n";
    let s = read_file(text, &[]);
    assert_eq!(
        described(&s, at(&s, "iometer")),
        "[iometer] random reads and writes (80 % reads), 512–64k (mean 11.1k) blocks, libaio, QD 64 × 1 job, direct"
    );
}

#[test]
fn a_random_mix_with_a_block_per_direction_is_read_per_direction() {
    let text = "[global]\nioengine=io_uring\ndirect=1\niodepth=16\n\
[mix]\nrw=randrw\nrwmixread=70\nbs=4k,64k\nnumjobs=4\n";
    let s = read_file(text, &[]);
    let j = at(&s, "mix");
    assert_eq!(
        described(&s, j),
        "[mix] random reads and writes (70 % reads), 4k reads and 64k writes, io_uring, QD 16 × 4 jobs, direct"
    );
    let own = spec(&s, j);
    assert_eq!(
        (mean_block(&own, 0), mean_block(&own, 1)),
        (4096.0, 65536.0)
    );
    // The point's block is the largest the job issues: what a request
    // size must hold unsplit.
    let p = crate::trials::on_job::job_point(&s);
    assert_eq!((p.rw.as_str(), p.bs), ("randrw", 65536));
    // Two sizes are no one size to double.
    assert!(variants(&s).iter().all(|v| !v.what.starts_with("bs")));
}

#[test]
fn the_job_written_back_keeps_its_names_as_written() {
    // kubestr's job renames itself in its own section; fio's example
    // names its jobs in the global one.
    let text =
        "[global]\nname=fio-seq-reads\nrw=read\nbs=256K\n\n[job1]\nname=read_iops\niodepth=16\n";
    let s = read_file(text, &[]);
    let back = ssdready_diagnosis::limit::job::best::render(
        &ssdready_diagnosis::limit::job::best::apply(&s, &["iodepth=32".into()]),
        "",
    );
    assert!(back.contains("name=fio-seq-reads\n"), "{back}");
    assert!(back.contains("name=read_iops\n"), "{back}");
    let again = read_file(&back, &[]);
    assert_eq!(spec(&again, at(&again, "job1")).name, "read_iops");
}
