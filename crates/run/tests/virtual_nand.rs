//! Today's NAND in the model, in virtual time: reads after a fill are not
//! stalled behind the write buffer's programs (read priority and
//! program/erase suspension), writes still progress under any read load,
//! the SLC cache takes writes at SLC speed until full and then TLC speed
//! sets the pace, idle time folds the cache, and the analytic rates
//! (`ssdready_emu::analytic`) match the model. Expected figures are derived
//! from the preset's parameters, and the datasheet-class ranges the
//! `nvme-tlc` preset was fitted to (config.rs) are checked beside them.

use ssdready_core::spec::{BlockSizes, EngineKind, JobSpec, RwMode};
use ssdready_core::stats::DirStats;
use ssdready_emu::analytic::{fresh_write_bytes, program_bytes_per_s, slc_cache_bytes};
use ssdready_emu::config::Params;
use ssdready_emu::device::Device;
use ssdready_run::virtual_time::{simulate, SimOutcome};

const MIB: u64 = 1 << 20;

fn job(rw: RwMode, bs: u32, depth: u32) -> JobSpec {
    JobSpec {
        rw,
        bs: BlockSizes::Fixed(bs),
        iodepth: depth,
        time_based: true,
        norandommap: true,
        ioengine: EngineKind::Null,
        ..JobSpec::default()
    }
}

/// `size` bytes from `offset`, written sequentially in 1 MiB commands.
fn fill(d: &mut Device, offset: u64, size: u64) {
    let f = JobSpec {
        offset,
        size: Some(size),
        number_ios: Some(size / MIB),
        ..job(RwMode::Write, MIB as u32, 8)
    };
    simulate(d, &[f], &|| false).unwrap();
}

fn run(d: &mut Device, jobs: &[JobSpec]) -> SimOutcome {
    simulate(d, jobs, &|| false).unwrap()
}

/// Direction `dir` (0 read, 1 write) of job `j` (worker 0).
fn dir(o: &SimOutcome, j: usize, dir: usize) -> DirStats {
    *o.workers[j][0].dirs[dir].clone().expect("the job did I/O")
}

fn bytes_per_s(o: &SimOutcome, j: usize, d: usize) -> f64 {
    dir(o, j, d).bytes as f64 / (o.workers[j][0].measured_ns as f64 / 1e9)
}

/// Random 4 KiB reads at QD 32 over `size` bytes for 300 ms.
fn reads_after(d: &mut Device, size: u64) -> DirStats {
    let r = JobSpec {
        size: Some(size),
        runtime_ns: Some(300_000_000),
        ..job(RwMode::RandRead, 4096, 32)
    };
    let o = run(d, &[r]);
    dir(&o, 0, 0)
}

#[test]
fn reads_right_after_a_fill_wait_for_a_few_programs_not_the_buffer_flush() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let p = Params::parse("nvme-tlc").unwrap();
    let mut d = Device::new(&p);
    fill(&mut d, 0, p.size);
    let r = reads_after(&mut d, p.size);
    let (max, p999) = (r.clat.max(), r.clat.percentile(99.9));
    // The longest operation a read may have to wait out once it has let
    // suspend_max reads ahead: the slowest page type (no GC after a fill).
    let longest = *p.program_types_ns.iter().max().unwrap();
    eprintln!(
        "after a fill: {} reads, mean {:.1} µs, p99.9 {:.0} µs, max {:.0} µs (longest program {} µs)",
        r.ios,
        r.clat.mean() / 1e3,
        p999 as f64 / 1e3,
        max as f64 / 1e3,
        longest / 1000
    );
    assert!(max <= 3 * longest, "max {max} ns > 3 × {longest}");
    assert!(p999 <= longest, "p99.9 {p999} ns > {longest}");
    assert!(d.nand_totals().suspensions > 0, "{:?}", d.nand_totals());

    // Without suspension and read priority the same reads wait for the
    // programs queued on their die: the buffer's share of each die, at TLC
    // speed (the old stall, about 300 ms with the old 64 MiB buffer).
    let off = Params::parse("nvme-tlc,suspend_max=0").unwrap();
    let mut d = Device::new(&off);
    fill(&mut d, 0, off.size);
    let r = reads_after(&mut d, off.size);
    let backlog = off.write_buffer as f64 / program_bytes_per_s(&off, false).unwrap() * 1e9;
    eprintln!(
        "without suspension: p99.9 {:.0} µs, max {:.0} µs (buffer backlog {:.0} µs)",
        r.clat.percentile(99.9) as f64 / 1e3,
        r.clat.max() as f64 / 1e3,
        backlog / 1e3
    );
    assert!(r.clat.max() as f64 >= 0.8 * backlog, "{}", r.clat.max());
}

