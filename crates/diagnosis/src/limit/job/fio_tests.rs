use super::*;

/// fio 3.33's own JSON of a file of two jobs, one reading, one writing
/// (4 KiB random, on a file in /dev/shm, 1 s each).
const TWO_JOBS: &str = include_str!("fio-3.33-a-reader-and-a-writer.json");

fn figs(read: Option<f64>, write: Option<f64>) -> RunFigures {
    let d = |iops: f64| Dir {
        iops,
        bw_bytes_per_s: iops * 4096.0,
        ..Default::default()
    };
    RunFigures::of_jobs(vec![JobFigures {
        name: "j".into(),
        read: read.map(d),
        write: write.map(d),
        cpu_per_io_ns: None,
    }])
}

#[test]
fn fio_json_of_two_jobs_reads_each_job_in_its_own_direction_and_sums_them() {
    let f = figures(TWO_JOBS).unwrap();
    assert_eq!(f.jobs.len(), 2);
    let (r, w) = (&f.jobs[0], &f.jobs[1]);
    assert_eq!((r.name.as_str(), w.name.as_str()), ("reader", "writer"));
    assert!(r.write.is_none() && w.read.is_none(), "{f:?}");
    let rd = r.read.as_ref().unwrap();
    assert!((rd.iops - 1_158_325.674326).abs() < 1e-6);
    assert_eq!(rd.bw_bytes_per_s, 4_744_501_962.0);
    assert!((rd.lat_mean_ns - 630.737756).abs() < 1e-6);
    assert_eq!(rd.lat_p99_ns, Some(1048));
    let wr = w.write.as_ref().unwrap();
    assert!((f.iops() - rd.iops - wr.iops).abs() < 1e-6);
    // fio's threads' CPU: (33.2 + 46.0) % and (19.5 + 30.9) % of 1000 ms
    // over 1,159,484 and 613,973 I/Os.
    let want = (792.0 + 504.0) * 1e6 / (1_159_484.0 + 613_973.0);
    let got = f.cpu_per_io_ns.unwrap();
    assert!((got - want).abs() < 1e-6, "{got} against {want}");
    // And each job's apart.
    let each: Vec<f64> = f.jobs.iter().filter_map(|j| j.cpu_per_io_ns).collect();
    let want = [792.0 * 1e6 / 1_159_484.0, 504.0 * 1e6 / 613_973.0];
    assert!(
        (each[0] - want[0]).abs() < 1e-6 && (each[1] - want[1]).abs() < 1e-6,
        "{each:?}"
    );
}

/// A file of a reading job held by a CPU quota and a writing job held by
/// a throttle, as `ssd-test.fio` ran under both: fio's figures, and the
/// study's repeats with the reads at `reads` IOPS and `read_ns` of CPU
/// per I/O (the writes at the throttle's 8,000, as fio's).
fn reader_and_throttled_writer(reads: f64, read_ns: f64) -> (RunFigures, Vec<RunFigures>) {
    let job = |name: &str, r: Option<f64>, w: Option<f64>, ns: f64| {
        let d = |iops: f64| Dir {
            iops,
            bw_bytes_per_s: iops * 4096.0,
            ..Default::default()
        };
        JobFigures {
            name: name.into(),
            read: r.map(d),
            write: w.map(d),
            cpu_per_io_ns: Some(ns),
        }
    };
    let fio = RunFigures::of_jobs(vec![
        job("rand-read", Some(33_100.0), None, 5_730.0),
        job("rand-write", None, Some(8_000.0), 9_000.0),
    ]);
    let ours = |k: f64| {
        RunFigures::of_jobs(vec![
            job("rand-read", Some(reads * k), None, read_ns),
            job("rand-write", None, Some(8_000.0 * k), 6_000.0),
        ])
    };
    (fio, vec![ours(1.0), ours(1.01), ours(0.99)])
}

