//! Properties of the temporal merge layers in virtual time, on random
//! settings and random closed-loop workloads (threads that issue a request,
//! wait for it, think a random time, issue the next): every request is seen
//! exactly once; commands keep to the limits and carry exactly the requests;
//! a request waits for its command at most the window plus one command.

use proptest::prelude::*;
use ssdready_core::spec::TemporalMerge;
use ssdready_emu::config::Params;
use ssdready_emu::device::{Device, Extent, Op};
use ssdready_emu::merge::virtual_time::{Out, Request, VirtualHost};
use ssdready_emu::merge::MergeConfig;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One request as it was served.
struct Record {
    thread: u32,
    n: u32,
    entered: u64,
    issued: u64,
    done: u64,
    seen: u64,
    leader_of: Option<usize>,
}

/// What a closed-loop run produced.
struct Run {
    seen: Vec<Record>,
    commands: u64,
    extents: u64,
    /// The longest command, issue to completion, ns.
    longest: u64,
}

/// `threads` threads, `per` requests each, of kind `ops[i % len]`, with
/// think times from `think` (ns), through one layer of `cfg`.
fn closed_loop(
    params: &str,
    cfg: MergeConfig,
    threads: u32,
    per: u32,
    ops: &[Op],
    think: &[u64],
) -> Run {
    let p = Params::parse(params).unwrap();
    let mut dev = Device::new(&p);
    let mut host = VirtualHost::new(&p);
    let layer = host.add_layer(cfg, threads as usize);
    // (time, kind: 0 arrival / 1 host event, thread or event, request number)
    let mut heap = BinaryHeap::new();
    for th in 0..threads {
        heap.push(Reverse((think[th as usize % think.len()], 0u8, th, 0u32)));
    }
    let mut entered = vec![0u64; threads as usize];
    let mut out = Out::default();
    let mut run = Run {
        seen: Vec::new(),
        commands: 0,
        extents: 0,
        longest: 0,
    };
    while let Some(Reverse((t, what, who, n))) = heap.pop() {
        if what == 0 {
            let i = (who * per + n) as usize;
            entered[who as usize] = t;
            let r = Request {
                worker: who,
                slot: n,
                op: ops[i % ops.len()],
                ext: Extent {
                    offset: i as u64 * 4096,
                    len: 4096,
                },
                at: t,
            };
            host.merged(&mut dev, layer, r, &mut out).unwrap();
        } else {
            host.event(&mut dev, t, who, &mut out).unwrap();
        }
        for s in out.seen.drain(..) {
            let sv = s.served.expect("merged requests say how they were served");
            run.longest = run.longest.max(sv.done - sv.issued);
            assert_eq!(sv.entered, entered[s.worker as usize]);
            run.seen.push(Record {
                thread: s.worker,
                n: s.slot,
                entered: sv.entered,
                issued: sv.issued,
                done: sv.done,
                seen: s.at,
                leader_of: sv.leader_of,
            });
            if s.slot + 1 < per {
                let next = s.at + think[(s.worker + s.slot) as usize % think.len()];
                heap.push(Reverse((next, 0, s.worker, s.slot + 1)));
            }
        }
        for (t, ev) in out.events.drain(..) {
            heap.push(Reverse((t, 1, ev, 0)));
        }
    }
    run.commands = dev.counters.commands;
    run.extents = dev.counters.extents;
    run
}

fn config() -> impl Strategy<Value = MergeConfig> {
    (
        prop_oneof![Just(TemporalMerge::Stm), Just(TemporalMerge::Atm)],
        prop_oneof![Just(0u64), 1_000u64..50_000],
        1u32..12,
        prop_oneof![Just(0u64), Just(8192u64), Just(20480u64)],
    )
        .prop_map(|(mode, window_ns, max_extents, max_bytes)| MergeConfig {
            mode,
            window_ns,
            max_extents,
            max_bytes,
        })
}