/// Reads at QD 256 over a filled half of `p`, sequential 128 KiB writes at
/// QD 8 to the fresh other half (no GC: it is not written over), together
/// for 1.5 s: (reads, writes, write bytes/s, device).
fn read_heavy_mix(p: &Params) -> (DirStats, DirStats, f64, Device) {
    let mut d = Device::new(p);
    let half = p.size / 2;
    fill(&mut d, 0, half);
    let reads = JobSpec {
        size: Some(half),
        runtime_ns: Some(1_500_000_000),
        ..job(RwMode::RandRead, 4096, 256)
    };
    let writes = JobSpec {
        offset: half,
        size: Some(half),
        runtime_ns: Some(1_500_000_000),
        ..job(RwMode::Write, 128 << 10, 8)
    };
    let o = run(&mut d, &[reads, writes]);
    (dir(&o, 0, 0), dir(&o, 1, 1), bytes_per_s(&o, 1, 1), d)
}

#[test]
fn sustained_writes_progress_under_a_read_heavy_mix() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // TLC only (no cache), so the writes are the slowest kind; 4 GiB, so
    // 1.5 s of writes at most 2 GB/s fit the fresh half.
    let p = Params::parse("nvme-tlc,size=4g,slc_cache=0").unwrap();
    let (rd, wr, write_bw, d) = read_heavy_mix(&p);
    // Each program unit lets at most suspend_max reads ahead, each costing
    // it a read, its transfer and a resume: the floor of the write rate.
    let chan_ns = p.page_bytes as f64 / p.channel_mbps * 1e3;
    let per_read = p.read_ns as f64 + chan_ns + p.resume_ns as f64;
    let unit = 16.0 * 4096.0; // 4 planes × 16 KiB
    let floor = p.dies() as f64 * unit
        / ((p.program_ns as f64 + f64::from(p.suspend_max) * per_read) / 1e9);
    let alone = program_bytes_per_s(&p, false).unwrap();
    // The same mix with reads queued behind writes in submission order.
    let fifo = Params::parse("nvme-tlc,size=4g,slc_cache=0,suspend_max=0").unwrap();
    let (rd0, _, write_bw0, _) = read_heavy_mix(&fifo);
    let show = |r: &DirStats| {
        format!(
            "{:.0} read IOPS, mean {:.0} µs, p99.9 {:.0} µs",
            r.ios as f64 / 1.5,
            r.clat.mean() / 1e3,
            r.clat.percentile(99.9) as f64 / 1e3
        )
    };
    eprintln!(
        "read-heavy mix: {}, writes {:.0} MB/s (floor {:.0}, alone {:.0}), {:?}; without suspension: {}, writes {:.0} MB/s",
        show(&rd),
        write_bw / 1e6,
        floor / 1e6,
        alone / 1e6,
        d.nand_totals(),
        show(&rd0),
        write_bw0 / 1e6
    );
    assert!(write_bw >= 0.95 * floor, "writes starved: {write_bw}");
    assert!(write_bw < alone, "reads took no die time from writes");
    assert!(
        d.ftl.as_ref().unwrap().counters.gc_runs == 0,
        "the mix ran into GC"
    );
    assert!(
        wr.series.iter().all(|s| s.ios > 0),
        "a second without write progress: {:?}",
        wr.series
    );
    // Reads went first: more of them, sooner, than in submission order.
    assert!(rd.ios > rd0.ios, "{} vs {}", rd.ios, rd0.ios);
    assert!(rd.clat.mean() < rd0.clat.mean());
}