#[test]
fn under_a_quota_a_jobs_gap_from_fio_is_set_against_its_own_cpu_per_io() {
    // The reads +28.4 %: fio's threads 5.73 µs per I/O, the study's 4.50
    // (+27.3 %), which explains it; the writes at the throttle, within the
    // noise though their CPU per I/O differs.
    let (fio, repeats) = reader_and_throttled_writer(42_500.0, 4_500.0);
    let line = jobs_line(&repeats, &fio, true).unwrap();
    assert!(
        line.ends_with("beyond the noise: [rand-read] (its threads' CPU per I/O 5.73 µs fio's, 4.50 µs the study's: +27.3 %, which explains it under the quota)"),
        "{line}"
    );
    // A study whose threads cost as much as fio's: not explained.
    let (fio, repeats) = reader_and_throttled_writer(42_500.0, 5_600.0);
    let line = jobs_line(&repeats, &fio, true).unwrap();
    assert!(
        line.contains("+2.3 %, which does not explain it: the rest is not identified"),
        "{line}"
    );
    // Without a quota the CPU per I/O sets no rate, and is not said.
    assert!(!jobs_line(&repeats, &fio, false)
        .unwrap()
        .contains("CPU per I/O"));
    // The file's line leaves the jobs' CPU summed unsaid and points below.
    let (fio, repeats) = reader_and_throttled_writer(42_500.0, 4_500.0);
    let median = repeats[0].iops();
    let quota = Some("a CPU quota of 0.10 CPU");
    let (line, agrees) = as_written_line(
        (median, 1.0),
        (&fio, Some(5_000.0)),
        "fio-3.33",
        (quota, None),
    );
    assert!(!agrees, "{line}");
    assert!(line.contains("(each job's below)"), "{line}");
    assert!(!line.contains("not identified"), "{line}");
}

#[test]
fn fio_output_with_a_note_before_the_document_is_read_and_a_failed_job_is_refused() {
    let noted =
        format!("note: both iodepth >= 1 and synchronous I/O engine are selected\n{TWO_JOBS}");
    assert_eq!(figures(&noted).unwrap().jobs.len(), 2);
    let failed = TWO_JOBS.replacen("\"error\" : 0", "\"error\" : 5", 1);
    assert_eq!(
        figures(&failed),
        Err(FioJsonError::JobError {
            job: "reader".into(),
            code: 5
        })
    );
    assert_eq!(figures("fio: failed parsing"), Err(FioJsonError::NoJson));
    assert!(matches!(
        figures("{\"jobs\": []}"),
        Err(FioJsonError::NoJobs)
    ));
}

#[test]
fn each_job_of_a_file_of_several_is_set_against_fios_own_figure_of_it() {
    let fio = figures(TWO_JOBS).unwrap();
    let names: Vec<String> = fio.jobs.iter().map(|j| j.name.clone()).collect();
    // The study's repeats: the first job as fio ran it, the second +30 %.
    let ours = |k: f64| {
        let mut jobs = fio.jobs.clone();
        let second = &mut jobs[1];
        for d in second.read.iter_mut().chain(second.write.iter_mut()) {
            d.iops *= 1.3 * k;
        }
        RunFigures::of_jobs(jobs)
    };
    let repeats = [ours(1.0), ours(1.01), ours(0.99)];
    let line = jobs_line(&repeats, &fio, false).unwrap();
    assert!(line.starts_with("each job against fio's: "), "{line}");
    assert!(
        line.contains(&format!("[{}] ", names[0])) && line.contains("(+0.0 %)"),
        "{line}"
    );
    assert!(line.contains("(+30.0 %)"), "{line}");
    assert!(
        line.ends_with(&format!("beyond the noise: [{}]", names[1])),
        "{line}"
    );
    // One job: its line is the file's own.
    assert_eq!(jobs_line(&repeats, &figs(Some(1.0), None), false), None);
}