const DEVICE: &str = "dram-ssd,size=64m,completion=poll,host_cmd_ns=5us,wake_ns=3us";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_request_is_seen_once_in_one_command_within_the_limits(
        cfg in config(),
        threads in 1u32..10,
        per in 1u32..30,
        mixed in any::<bool>(),
        think in prop::collection::vec(0u64..40_000, 1..6),
    ) {
        let _one_file = crate::one_file_at_a_time(module_path!());
        let ops: &[Op] = if mixed { &[Op::Read, Op::Write, Op::Read] } else { &[Op::Write] };
        let run = closed_loop(DEVICE, cfg, threads, per, ops, &think);
        let total = u64::from(threads) * u64::from(per);
        // Exactly once: every (thread, request) seen, none twice.
        let mut ids: Vec<(u32, u32)> = run.seen.iter().map(|s| (s.thread, s.n)).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len() as u64, total);
        prop_assert_eq!(run.seen.len() as u64, total);
        // The device got each request as one extent, in the commands led.
        prop_assert_eq!(run.extents, total);
        let led: Vec<usize> = run.seen.iter().filter_map(|s| s.leader_of).collect();
        prop_assert_eq!(led.len() as u64, run.commands);
        prop_assert_eq!(led.iter().sum::<usize>() as u64, total);
        let most_by_bytes = if cfg.max_bytes == 0 { usize::MAX } else { (cfg.max_bytes / 4096).max(1) as usize };
        for &n in &led {
            prop_assert!(n <= cfg.max_extents as usize && n <= most_by_bytes, "{} extents", n);
            if cfg.window_ns == 0 || threads == 1 && cfg.mode == TemporalMerge::Stm {
                prop_assert_eq!(n, 1);
            }
        }
        // Seen no earlier than done, done no earlier than issued.
        for s in &run.seen {
            prop_assert!(s.entered <= s.issued && s.issued <= s.done && s.done <= s.seen);
        }
    }

    #[test]
    fn a_request_waits_at_most_the_window_plus_one_command(
        mut cfg in config(),
        threads in 1u32..10,
        per in 1u32..30,
        think in prop::collection::vec(0u64..40_000, 1..6),
    ) {
        let _one_file = crate::one_file_at_a_time(module_path!());
        // Merging, with room in a command for a request of every thread,
        // and one kind of request: no queue builds up beyond the command in
        // flight and the one gathering. (Without merging, or with commands
        // too small for every thread, commands queue for the device like
        // any others.)
        cfg.window_ns = cfg.window_ns.max(1_000);
        cfg.max_extents = cfg.max_extents.max(threads);
        cfg.max_bytes = 0;
        let run = closed_loop(DEVICE, cfg, threads, per, &[Op::Read], &think);
        // The command ahead is its host part and its device part; this
        // request's own command then has its host part before it is issued.
        let host_cmd = 5_000;
        let one_command = host_cmd + run.longest;
        for s in &run.seen {
            let waited = s.issued - s.entered;
            prop_assert!(
                waited <= cfg.window_ns + one_command + host_cmd,
                "waited {} > window {} + one command {} + host {}", waited, cfg.window_ns, one_command, host_cmd
            );
        }
    }
}

#[test]
fn concurrency_merges_and_a_single_thread_does_not() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for mode in [TemporalMerge::Stm, TemporalMerge::Atm] {
        let cfg = MergeConfig {
            mode,
            window_ns: 20_000,
            max_extents: 8,
            max_bytes: 0,
        };
        let many = closed_loop(DEVICE, cfg, 8, 50, &[Op::Read], &[0, 1_000, 3_000]);
        assert!(
            many.extents as f64 / many.commands as f64 > 4.0,
            "{mode:?}: {} requests in {} commands",
            many.extents,
            many.commands
        );
        let one = closed_loop(DEVICE, cfg, 1, 50, &[Op::Read], &[1_000]);
        assert_eq!(one.commands, one.extents, "{mode:?}");
    }
}