#[test]
fn writes_run_at_slc_speed_until_the_cache_fills_then_at_tlc_speed() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // 8 GiB: an SLC cache of 344 MiB. 128 KiB sequential writes at QD 32.
    let p = Params::parse("nvme-tlc,size=8g").unwrap();
    let cache = slc_cache_bytes(&p);
    let mut d = Device::new(&p);
    let seq = |offset: u64, size: u64| JobSpec {
        offset,
        size: Some(size),
        time_based: false,
        number_ios: None,
        ..job(RwMode::Write, 128 << 10, 32)
    };
    // Within the cache (and buffer), then far past it.
    let inside = cache / 2;
    let o = run(&mut d, &[seq(0, inside)]);
    let in_cache = bytes_per_s(&o, 0, 1);
    let host = 7000e6; // the link
    let t = inside as f64 / in_cache;
    let expect_in = fresh_write_bytes(&p, Some(host), t) / t;
    run(&mut d, &[seq(inside, cache)]);
    let o = run(&mut d, &[seq(inside + cache, 2 << 30)]);
    let after = bytes_per_s(&o, 0, 1);
    let expect_after = program_bytes_per_s(&p, false).unwrap();
    eprintln!(
        "in the SLC cache {:.2} GB/s (analytic {:.2}), after it {:.2} GB/s (analytic {:.2}); {:?}",
        in_cache / 1e9,
        expect_in / 1e9,
        after / 1e9,
        expect_after / 1e9,
        d.nand_totals()
    );
    assert!(
        (in_cache / expect_in - 1.0).abs() < 0.10,
        "{in_cache} vs {expect_in}"
    );
    assert!(
        (after / expect_after - 1.0).abs() < 0.10,
        "{after} vs {expect_after}"
    );
    // The datasheet class the preset was fitted to: 5–6 GB/s within the
    // cache (the buffer adds its burst), 1.5–3 GB/s after it.
    assert!((5.0e9..7.0e9).contains(&in_cache), "{in_cache}");
    assert!((1.5e9..3.0e9).contains(&after), "{after}");
    assert_eq!(
        d.nand_totals().slc_units * 4096,
        cache,
        "the cache filled once"
    );
}

#[test]
fn analytic_fresh_write_rate_matches_random_writes_across_the_cache_boundary() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // 4 KiB random writes at QD 64 for 200 ms: the first 60 MiB (SLC cache
    // and buffer) as fast as the controller takes commands, the rest at TLC
    // speed; the analytic host rate is the controller's (fw_units /
    // fw_cmd_ns commands per second).
    let p = Params::parse("nvme-tlc").unwrap();
    let mut d = Device::new(&p);
    let w = JobSpec {
        size: Some(256 * MIB),
        runtime_ns: Some(200_000_000),
        ..job(RwMode::RandWrite, 4096, 64)
    };
    let o = run(&mut d, &[w]);
    let got = bytes_per_s(&o, 0, 1);
    let window = o.workers[0][0].measured_ns as f64 / 1e9;
    let host = f64::from(p.fw_units) / (p.fw_cmd_ns as f64 / 1e9) * 4096.0;
    let expect = fresh_write_bytes(&p, Some(host), window) / window;
    eprintln!("random writes over {window:.3} s: {got:.3e} B/s, analytic {expect:.3e}");
    assert!((got / expect - 1.0).abs() < 0.10, "{got} vs {expect}");
}

#[test]
fn idle_time_folds_the_slc_cache_so_the_next_burst_is_fast_again() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let p = Params::parse("nvme-tlc").unwrap();
    let cache = slc_cache_bytes(&p);
    let burst = |offset: u64, delay_ns: u64| JobSpec {
        offset,
        size: Some(64 * MIB),
        time_based: false,
        number_ios: None,
        startdelay_ns: delay_ns,
        ..job(RwMode::Write, 128 << 10, 32)
    };
    let rate_after = |delay_ns: u64| {
        let mut d = Device::new(&p);
        // Fill the cache (and the buffer) past full.
        run(
            &mut d,
            &[burst(0, 0), burst(64 * MIB, 0), burst(128 * MIB, 0)],
        );
        let o = run(&mut d, &[burst(192 * MIB, delay_ns)]);
        let w = dir(&o, 0, 1);
        let secs = w.lat.sum() as f64 / w.ios as f64 / 1e9;
        (
            w.bytes as f64 / (o.workers[0][0].measured_ns as f64 / 1e9),
            secs,
            d,
        )
    };
    let (busy_rate, _, _) = rate_after(0);
    let (idle_rate, _, d) = rate_after(2_000_000_000);
    eprintln!(
        "64 MiB right after the cache filled: {:.2} GB/s; after 2 s idle: {:.2} GB/s; {:?}",
        busy_rate / 1e9,
        idle_rate / 1e9,
        d.nand_totals()
    );
    assert!(d.nand_totals().folded_units * 4096 >= cache / 2);
    assert!(idle_rate > 2.0 * busy_rate, "{idle_rate} vs {busy_rate}");
}