#[test]
fn a_jobs_clones_are_one_job_against_fios_clones_added() {
    // numjobs=4 without group_reporting: fio reports four entries of one
    // name; the study's figures are the job's, the clones together.
    let fio = figures(TWO_JOBS).unwrap();
    let one = fio.jobs[0].clone();
    let four = RunFigures::of_jobs(vec![one.clone(), one.clone(), one.clone(), one.clone()]);
    let mut together = one.clone();
    for d in together.read.iter_mut().chain(together.write.iter_mut()) {
        d.iops *= 4.0;
    }
    let repeats = [RunFigures::of_jobs(vec![together])];
    assert_eq!(jobs_line(&repeats, &four, false), None, "one job, not four");
    // Two jobs, the first of two clones: each set against its own sum.
    let two = RunFigures::of_jobs(vec![one.clone(), one.clone(), fio.jobs[1].clone()]);
    let mut doubled = one.clone();
    for d in doubled.read.iter_mut().chain(doubled.write.iter_mut()) {
        d.iops *= 2.0;
    }
    let repeats = [RunFigures::of_jobs(vec![doubled, fio.jobs[1].clone()])];
    let line = jobs_line(&repeats, &two, false).unwrap();
    assert!(line.ends_with("each within the noise"), "{line}");
    assert_eq!(line.matches("(+0.0 %)").count(), 2, "{line}");
}

#[test]
fn a_change_gains_by_its_least_direction_on_the_jobs_metric() {
    let base = figs(Some(1000.0), Some(500.0));
    let changed = figs(Some(1500.0), Some(550.0));
    let g = gain_pct(&base, &changed, false).unwrap();
    assert!((g - 10.0).abs() < 1e-9, "{g}");
    // A direction the change stopped doing counts as a loss of all of it.
    let g = gain_pct(&base, &figs(Some(3000.0), None), true).unwrap();
    assert!((g + 100.0).abs() < 1e-9, "{g}");
    assert_eq!(gain_pct(&figs(None, None), &changed, false), None);
    // The reads gained, the writes held (a throttle of the writes): the
    // directions together, as the study judges its variants.
    let held = figs(Some(1500.0), Some(520.0));
    let g = gain_pct(&base, &held, false).unwrap();
    assert!((g - 100.0 * (2020.0 / 1500.0 - 1.0)).abs() < 1e-9, "{g}");
}

#[test]
fn the_job_as_written_agrees_with_fio_within_the_noise_and_says_so_beyond_it() {
    let fio = figs(Some(70_000.0), None);
    let (line, agree) = as_written_line((74_000.0, 3.0), (&fio, None), "fio-3.33", (None, None));
    assert!(agree && line.contains("within the noise"), "{line}");
    let (line, agree) = as_written_line((93_600.0, 3.0), (&fio, None), "fio-3.33", (None, None));
    assert!(!agree && line.contains("+33.7 %"), "{line}");
    assert!(line.contains("cause not identified"), "{line}");
    let q = "a CPU quota of 0.20 CPUs: cpu.cfs_quota_us";
    let (line, _) = as_written_line((93_600.0, 3.0), (&fio, None), "fio-3.33", (Some(q), None));
    assert!(line.contains("under a CPU quota of 0.20 CPUs"), "{line}");
    assert!(!line.contains("µs of CPU per I/O"), "{line}");
    // Each engine's CPU per I/O, where both are known, is the evidence.
    let fio = RunFigures {
        cpu_per_io_ns: Some(4_800.0),
        ..fio
    };
    let (line, _) = as_written_line(
        (93_600.0, 3.0),
        (&fio, Some(3_210.0)),
        "fio-3.33",
        (Some(q), None),
    );
    assert!(
        line.contains("fio's threads spent 4.80 µs of CPU per I/O, the study's 3.21 µs"),
        "{line}"
    );
    // A ratio of the two that is not the rates' is said so: 4.80 / 3.21
    // would part them by +49.5 %, they part by +33.7 %.
    assert!(
        line.contains(
            "would part by +49.5 %, not the +33.7 % measured; the difference is not identified"
        ),
        "{line}"
    );
    let (line, _) = as_written_line(
        (91_000.0, 3.0),
        (&fio, Some(3_690.0)),
        "fio-3.33",
        (Some(q), None),
    );
    assert!(
        line.contains("the study's 3.69 µs") && !line.contains("not identified"),
        "{line}"
    );
    // Without a quota, both engines keeping the same CPU busy is the
    // evidence: the rates part as the CPU per I/O does.
    let bound = RunFigures {
        cpu_per_io_ns: Some(16_860.0),
        ..figs(Some(59_200.0), None)
    };
    let (line, _) = as_written_line(
        (89_000.0, 1.0),
        (&bound, Some(11_500.0)),
        "fio-3.33",
        (None, None),
    );
    assert!(
        line.contains(
            "both engines kept the same CPU busy (1.02 CPUs the study's threads, 1.00 fio's)"
        ) && line.contains("fio's threads spent 16.86 µs of CPU per I/O, the study's 11.50 µs"),
        "{line}"
    );
    // Where one used clearly more CPU, something else parts them.
    let (line, _) = as_written_line(
        (89_000.0, 1.0),
        (&bound, Some(5_000.0)),
        "fio-3.33",
        (None, None),
    );
    assert!(line.contains("cause not identified"), "{line}");
    // A wide spread of the study's own repeats is noise too.
    let (_, agree) = as_written_line((93_600.0, 40.0), (&fio, None), "fio-3.33", (None, None));
    assert!(agree);
}

