use super::*;

fn lever(id: &str) -> Lever {
    shipped()
        .into_iter()
        .find(|l| l.id == id)
        .unwrap_or_else(|| panic!("lever {id} in the table"))
}

fn peak(qd: u32) -> Point {
    Point {
        rw: "randread".into(),
        bs: 4096,
        qd,
        threads: 1,
        engine: Some("io_uring".into()),
        direct: true,
        sizes: String::new(),
    }
}

fn queue(pairs: &[(&str, &str)]) -> Context {
    Context {
        queue: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        cpu_list: "0-3".into(),
        ..Default::default()
    }
}

fn values(c: &[Candidate]) -> Vec<&str> {
    c.iter().map(|c| c.value.as_str()).collect()
}

#[test]
fn the_shipped_table_parses_and_names_only_known_facts_and_rules() {
    let table = shipped();
    let rules = crate::rules::parse(crate::rules::RULES).unwrap();
    for l in &table {
        for c in &l.when {
            assert!(
                crate::facts::KNOWN.contains(&c.fact.as_str())
                    || EXTRA_FACTS.contains(&c.fact.as_str()),
                "lever {} tests an unknown fact {}",
                l.id,
                c.fact
            );
        }
        for r in &l.rules {
            assert!(
                rules.iter().any(|x| &x.id == r) || FINDINGS.contains(&r.as_str()),
                "lever {} answers an unknown rule {r}",
                l.id
            );
        }
        for c in &l.lifts {
            assert!(
                l.causes.contains(c),
                "lever {} lifts what it is not for",
                l.id
            );
        }
    }
    for kind in [Kind::Queue, Kind::Cgroup, Kind::Application] {
        assert!(table.iter().any(|l| l.kind == kind), "{kind:?}");
    }
    for attr in [
        "scheduler",
        "nr_requests",
        "max_sectors_kb",
        "nomerges",
        "rq_affinity",
        "iostats",
        "wbt_lat_usec",
        "read_ahead_kb",
    ] {
        assert!(
            table.iter().any(|l| l.attr.as_deref() == Some(attr)),
            "{attr}"
        );
    }
}

