//! What a command costs once, per extent and per byte.

use super::*;

fn ext(i: u64, len: u64) -> Extent {
    Extent {
        offset: i * 1_048_576,
        len,
    }
}

/// n one-extent commands, each issued when the previous completes (a
/// host with one command outstanding); returns when the last completes.
fn one_at_a_time(d: &mut Device, op: Op, n: u64) -> u64 {
    (0..n).fold(0, |t, i| d.submit(t, op, &[ext(i, 4096)]).unwrap())
}

fn dram(extra: &str) -> Device {
    // 1 ns per link byte: link times are exact.
    Device::new(
        &Params::parse(&format!(
            "dram-ssd,size=256m,link_mbps=1000,cpl_ns=500,extent_ns=100{extra}"
        ))
        .unwrap(),
    )
}

#[test]
fn n_extents_in_one_command_save_the_per_command_costs_exactly() {
    for op in [Op::Read, Op::Write] {
        for n in [1u64, 2, 8, 64] {
            let mut sep = dram("");
            let mut vec = sep.clone();
            let t_sep = one_at_a_time(&mut sep, op, n);
            let all: Vec<Extent> = (0..n).map(|i| ext(i, 4096)).collect();
            let t_vec = vec.submit(0, op, &all).unwrap();
            let saving = vec.command_saving_ns(n);
            // per command: 64 B on the link + 2 us command + 0.5 us completion;
            // the list: 16 B per extent when n > 1.
            let expect = if n < 2 {
                0
            } else {
                (n - 1) * (64 + 2_000 + 500) - 16 * n
            };
            assert_eq!(saving, expect as i64, "n={n}");
            assert_eq!(t_sep as i64 - t_vec as i64, saving, "{op:?} n={n}");
            assert_eq!(vec.counters.commands, 1);
            assert_eq!(vec.counters.extents, n);
        }
    }
}

#[test]
fn per_extent_costs_are_paid_per_extent() {
    // 8 extents of 4 KiB against one extent of 32 KiB: the same pages and
    // bytes, 7 more extent set-ups (100 ns) and an 8-entry list (128 B).
    let mut a = dram("");
    let mut b = a.clone();
    let eight: Vec<Extent> = (0..8).map(|i| ext(i, 4096)).collect();
    let t8 = a.submit(0, Op::Read, &eight).unwrap();
    let t1 = b.submit(0, Op::Read, &[ext(0, 8 * 4096)]).unwrap();
    assert_eq!(t8 - t1, 7 * 100 + 8 * 16);
}

#[test]
fn flash_commands_pay_the_controller_once() {
    // x25e: one controller core, 28 us per command. Eight reads of
    // written pages one at a time vs one vectored read.
    let p = Params::parse("x25e,size=128m").unwrap();
    let mut d = Device::new(&p);
    let all: Vec<Extent> = (0..8).map(|i| ext(i, 4096)).collect();
    let written = d.submit(0, Op::Write, &all).unwrap();
    let start = written + 10_000_000;
    let mut sep = d.clone();
    let t_sep = (0..8).fold(start, |t, i| {
        sep.submit(t, Op::Read, &[ext(i, 4096)]).unwrap()
    });
    let t_vec = d.submit(start, Op::Read, &all).unwrap();
    let saving = d.command_saving_ns(8);
    assert!(saving >= 7 * 28_000, "{saving}");
    assert!(
        (t_sep - start) as i64 - (t_vec - start) as i64 >= saving,
        "separate {} vectored {} saving {saving}",
        t_sep - start,
        t_vec - start
    );
}
