use super::*;
use crate::locked::FreeTimes;

/// A xorshift stream (the same numbers every run).
fn stream(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// The work of `[end - dur, end)` intervals in each frame of `ledger`.
fn work_per_frame(ledger: &Ledger, ends: &[(u64, u64)]) -> std::collections::BTreeMap<u64, u64> {
    let (frame_ns, _) = ledger.frame();
    let mut work = std::collections::BTreeMap::new();
    for &(end, dur) in ends {
        let mut s = end - dur;
        while s < end {
            let f = s / frame_ns;
            let next = (f + 1) * frame_ns;
            *work.entry(f).or_insert(0) += end.min(next) - s;
            s = next;
        }
    }
    work
}

#[test]
fn one_lane_alone_gets_the_times_of_the_shared_schedule() {
    // A link loaded past its capacity (transfers of up to 3 frames,
    // arriving faster than it serves them) and a controller of 4 cores:
    // one queue pair's lanes give exactly what the device's own
    // schedules give, never moved by the ledger.
    let link = Ledger::new(1, 64);
    let cores = Ledger::new(4, 200);
    let (mut lane, mut line) = (LineLane::default(), Timeline::default());
    let (mut mine, mut shared) = (CoresLane::new(4), FreeTimes::new(4));
    let mut next = stream(0x2545_f491_4f6c_dd1d);
    let mut t = 0;
    for i in 0..50_000 {
        let r = next();
        t += r % 60;
        let dur = if r.is_multiple_of(100) { 30_000 } else { 64 };
        let at = t + (r >> 40) % 5_000;
        assert_eq!(
            lane.reserve(&link, at, dur, t),
            line.reserve(at, dur, t),
            "transfer {i} at {at}"
        );
        let cost = 200 + (r >> 20) % 400;
        assert_eq!(
            mine.take(&cores, t, cost),
            shared.take_mut(t, cost),
            "command {i} at {t}"
        );
    }
}

#[test]
fn lanes_together_never_put_more_work_in_a_frame_than_the_link_does() {
    // 8 threads, each with its own lane, 2,000 transfers of 64 ns each,
    // all ready at time 0: the link can do them in 1.024 ms. Each frame
    // holds at most its own length of them, the last ends no sooner than
    // the link could have done them all (less the last frame, whose work
    // may overlap), and not much later (little booked goes unspent).
    let link = Ledger::new(1, 64);
    let (frame_ns, budget) = link.frame();
    assert_eq!(budget, frame_ns);
    let ends: Vec<(u64, u64)> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let mut lane = LineLane::default();
                    (0..2_000)
                        .map(|_| (lane.reserve(&link, 0, 64, 0), 64))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (f, w) in work_per_frame(&link, &ends) {
        assert!(w <= budget, "frame {f}: {w} ns of work in {budget}");
        assert!(
            w <= link.booked_at(f * frame_ns),
            "frame {f}: booked less than done"
        );
    }
    let last = ends.iter().map(|&(e, _)| e).max().unwrap();
    let all = 8 * 2_000 * 64;
    assert!(
        last + frame_ns >= all,
        "the last at {last} ns: faster than the link"
    );
    assert!(
        last <= all + all / 10 + frame_ns,
        "the last at {last} ns against {all}: capacity lost"
    );
}

#[test]
fn a_lane_goes_to_the_ledger_once_per_chunk_not_once_per_command() {
    // 10,000 reads a microsecond apart on a 64 ns link and 4 cores of
    // 200 ns: each lane books 16 commands' work (or a 32nd of a frame) at
    // a time, so it writes the shared slots for fewer than 1 in 8.
    let (link, cores) = (Ledger::new(1, 64), Ledger::new(4, 200));
    let (mut lane, mut mine) = (LineLane::default(), CoresLane::new(4));
    for i in 0..10_000u64 {
        lane.reserve(&link, i * 1_000, 64, i * 1_000);
        mine.take(&cores, i * 1_000, 200);
    }
    let (l, c) = (lane.credit().visits(), mine.credit().visits());
    assert!(l > 0 && c > 0, "each went to its ledger");
    assert!(l <= 10_000 / 8 && c <= 10_000 / 8, "link {l}, cores {c}");
}

#[test]
fn a_full_frame_moves_a_reservation_to_the_next() {
    // A frame another queue pair has filled: the next reservation in it
    // starts in the frame after, where there is room.
    let link = Ledger::new(1, 64);
    let (frame_ns, budget) = link.frame();
    assert_eq!(link.book(0, budget, budget), Booked::Got(budget));
    let mut lane = LineLane::default();
    assert_eq!(lane.reserve(&link, 100, 64, 0), frame_ns + 64);
    assert_eq!(link.booked_at(0), budget);
}

#[test]
fn a_frame_older_than_the_ledger_keeps_is_full() {
    // Frame 5's slot was taken by frame 5 + SLOTS: a late reservation at
    // frame 5 is moved to the first frame the ledger still keeps, never
    // booked in a frame whose account is gone.
    let link = Ledger::new(1, 64);
    let (frame_ns, _) = link.frame();
    let newer = 5 + SLOTS;
    assert!(matches!(link.book(newer, 64, 64), Booked::Got(_)));
    assert_eq!(link.book(5, 64, 64), Booked::Gone { newer });
    let mut lane = LineLane::default();
    let end = lane.reserve(&link, 5 * frame_ns, 64, 0);
    assert_eq!(end, 6 * frame_ns + 64, "moved out of the gone frame");
}

#[test]
fn credit_spent_without_a_look_at_the_ledger_is_exactly_what_was_booked() {
    // 160 commands of 64 ns in one frame: the lane books a chunk (1,024
    // ns) at a time and spends each to the last nanosecond, so the frame
    // holds exactly the commands' work after 10 visits.
    let link = Ledger::new(1, 64);
    let mut credit = Credit::default();
    for i in 0..160 {
        credit.charge(&link, i * 64, 64).unwrap();
    }
    assert_eq!(link.booked_at(0), 160 * 64);
    assert_eq!(credit.visits(), 10);
}

#[test]
fn a_command_across_the_end_of_the_frame_spent_from_last_is_charged_to_both() {
    // Spent from frame 0, then a command that ends 32 ns into frame 1:
    // its part in frame 1 is booked there, and what frame 0 has left goes
    // back, so frame 0 holds exactly what was spent in it.
    let link = Ledger::new(1, 64);
    let (frame_ns, _) = link.frame();
    let mut credit = Credit::default();
    credit.charge(&link, 0, 64).unwrap();
    credit.charge(&link, frame_ns - 32, 64).unwrap();
    assert_eq!(link.booked_at(0), 96);
    assert!(link.booked_at(frame_ns) >= 32);
    // The next command in frame 1 spends frame 1's credit: no more booked.
    let booked = link.booked_at(frame_ns);
    credit.charge(&link, frame_ns + 64, 64).unwrap();
    assert_eq!(link.booked_at(frame_ns), booked);
    // A command back in frame 0 (still held, its credit given back) books
    // there again rather than spending frame 1's.
    credit.charge(&link, 200, 64).unwrap();
    assert!(link.booked_at(0) >= 96 + 64);
    assert_eq!(link.booked_at(frame_ns), booked);
}

#[test]
fn sixteen_lanes_offered_more_than_the_resource_get_all_of_it() {
    // 16 queue pairs, each offering 1/16 of 1.2 times what the link (64
    // ns transfers) and the 4 cores (200 ns commands) can do, their
    // commands interleaved in time: credit a lane booked and left
    // unspent would be capacity lost, and the last command would end
    // later than all the work takes; it ends within 1 % of it (and no
    // sooner than a frame before: the last frame's work may overlap).
    let (link, cores) = (Ledger::new(1, 64), Ledger::new(4, 200));
    let mut lanes = vec![(LineLane::default(), CoresLane::new(4)); 16];
    let (n, mut link_last, mut cores_last) = (4_000u64, 0, 0);
    for i in 0..n {
        for (k, (line, mine)) in lanes.iter_mut().enumerate() {
            let t = i * (64 * 16 * 10 / 12) + k as u64;
            link_last = link_last.max(line.reserve(&link, t, 64, t));
            let t = i * (200 * 16 * 10 / 12 / 4) + k as u64;
            cores_last = cores_last.max(mine.take(&cores, t, 200));
        }
    }
    let (link_all, cores_all) = (n * 16 * 64, n * 16 * 200 / 4);
    let (link_frame, cores_frame) = (link.frame().0, cores.frame().0);
    assert!(
        link_last + link_frame >= link_all && link_last <= link_all + link_all / 100,
        "link: {link_last} ns for {link_all}"
    );
    assert!(
        cores_last + cores_frame >= cores_all && cores_last <= cores_all + cores_all / 100,
        "cores: {cores_last} ns for {cores_all}"
    );
}