#[test]
fn a_table_with_a_mistake_is_refused_with_its_line() {
    let bad = [
        ("lever a\n  kind disk\n", "kind 'disk'"),
        ("lever a\n  colour red\n", "unknown key 'colour'"),
        ("  kind queue\n", "before the first lever"),
        ("lever a\n  causes the moon\n", "'the moon' is not a cause"),
        ("lever a\n  values scale 1 10\n", "scale takes"),
        ("lever a\n  values options fast\n", "KEY=VALUE"),
        (
            "lever a\n  kind application\n  values direct\n",
            "needs 'what'",
        ),
        (
            "lever a\n  kind queue\n  what x\n  values set 1\n  undo y\n",
            "needs 'attr'",
        ),
        ("lever a\n  what x\n  values direct\nlever a\n", "twice"),
    ];
    for (text, want) in bad {
        let e = parse(text).expect_err(text).to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

#[test]
fn the_scheduler_tries_none_first_then_each_other_one_offered() {
    let l = lever("scheduler");
    let cx = queue(&[("scheduler", "mq-deadline kyber [bfq] none")]);
    assert_eq!(current(&l, &cx).as_deref(), Some("bfq"));
    assert_eq!(
        values(&candidates(&l, &cx, &peak(32))),
        ["none", "mq-deadline", "kyber"]
    );
    // Already none, nothing else offered: nothing to try.
    let cx = queue(&[("scheduler", "[none]")]);
    assert!(candidates(&l, &cx, &peak(32)).is_empty());
}

#[test]
fn nr_requests_is_raised_to_twice_what_is_in_flight_within_the_devices_depth() {
    let l = lever("nr-requests");
    let cx = queue(&[("nr_requests", "4")]);
    assert_eq!(values(&candidates(&l, &cx, &peak(32))), ["64"]);
    // At least four times the current value.
    let cx = queue(&[("nr_requests", "64")]);
    assert_eq!(values(&candidates(&l, &cx, &peak(8))), ["256"]);
    // Never past the device's own queue depth, nor to what is set.
    let mut cx = queue(&[("nr_requests", "4")]);
    cx.queue_depth = Some(31);
    assert_eq!(values(&candidates(&l, &cx, &peak(32))), ["31"]);
    cx.queue.insert("nr_requests".into(), "31".into());
    assert!(candidates(&l, &cx, &peak(32)).is_empty());
}

#[test]
fn max_sectors_applies_and_is_pointed_at_only_where_large_reads_were_split() {
    let l = lever("max-sectors");
    let mut cx = queue(&[("max_sectors_kb", "8"), ("max_hw_sectors_kb", "1280")]);
    assert!(
        !applies(&l, &cx),
        "no split measured: nothing holds large reads"
    );
    assert!(!pointed(&l, cx.cause, &fired(&cx, &[])));
    cx.large_read_split = Some(1.2);
    assert!(!applies(&l, &cx));
    assert!(!pointed(&l, cx.cause, &fired(&cx, &[])));
    cx.large_read_split = Some(128.0);
    assert!(applies(&l, &cx));
    assert!(pointed(&l, cx.cause, &fired(&cx, &[])));
    assert_eq!(
        fired(&cx, &["one-core".into()]),
        ["one-core", SPLIT_FINDING]
    );
}

#[test]
fn max_sectors_goes_to_what_the_hardware_takes() {
    let l = lever("max-sectors");
    let cx = queue(&[("max_sectors_kb", "64"), ("max_hw_sectors_kb", "1024")]);
    assert_eq!(values(&candidates(&l, &cx, &peak(8))), ["1024"]);
    let cx = queue(&[("max_sectors_kb", "1024"), ("max_hw_sectors_kb", "1024")]);
    assert!(candidates(&l, &cx, &peak(8)).is_empty());
    // A device without the file: no current value, no candidate.
    assert!(candidates(&l, &queue(&[]), &peak(8)).is_empty());
}

#[test]
fn fixed_and_scaled_values_skip_what_is_already_set() {
    let l = lever("nomerges");
    assert_eq!(
        values(&candidates(&l, &queue(&[("nomerges", "0")]), &peak(8))),
        ["2"]
    );
    assert!(candidates(&l, &queue(&[("nomerges", "2")]), &peak(8)).is_empty());
    let ra = lever("read-ahead");
    assert_eq!(
        values(&candidates(
            &ra,
            &queue(&[("read_ahead_kb", "128")]),
            &peak(1)
        )),
        ["512"]
    );
    assert_eq!(
        values(&candidates(
            &ra,
            &queue(&[("read_ahead_kb", "2048")]),
            &peak(1)
        )),
        ["4096"]
    );
    assert!(candidates(&ra, &queue(&[("read_ahead_kb", "4096")]), &peak(1)).is_empty());
}

#[test]
fn application_levers_become_job_options_filled_from_the_point() {
    let cx = queue(&[]);
    let e = candidates(&lever("engine"), &cx, &peak(1));
    assert_eq!(values(&e), ["libaio", "psync"]);
    assert_eq!(
        e[0].options,
        [("ioengine".to_string(), "libaio".to_string())]
    );
    let b = candidates(&lever("batched"), &cx, &peak(32));
    assert_eq!(
        b[0].options,
        [
            ("iodepth_batch_submit".to_string(), "32".to_string()),
            ("iodepth_batch_complete_min".to_string(), "16".to_string())
        ]
    );
    let t = candidates(&lever("threads"), &cx, &peak(32));
    assert_eq!(values(&t), ["2 threads × QD 16"]);
    assert!(candidates(&lever("threads"), &cx, &peak(1)).is_empty());
    let p = candidates(&lever("pinning"), &cx, &peak(32));
    assert!(p[0].value.contains("cpus_allowed=0-3"), "{:?}", p[0]);
    let d = candidates(&lever("direct"), &cx, &peak(32));
    assert_eq!(values(&d), ["direct=0"]);
    let out = candidates(&lever("io-throttle"), &cx, &peak(32));
    assert_eq!(values(&out), ["without the I/O throttle"]);
    // With the inventory, the limits kept are named.
    let cx = Context {
        limits: Some(ssdready_measured::group_limits::fixtures::v1_plant()),
        ..cx
    };
    let out = candidates(&lever("cpu-quota"), &cx, &peak(32));
    assert_eq!(
        values(&out),
        ["without the CPU quota, the I/O throttle kept"]
    );
}

fn fact(v: Value) -> Fact {
    Fact::of(v, "text", Vec::new())
}

#[test]
fn a_lever_applies_only_where_its_conditions_hold() {
    let mut cx = queue(&[]);
    cx.facts
        .insert("target_kind".into(), fact(Value::Text("Emulator".into())));
    assert!(!applies(&lever("engine"), &cx));
    cx.facts.insert(
        "target_kind".into(),
        fact(Value::Text("BlockDevice".into())),
    );
    assert!(applies(&lever("engine"), &cx));
    // Polled completions need the device's poll queues.
    assert!(!applies(&lever("hipri"), &cx));
    cx.queue.insert("io_poll".into(), "1".into());
    assert!(applies(&lever("hipri"), &cx));
    // Interrupt coalescing where the strategies could set it (NVMe).
    assert!(!applies(&lever("coalescing"), &cx));
    cx.facts
        .insert("coalesced_iops_ratio".into(), fact(Value::Num(0.98)));
    assert!(applies(&lever("coalescing"), &cx));
    assert!(pointed(&lever("scheduler"), Cause::Scheduler, &Vec::new()));
    assert!(pointed(
        &lever("scheduler"),
        Cause::NotIdentified,
        &["scheduler-costs".to_string()]
    ));
    assert!(!pointed(&lever("scheduler"), Cause::CpuQuota, &Vec::new()));
}

#[test]
fn an_engine_the_sweep_measured_slower_at_the_points_depth_is_not_tried_again() {
    let l = lever("engine");
    let mut cx = queue(&[]);
    // psync keeps one I/O in flight per thread: tried at QD 1 only.
    assert_eq!(values(&candidates(&l, &cx, &peak(32))), ["libaio"]);
    assert_eq!(values(&candidates(&l, &cx, &peak(1))), ["libaio", "psync"]);
    cx.engines_measured = vec![
        ("io_uring".into(), 1, 20_000.0),
        // Within 5 % of io_uring: not measured slower, tried.
        ("libaio".into(), 1, 19_500.0),
        ("psync".into(), 1, 10_000.0),
        // Slower at another depth says nothing of this one.
        ("libaio".into(), 32, 100_000.0),
    ];
    assert_eq!(values(&candidates(&l, &cx, &peak(1))), ["libaio"]);
    cx.engines_measured[1].2 = 15_000.0;
    assert!(candidates(&l, &cx, &peak(1)).is_empty());
    // At a depth the sweep did not measure, every other engine is tried.
    assert_eq!(values(&candidates(&l, &cx, &peak(8))), ["libaio"]);
}

#[test]
fn the_io_threads_priority_is_tried_for_other_work_only_where_it_can_be_raised() {
    let l = lever("priority");
    let mut cx = queue(&[]);
    // An ordinary user cannot lower a nice value: nothing to try.
    assert!(!applies(&l, &cx));
    cx.may_raise_priority = true;
    assert!(applies(&l, &cx));
    assert!(pointed(&l, Cause::OtherWork, &Vec::new()));
    assert!(pointed(
        &l,
        Cause::NotIdentified,
        &["other-work-present".to_string()]
    ));
    assert!(!pointed(&l, Cause::Scheduler, &Vec::new()));
    let c = candidates(&l, &cx, &peak(32));
    assert_eq!(values(&c), ["nice=-10"]);
    assert_eq!(c[0].options, [("nice".to_string(), "-10".to_string())]);
    let line = permanent(&l, &[], &c[0]);
    assert!(
        line.contains("--nice=-10") && line.contains("Nice=-10"),
        "{line}"
    );
    // Raising the study's threads does not lift other work off the
    // kernel's threads: no gain is no contradiction.
    assert!(l.lifts.is_empty());
}

#[test]
fn a_queue_setting_is_made_permanent_by_a_udev_rule_per_device() {
    let c = Candidate {
        value: "none".into(),
        options: Vec::new(),
    };
    let line = permanent(&lever("scheduler"), &["nvme0n1".to_string()], &c);
    assert_eq!(
        line,
        r#"ACTION=="add|change", KERNEL=="nvme0n1", ATTR{queue/scheduler}="none""#
    );
    // Each cgroup lever names its own property (the study replaces it
    // with the unit's, device's and value's lines where it read them).
    let cg = |id: &str| permanent(&lever(id), &[], &c);
    assert!(cg("io-throttle").contains("IOReadIOPSMax="));
    assert!(!cg("io-throttle").contains("CPUQuota="));
    assert!(cg("cpu-quota").contains("CPUQuota="));
    assert!(cg("cpuset").contains("AllowedCPUs="));
    let app = candidates(&lever("registered"), &queue(&[]), &peak(8));
    let line = permanent(&lever("registered"), &[], &app[0]);
    assert!(line.contains("--registerfiles=1 --fixedbufs=1"), "{line}");
}

#[test]
fn a_point_in_words() {
    assert_eq!(
        peak(32).describe(),
        "4 KiB random reads at QD 32 × 1 thread"
    );
    let p = Point {
        rw: "read".into(),
        bs: 1 << 20,
        qd: 8,
        threads: 2,
        engine: None,
        direct: false,
        sizes: String::new(),
    };
    assert_eq!(
        p.describe(),
        "1 MiB sequential reads through the page cache at QD 8 × 2 threads"
    );
    // A bssplit's sizes are said as they are, not as their largest.
    let split = Point {
        rw: "randrw".into(),
        bs: 64 << 10,
        sizes: "512 B–64 KiB (mean 11.1 KiB)".into(),
        ..p
    };
    assert_eq!(
        split.describe(),
        "mixed I/O of 512 B–64 KiB (mean 11.1 KiB) blocks through the page cache at QD 8 × 2 threads"
    );
}

#[test]
fn large_reads_are_tried_deeper_and_in_larger_blocks_up_to_their_limits() {
    let cx = queue(&[]);
    let large = |bs: u64, qd: u32| Point {
        rw: "read".into(),
        bs,
        ..peak(qd)
    };
    let d = candidates(&lever("large-depth"), &cx, &large(1 << 20, 8));
    assert_eq!(values(&d), ["iodepth=32"]);
    let b = candidates(&lever("large-blocks"), &cx, &large(1 << 20, 8));
    assert_eq!(values(&b), ["bs=4096k"]);
    // Capped: 64 × 4 is the deepest tried, 4 MiB the largest block; at
    // either cap there is nothing left to try.
    let d = candidates(&lever("large-depth"), &cx, &large(1 << 20, 128));
    assert_eq!(values(&d), ["iodepth=256"]);
    assert!(candidates(&lever("large-depth"), &cx, &large(1 << 20, 256)).is_empty());
    assert!(candidates(&lever("large-blocks"), &cx, &large(4 << 20, 8)).is_empty());
    // Both answer the finding that large reads fall short of the device.
    for id in ["large-depth", "large-blocks"] {
        let l = lever(id);
        assert_eq!(l.rules, ["bandwidth-short"], "{id}");
        assert!(matches!(l.at, At::Large), "{id}");
    }
}

#[test]
fn a_trial_on_a_job_is_judged_on_the_jobs_own_rate() {
    // A streaming job's trials are judged on bandwidth, whatever the
    // lever's table says of the device study's point; a 4 KiB job's on
    // IOPS; latency and CPU stay what they are.
    assert_eq!(Metric::Iops.on_job(true), Metric::Bandwidth);
    assert_eq!(Metric::Bandwidth.on_job(false), Metric::Iops);
    assert_eq!(Metric::Mean.on_job(true), Metric::Mean);
    assert_eq!(Metric::Cpu.on_job(false), Metric::Cpu);
}