#[test]
fn lower_priority_work_in_the_studys_session_is_why_fio_got_less_and_only_then() {
    // Two loops at nice 10 in the study's session, measured beside it on 2
    // vCPUs: fio 201K IOPS, ssdready's threads 294K.
    let fio = figs(Some(201_000.0), None);
    let o = "sh (pid 9604, nice 10) 0.44 CPUs, sh (pid 9603, nice 10) 0.44 CPUs";
    let (line, agree) =
        as_written_line((294_000.0, 5.0), (&fio, None), "fio-3.33", (None, Some(o)));
    assert!(!agree, "{line}");
    assert!(
        line.contains("starts a session of its own") && line.contains(o),
        "{line}"
    );
    assert!(!line.contains("cause not identified"), "{line}");
    // The study below fio: that work is not why.
    let (line, _) = as_written_line((150_000.0, 5.0), (&fio, None), "fio-3.33", (None, Some(o)));
    assert!(line.contains("cause not identified"), "{line}");
    // Within the noise, nothing is said of it.
    let (line, agree) =
        as_written_line((205_000.0, 5.0), (&fio, None), "fio-3.33", (None, Some(o)));
    assert!(agree && !line.contains("session"), "{line}");
}

#[test]
fn a_mechanic_fio_does_not_gain_from_is_not_confirmed() {
    assert!(confirms(12.0) && !confirms(2.0) && !confirms(-5.0));
    let (line, kept) = mechanic_line("ioengine io_uring", 29.7, 0.4);
    assert_eq!(kept, Some(0.4));
    assert!(line.contains("not confirmed"), "{line}");
    assert!(mechanic_line("iodepth=64", 80.0, 75.0)
        .0
        .ends_with("confirmed"));
    // A fio run that measured next to nothing checks nothing.
    let (line, kept) = mechanic_line("numjobs ×2 (4 → 8)", 71.3, -100.0);
    assert_eq!(kept, None);
    assert!(
        line.ends_with("measured next to nothing (-100.0 %): not checked"),
        "{line}"
    );
}

#[test]
fn the_best_configuration_is_set_beside_fios_ab_and_an_over_claim_is_said() {
    let (line, agree) = best_line(
        ("the best configuration", &[280.0, 297.0]),
        287.0,
        &[300.0, 310.0],
        None,
    );
    assert!(agree, "{line}");
    let (line, agree) = best_line(
        ("the best configuration", &[480.0, 515.0]),
        498.0,
        &[330.0, 345.0],
        None,
    );
    assert!(!agree && line.contains("over-claims"), "{line}");
    let (line, agree) = best_line(
        ("the best configuration", &[278.0, 297.0]),
        287.0,
        &[400.0, 420.0],
        None,
    );
    assert!(!agree && line.contains("under-claims"), "{line}");
    // fio's pairs within a tenth of the rate of the study's agree; a
    // third apart do not (+146 % against +230 %).
    let (line, agree) = best_line(
        ("the best configuration", &[208.5, 242.9]),
        229.7,
        &[137.6, 154.9],
        None,
    );
    assert!(!agree && line.contains("over-claims"), "{line}");
    let (line, agree) = best_line(
        ("the best configuration", &[101.6, 194.7]),
        144.4,
        &[43.0, 95.0],
        None,
    );
    assert!(agree, "{line}");
    assert!(line.contains("+69.0 %"), "{line}");
}

