//! A member whose own request queue is full: a device under the stack
//! whose queue admits few requests (`queue/nr_requests`) holds that many
//! in flight on average, run after run, while the stack keeps far more
//! in flight than an even share of those. Its I/Os then wait for a free
//! request before the kernel counts them, so no time per I/O shows it —
//! only the queue at its size while the stack has more to give it.

use super::finding::{StackFinding, MIN_IOS};
use ssdready_measured::record::RunRecord;
use ssdready_measured::stack_layers::{short_kind, MemberCounters, Stack};

/// A queue holding this share of its size on average is full.
pub const FULL_SHARE: f64 = 0.8;
/// A run can fill a member's queue where the member's even share of the
/// stack's in-flight I/Os is at least this many times its queue size.
pub const DEEPER: f64 = 2.0;

/// Each physical member with a small queue found full on more than half
/// of the runs deep enough to fill it.
pub fn full_queues(
    stack: &Stack,
    judged: &[&(&RunRecord, &[MemberCounters])],
) -> Vec<StackFinding> {
    let serving = stack.serving();
    let n = serving.physical.len().max(1) as f64;
    let mut out = Vec::new();
    for l in stack
        .layers
        .iter()
        .filter(|l| serving.physical.contains(&l.disk))
    {
        let Some(q) = l.nr_requests.filter(|q| *q > 0) else {
            continue;
        };
        let deep: Vec<(&RunRecord, &MemberCounters)> = judged
            .iter()
            .filter(|(r, _)| {
                let in_flight = (r.workload.qd.max(1) * r.workload.threads.max(1)) as f64;
                in_flight / n >= DEEPER * q as f64
            })
            .filter_map(|(r, m)| Some((*r, m.iter().find(|c| c.disk == l.disk)?)))
            .filter(|(_, c)| c.ios() >= MIN_IOS && c.window_ms > 0)
            .collect();
        let mean_q = |c: &MemberCounters| c.time_in_queue_ms as f64 / c.window_ms as f64;
        let full: Vec<&(&RunRecord, &MemberCounters)> = deep
            .iter()
            .filter(|(_, c)| mean_q(c) >= FULL_SHARE * q as f64)
            .collect();
        if full.is_empty() || 2 * full.len() <= deep.len() {
            continue;
        }
        let Some((r, c)) = full
            .iter()
            .max_by_key(|(r, _)| r.workload.qd * r.workload.threads.max(1))
        else {
            continue;
        };
        out.push(StackFinding::QueueFull {
            disk: l.disk.clone(),
            layer: short_kind(l),
            nr_requests: q,
            mean_in_flight: mean_q(c),
            stack_in_flight: r.workload.qd.max(1) * r.workload.threads.max(1),
            runs: full.iter().map(|(r, _)| r.id.clone()).collect(),
            judged: deep.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_measured::record::{RunContext, Workload};

    /// md0 (RAID 0) over nullb0, whose queue admits `q` requests, and
    /// nullb1 (64).
    fn md0(q: u32) -> Stack {
        let mut s = crate::stack::ceiling_tests::md0();
        s.layers[1].nr_requests = Some(q);
        s.layers[2].nr_requests = Some(64);
        s
    }

    /// A run at `qd`: each member's I/Os and its mean requests in flight.
    fn run(qd: u32, held: [f64; 2]) -> RunRecord {
        let c = |d: &str, q: f64| MemberCounters {
            disk: d.into(),
            read_ios: 700,
            time_in_queue_ms: (q * 1000.0) as u64,
            io_ticks_ms: 990,
            window_ms: 1000,
            ..Default::default()
        };
        RunRecord {
            id: format!("qd-{qd}"),
            workload: Workload {
                rw: "randread".into(),
                qd,
                threads: 1,
                ..Default::default()
            },
            context: Some(RunContext {
                members: vec![c("nullb0", held[0]), c("nullb1", held[1])],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn judge(stack: &Stack, runs: &[RunRecord]) -> Vec<StackFinding> {
        let with: Vec<(&RunRecord, &[MemberCounters])> = runs
            .iter()
            .map(|r| (r, r.context.as_ref().unwrap().members.as_slice()))
            .collect();
        full_queues(stack, &with.iter().collect::<Vec<_>>())
    }

    #[test]
    fn a_member_holding_its_one_request_while_the_array_has_more_is_its_queue() {
        let runs = [
            run(1, [0.5, 0.0]),
            run(16, [0.97, 0.1]),
            run(32, [0.98, 0.1]),
        ];
        let f = judge(&md0(1), &runs);
        match f.as_slice() {
            [StackFinding::QueueFull {
                disk,
                nr_requests,
                stack_in_flight,
                runs,
                judged,
                ..
            }] => {
                assert_eq!(
                    (disk.as_str(), *nr_requests, *stack_in_flight),
                    ("nullb0", 1, 32)
                );
                assert_eq!(
                    (runs.len(), *judged),
                    (2, 2),
                    "QD 1 cannot fill it: not judged"
                );
                let (words, todo) = f[0].words();
                assert!(
                    words.contains("admits 1 request(s) and held 0.98"),
                    "{words}"
                );
                assert!(todo.contains("nr_requests"), "{todo}");
            }
            other => panic!("{other:?}"),
        }
        // Its queue far from full: nothing.
        assert!(judge(&md0(1), &[run(32, [0.4, 0.1])]).is_empty());
        // A queue the stack's depth cannot fill is not judged.
        assert!(judge(&md0(32), &[run(32, [30.0, 0.1])]).is_empty());
        // Unread queue sizes: nothing said.
        let mut s = md0(1);
        s.layers[1].nr_requests = None;
        assert!(judge(&s, &runs).is_empty());
    }
}
