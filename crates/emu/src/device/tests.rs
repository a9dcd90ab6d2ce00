//! The timing model's unit tests.

use super::*;

fn one(p: &str, op: Op, off: u64) -> (Device, u64) {
    let mut d = Device::new(&Params::parse(p).unwrap());
    let t = d
        .submit(
            0,
            op,
            &[Extent {
                offset: off,
                len: 4096,
            }],
        )
        .unwrap();
    (d, t)
}

#[test]
fn timelines_fill_gaps() {
    let mut l = Timeline::default();
    assert_eq!(l.reserve(100, 10, 0), 110); // [100,110)
    assert_eq!(l.reserve(0, 10, 0), 10); // fits before
    assert_eq!(l.reserve(95, 10, 0), 120); // overlaps [100,110): after it
    assert_eq!(l.reserve(50, 40, 0), 90); // the gap [10,100) holds it
    assert_eq!(l.reserve(0, 10, 200), 10, "old intervals are forgotten");
}

#[test]
fn a_timeline_places_every_reservation_where_a_search_of_its_intervals_would() {
    // Reservations mostly after the last interval (placed without a
    // search), some into gaps and some past intervals forgotten: each
    // ends where a search of every interval from the first that ends
    // after its time would put it.
    let mut l = Timeline::default();
    let mut busy: Vec<(u64, u64)> = Vec::new();
    let (mut x, mut now) = (0x9e37_79b9_7f4a_7c15u64, 0);
    for i in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        now += x % 50;
        let at = now + (x >> 20) % 400;
        let dur = 1 + (x >> 40) % 120;
        busy.retain(|&(_, e)| e > now);
        let mut k = busy.partition_point(|&(_, e)| e <= at);
        let mut start = at;
        while k < busy.len() && busy[k].0 < start + dur {
            start = start.max(busy[k].1);
            k += 1;
        }
        busy.insert(k, (start, start + dur));
        assert_eq!(l.reserve(at, dur, now), start + dur, "reservation {i}");
    }
}

#[test]
fn x25e_qd1_read_matches_its_fit() {
    let (mut d, _) = one("x25e,size=128m", Op::Write, 0);
    let t0 = 10_000_000;
    let done = d
        .submit(
            t0,
            Op::Read,
            &[Extent {
                offset: 0,
                len: 4096,
            }],
        )
        .unwrap();
    let lat = done - t0;
    // 28 us controller + 25 us read + 81.9 us channel + 13.7 us link
    assert!((145_000..155_000).contains(&lat), "{lat}");
}

#[test]
fn unwritten_reads_skip_the_nand() {
    let (_, t) = one("x25e,size=128m", Op::Read, 0);
    assert!(t < 50_000, "{t}");
}

#[test]
fn dram_mode_serves_in_fixed_time() {
    let (mut d, t) = one("dram-ssd,size=64m", Op::Read, 0);
    assert!((7_000..8_000).contains(&t), "{t}");
    // back-to-back commands queue behind the single unit
    let t2 = d
        .submit(
            0,
            Op::Read,
            &[Extent {
                offset: 4096,
                len: 4096,
            }],
        )
        .unwrap();
    assert!(t2 >= t + 5_000, "{t2}");
}

#[test]
fn vectored_commands_pay_the_controller_once() {
    let mut a = Device::new(&Params::parse("x25e,size=128m").unwrap());
    let mut b = a.clone();
    let ext: Vec<Extent> = (0..8)
        .map(|i| Extent {
            offset: i * 1_000_000 / 4096 * 4096,
            len: 4096,
        })
        .collect();
    let mut t_sep = 0;
    for e in &ext {
        t_sep = t_sep.max(a.submit(0, Op::Write, std::slice::from_ref(e)).unwrap());
    }
    let t_vec = b.submit(0, Op::Write, &ext).unwrap();
    assert!(t_vec < t_sep, "vectored {t_vec} vs separate {t_sep}");
}

#[test]
fn write_buffer_absorbs_until_full() {
    // One program unit (16 pages of 4 KiB) of buffer: the 17th write
    // finds it full and waits for a program (into the SLC cache).
    let p = Params::parse("nvme-tlc,size=512m,write_buffer=64k").unwrap();
    let mut d = Device::new(&p);
    let lat: Vec<u64> = (0..32u64)
        .map(|i| {
            d.submit(
                0,
                Op::Write,
                &[Extent {
                    offset: i * 4096,
                    len: 4096,
                }],
            )
            .unwrap()
        })
        .collect();
    assert!(lat[0] < 20_000, "buffered write {}", lat[0]);
    assert!(lat[15] < 20_000, "buffered write {}", lat[15]);
    assert!(
        lat[31] > p.slc_program_ns,
        "once full, writes wait for programs: {}",
        lat[31]
    );
}