#[test]
fn the_best_configuration_keeps_a_mechanic_fio_confirms_and_leaves_out_one_it_does_not() {
    let v = |option: &str, gain: f64, fio: Option<f64>| super::super::VariantResult {
        what: option.into(),
        option: option.into(),
        gain_pct: Some(gain),
        beyond_noise: true,
        fio_gain_pct: fio,
        ..Default::default()
    };
    let variants = [
        v("ioengine=io_uring", 29.7, Some(0.4)),
        v("iodepth=64", 80.0, Some(75.0)),
        v("numjobs=2", 40.0, None),
    ];
    let chosen: Vec<&str> = super::super::best::chosen(&variants)
        .iter()
        .map(|v| v.option.as_str())
        .collect();
    assert_eq!(chosen, ["iodepth=64", "numjobs=2"]);
}

#[test]
fn a_host_change_is_set_beside_fios_turn_of_it_and_a_gap_beyond_a_tenth_is_said() {
    // A cpuset's lift: +228 % (+43 … +587 %) by the study.
    let (line, agrees) = host_line("cpuset 0 → 0-1", (228.2, 42.6, 587.4), &[9.0, 40.0], None);
    assert!(agrees, "{line}");
    assert!(
        line.ends_with("by fio in 2 pair(s) of turns at the same point: they agree"),
        "{line}"
    );
    // fio's +9 % and +11 % are below the trial's interval, even widened
    // by a tenth.
    let (line, agrees) = host_line("cpuset 0 → 0-1", (228.2, 42.6, 587.4), &[9.0, 11.0], None);
    assert!(!agrees);
    assert!(
        line.ends_with("the study over-claims: expect fio's figure"),
        "{line}"
    );
    // A queue's lift: +169 % (+82 … +287 %); fio's +400 % above it.
    let (line, agrees) = host_line(
        "nr-requests 4 → 128",
        (168.8, 82.0, 287.0),
        &[400.0, 420.0],
        None,
    );
    assert!(!agrees);
    assert!(
        line.ends_with("the study under-claims: fio gains more"),
        "{line}"
    );
}

#[test]
fn a_study_that_claims_more_than_fio_under_a_cpu_quota_says_the_quota() {
    // The queue's lift under a quota of 0.80 CPUs: +225 % by the study's
    // engine, +95 % by fio's, whose CPU per I/O meets the quota sooner.
    let q = "a CPU quota of 0.80 CPUs: cpu.cfs_quota_us = 80000 (period 100000 µs)";
    let (line, agrees) = host_line(
        "nr-requests 4 → 128",
        (225.4, 196.1, 257.1),
        &[80.7, 110.0],
        Some(q),
    );
    assert!(!agrees);
    assert!(
        line.ends_with(&format!("the study over-claims: expect fio's figure (the job runs under {q}, where the rate the change lifts follows each engine's CPU per I/O)")),
        "{line}"
    );
    // Agreeing, or fio gaining more, says nothing of the quota.
    for fio in [[200.0, 240.0], [300.0, 320.0]] {
        let (line, _) = host_line("nr-requests 4 → 128", (225.4, 196.1, 257.1), &fio, Some(q));
        assert!(!line.contains("CPU quota"), "{line}");
    }
    let (line, agrees) = best_line(
        ("the best configuration", &[182.5, 300.0, 285.0]),
        255.8,
        &[77.2],
        Some(q),
    );
    assert!(!agrees && line.contains(q), "{line}");
}

#[test]
fn fio_pairs_that_went_both_ways_judge_nothing() {
    // One fio run measured next to nothing in each pair: -100 % and a
    // gain of millions of percent. Their range meets any claim; it is no
    // agreement.
    let (line, agrees) = best_line(
        ("the best configuration", &[38.0, 40.0, 50.0]),
        42.7,
        &[-99.99, 92_998_442.0],
        None,
    );
    assert!(!agrees, "{line}");
    assert!(line.contains("fio's pairs went both ways"), "{line}");
    assert!(both_ways(&[-12.0, 15.0]) && !both_ways(&[-5.0, 15.0]) && !both_ways(&[20.0, 30.0]));
}
