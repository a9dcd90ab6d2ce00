//! Which member or layer of a stack holds the I/O, from every device's
//! counters over each run: per device its IOPS, bytes, busy fraction and
//! mean time per I/O; then, judged on each run with enough I/O:
//!
//! * a **slow member**: a member of the spreading layer (md's members, a
//!   striped table's devices) whose mean time per I/O, or busy fraction,
//!   is more than [`SLOW_RATIO`] times the median of its peers', adding
//!   at least [`OWN_SHARE`] of the run's latency;
//! * a **slow layer**: a layer whose I/Os took more than [`SLOW_RATIO`]
//!   times all the time of the devices under it, each I/O longer than
//!   theirs (the time is the layer's own: dm-delay, dm-crypt's work, a
//!   loop device's file; a layer faster per I/O than what is under it is
//!   never named);
//! * an **uneven split**: a member given far more or fewer of the I/Os
//!   than an even share;
//! * **read-modify-write**: members read during a write run on RAID 4/5/6;
//! * **misaligned** I/O: the run's block size against the chunk.
//!
//! A member or layer is named when it holds on more than half of the
//! runs judged — on all their I/O, or else on one direction's alone (a
//! member slow only for writes, named "for writes"); when nothing does, the answer is "not identified", never
//! a guess. The counters are whole milliseconds of summed time, so every
//! comparison allows each mean its rounding (1 ms over its I/Os).

pub use super::finding::{StackFinding, MIN_IOS};
use serde::{Deserialize, Serialize};
use ssdready_measured::record::RunRecord;
use ssdready_measured::stack_layers::{short_kind, LayerKind, MemberCounters, Stack, StackLayer};

/// How far above its peers' (or the device under it) a member's (or
/// layer's) time per I/O must be to be named slow.
pub const SLOW_RATIO: f64 = 2.0;
/// Summed milliseconds a slow device needs in a run (below this its mean
/// is mostly rounding).
pub const MIN_TICKS_MS: u64 = 10;
/// A layer's own time per I/O must be at least this share of the run's
/// mean latency to be said to hold the I/O.
pub const OWN_SHARE: f64 = 0.2;
/// A member's share of the I/Os outside this fraction of an even share,
/// either way, is an uneven split.
pub const UNEVEN: f64 = 0.5;

/// One device's figures over one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberFigures {
    pub disk: String,
    pub ios: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub iops: f64,
    pub bytes: u64,
    pub bytes_per_s: f64,
    /// `io_ticks` over the window, percent.
    pub busy_pct: f64,
    /// Summed time of its I/Os over their number (read and write ticks).
    pub mean_ms_per_io: Option<f64>,
    /// Mean I/Os in its queue (`time_in_queue` over the window).
    pub mean_queue: f64,
}

impl MemberFigures {
    pub fn of(c: &MemberCounters) -> MemberFigures {
        let s = c.window_ms.max(1) as f64 / 1000.0;
        let ios = c.ios();
        MemberFigures {
            disk: c.disk.clone(),
            ios,
            read_ios: c.read_ios,
            write_ios: c.write_ios,
            iops: ios as f64 / s,
            bytes: c.bytes(),
            bytes_per_s: c.bytes() as f64 / s,
            busy_pct: (100.0 * c.io_ticks_ms as f64 / c.window_ms.max(1) as f64).min(100.0),
            mean_ms_per_io: (ios > 0).then(|| c.ticks_ms() as f64 / ios as f64),
            mean_queue: c.time_in_queue_ms as f64 / c.window_ms.max(1) as f64,
        }
    }

    /// The highest and lowest mean its whole milliseconds allow.
    fn mean_bounds(&self, ticks: u64) -> (f64, f64) {
        let n = self.ios.max(1) as f64;
        (ticks.saturating_sub(1) as f64 / n, (ticks + 1) as f64 / n)
    }
}

/// One run's figures, each device of the stack.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    pub run: String,
    /// The physical member this run read alone, or `every member at
    /// once` (the `ceiling` sweep): not the stack at work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone: Option<String>,
    pub members: Vec<MemberFigures>,
    /// Each layer's kernel threads' CPU over the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers_cpu: Vec<super::layer_cpu::LayerCpu>,
    /// The kernel profile's stack layers (md, device-mapper, crypto), where
    /// the run was profiled: (layer, share of busy %, ns per I/O).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: super::layer_cpu::ProfileLayers,
}

/// The stack's judgement (`figures.stack` in study.json).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackJudgement {
    /// The layer whose members are compared, where one spreads the I/O.
    pub spreading_layer: Option<String>,
    pub runs: Vec<RunFigures>,
    pub findings: Vec<StackFinding>,
    /// The stack against its physical members read alone, where the study
    /// read them (`ceiling` sweep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<super::ceiling::StackCeiling>,
}

impl StackJudgement {
    /// The run of the stack at work (no member read alone) whose busiest
    /// device moved the most I/O: the one shown.
    pub fn busiest(&self) -> Option<&RunFigures> {
        self.runs
            .iter()
            .filter(|r| r.alone.is_none())
            .max_by_key(|r| r.members.iter().map(|m| m.ios).max().unwrap_or(0))
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(match n % 2 {
        1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    })
}

/// Counters of `disk` in one run.
fn counters<'a>(cs: &'a [MemberCounters], disk: &str) -> Option<&'a MemberCounters> {
    cs.iter().find(|c| c.disk == disk)
}

/// The slow members of one run, among `peers`.
/// A slow member's figures: its mean ms per I/O, its peers' median, its
/// busy percent, its peers' median, its I/Os.
type Slow = (f64, f64, f64, f64, u64);

/// Each member judged in one run (≥ [`MIN_IOS`] I/Os, with a peer that
/// had as many), with its figures where it was slow: its time per I/O
/// more than [`SLOW_RATIO`] times its peers', the time it adds over
/// theirs at least [`OWN_SHARE`] of the run's mean latency `lat_ms`
/// (where the run has one: a few microseconds more than a member that
/// counts none are not what the I/O waits for); or, where `busy` counts,
/// its busy fraction more than [`SLOW_RATIO`] times theirs.
fn slow_members(
    cs: &[MemberCounters],
    peers: &[String],
    lat_ms: Option<f64>,
    busy: bool,
) -> Vec<(String, Option<Slow>)> {
    let all: Vec<&MemberCounters> = peers.iter().filter_map(|p| counters(cs, p)).collect();
    let mut out = Vec::new();
    for c in &all {
        let f = MemberFigures::of(c);
        let others: Vec<&&MemberCounters> = all
            .iter()
            .filter(|o| o.disk != c.disk && o.ios() >= MIN_IOS)
            .collect();
        if f.ios < MIN_IOS || others.is_empty() {
            continue;
        }
        if c.ticks_ms() < MIN_TICKS_MS {
            out.push((c.disk.clone(), None));
            continue;
        }
        let hi = |o: &MemberCounters| MemberFigures::of(o).mean_bounds(o.ticks_ms()).1;
        let (Some(med_hi), Some(med_busy)) = (
            median(others.iter().map(|o| hi(o)).collect()),
            median(
                others
                    .iter()
                    .map(|o| MemberFigures::of(o).busy_pct)
                    .collect(),
            ),
        ) else {
            continue;
        };
        let lo = f.mean_bounds(c.ticks_ms()).0;
        let matters = lat_ms.is_none_or(|lat| lo - med_hi >= OWN_SHARE * lat);
        let slow_time = lo > SLOW_RATIO * med_hi && matters;
        let slow_busy =
            busy && f.busy_pct >= 20.0 && f.busy_pct > SLOW_RATIO * med_busy && c.window_ms >= 100;
        if !(slow_time || slow_busy) {
            out.push((c.disk.clone(), None));
            continue;
        }
        {
            let med_mean = median(
                others
                    .iter()
                    .filter_map(|o| MemberFigures::of(o).mean_ms_per_io)
                    .collect(),
            )
            .unwrap_or(0.0);
            out.push((
                c.disk.clone(),
                Some((
                    f.mean_ms_per_io.unwrap_or(0.0),
                    med_mean,
                    f.busy_pct,
                    med_busy,
                    f.ios,
                )),
            ));
        }
    }
    out
}

/// Layers over a single device whose own time per I/O dominates.
/// A slow layer's figures: the devices under it, its mean ms per I/O,
/// theirs, its I/Os.
type SlowLayer = (String, f64, f64, u64);

/// Each layer judged in one run (≥ [`MIN_IOS`] I/Os on it and under it),
/// with its figures where its own time held the I/O: more than
/// [`SLOW_RATIO`] times all the time of the devices under it, more time
/// per I/O than theirs (each at its least favourable rounding: a layer
/// with fewer I/Os than the devices under it is then slower per I/O too),
/// and its own time per I/O at least [`OWN_SHARE`] of the run's mean latency `lat_ms`
/// (where the run has one). The layer's I/Os are read from `cs` (one
/// direction's, where judged so), the devices under it from `all` (every
/// I/O: a parity array's write reads its members too, and that time is
/// not the layer's own).
fn slow_layers(
    stack: &Stack,
    cs: &[MemberCounters],
    all: &[MemberCounters],
    lat_ms: Option<f64>,
) -> Vec<(String, Option<SlowLayer>)> {
    let mut out = Vec::new();
    for l in stack.layers.iter().filter(|l| !l.under.is_empty()) {
        let Some(c) = counters(cs, &l.disk) else {
            continue;
        };
        let under: Vec<&MemberCounters> = l.under.iter().filter_map(|u| counters(all, u)).collect();
        let (u_ios, u_ticks) = under
            .iter()
            .fold((0, 0), |(i, t), u| (i + u.ios(), t + u.ticks_ms()));
        if c.ios() < MIN_IOS || u_ios < MIN_IOS {
            continue;
        }
        // Its whole time against all the time of the devices under it (an
        // I/O split over members is one I/O here and several there), each
        // at its least favourable rounding.
        let rounding = under.len() as u64;
        let longer = c.ticks_ms() >= MIN_TICKS_MS
            && c.ticks_ms().saturating_sub(1) as f64 > SLOW_RATIO * (u_ticks + rounding) as f64;
        // And slower per I/O than they are, beyond the rounding: a layer
        // whose I/Os each take less time than theirs (a loop device whose
        // reads mostly hit the page cache, over a disk that reads ahead in
        // a few long I/Os) is not what holds the I/O, whatever its sum.
        let slower = c.ticks_ms().saturating_sub(1) as f64 / c.ios() as f64
            > (u_ticks + rounding) as f64 / u_ios as f64;
        let own_ms = c.ticks_ms().saturating_sub(u_ticks + rounding) as f64 / c.ios() as f64;
        let matters = lat_ms.is_none_or(|lat| own_ms >= OWN_SHARE * lat);
        let found = (longer && slower && matters).then(|| {
            let names: Vec<&str> = under.iter().map(|u| u.disk.as_str()).collect();
            (
                names.join(", "),
                c.ticks_ms() as f64 / c.ios() as f64,
                u_ticks as f64 / u_ios as f64,
                c.ios(),
            )
        });
        out.push((l.disk.clone(), found));
    }
    out
}

/// The member whose share of the I/Os is farthest from even, where it is
/// far: (disk, share %, even %, its I/Os).
fn uneven(cs: &[MemberCounters], peers: &[String]) -> Option<(String, f64, f64, u64)> {
    let ios: Vec<(String, u64)> = peers
        .iter()
        .map(|p| (p.clone(), counters(cs, p).map_or(0, |c| c.ios())))
        .collect();
    let total: u64 = ios.iter().map(|x| x.1).sum();
    if ios.len() < 2 || total < MIN_IOS * ios.len() as u64 {
        return None;
    }
    let even = 100.0 / ios.len() as f64;
    let share = |k: u64| 100.0 * k as f64 / total as f64;
    ios.into_iter()
        .map(|(d, k)| (d, share(k), even, k))
        .filter(|x| (x.1 - even).abs() > UNEVEN * even)
        .max_by(|a, b| (a.1 - even).abs().total_cmp(&(b.1 - even).abs()))
}

fn kind_of(stack: &Stack, disk: &str) -> String {
    stack
        .layer(disk)
        .map_or_else(|| disk.to_string(), short_kind)
}

/// The array (md level and chunk) of the spreading layer.
fn array(l: &StackLayer) -> (Option<&str>, u64) {
    match &l.kind {
        LayerKind::Md {
            level, chunk_bytes, ..
        } => (level.as_deref(), chunk_bytes.unwrap_or(0)),
        LayerKind::Dm { targets, .. } => {
            // striped: "#stripes chunk_sectors dev off …"
            let chunk = targets
                .iter()
                .find(|t| t.target_type == "striped")
                .and_then(|t| t.params.split_whitespace().nth(1)?.parse::<u64>().ok())
                .map_or(0, |s| s * 512);
            (None, chunk)
        }
        _ => (None, 0),
    }
}

/// Whether I/Os of `bs` cross chunks of `chunk` bytes (offsets are
/// multiples of bs).
pub fn misaligned(bs: u64, chunk: u64) -> bool {
    chunk > 0
        && bs > 0
        && if bs < chunk {
            !chunk.is_multiple_of(bs)
        } else {
            !bs.is_multiple_of(chunk)
        }
}

/// What held on more than half of the runs where it was judged: (name,
/// the runs it held on, the figures of the one where it moved the most
/// I/O, the runs it was judged on). Each entry is (name, run, its I/Os,
/// its figures where it held).
fn majority<T: Clone>(
    hits: Vec<(String, String, u64, Option<T>)>,
) -> Vec<(String, Vec<String>, T, usize)> {
    let mut names: Vec<String> = hits.iter().map(|h| h.0.clone()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| {
            let mine: Vec<&(String, String, u64, Option<T>)> =
                hits.iter().filter(|h| h.0 == n).collect();
            let held: Vec<&&(String, String, u64, Option<T>)> =
                mine.iter().filter(|h| h.3.is_some()).collect();
            let runs: Vec<String> = held.iter().map(|h| h.1.clone()).collect();
            // The first of the runs with the most I/O.
            let most = held.iter().rev().max_by_key(|h| h.2)?.3.clone()?;
            (2 * held.len() > mine.len()).then_some((n, runs, most, mine.len()))
        })
        .collect()
}

/// Every md array of the stack missing disks or with a faulty member.
fn degraded(stack: &Stack) -> Vec<StackFinding> {
    stack
        .layers
        .iter()
        .filter_map(|l| match &l.kind {
            LayerKind::Md {
                level,
                degraded,
                members,
                ..
            } => {
                let faulty: Vec<String> = members
                    .iter()
                    .filter(|m| m.state.as_deref().is_some_and(|s| s.contains("faulty")))
                    .map(|m| m.disk.clone())
                    .collect();
                let missing = degraded.unwrap_or(0);
                (missing > 0 || !faulty.is_empty()).then(|| StackFinding::Degraded {
                    disk: l.disk.clone(),
                    level: level.clone().unwrap_or_else(|| "md".into()),
                    missing,
                    faulty,
                })
            }
            _ => None,
        })
        .collect()
}

/// Which of a run's I/Os a judgement looks at: all of them, or one
/// direction's alone. A member slow only for writes (a write delay, a
/// device slow to program) is fast on the reads that make most runs: it is
/// judged again on the runs that wrote to it, with their writes' time.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dir {
    All,
    Writes,
    Reads,
}

impl Dir {
    /// Its name in a finding (none for all I/Os).
    fn name(self) -> Option<String> {
        match self {
            Dir::All => None,
            Dir::Writes => Some("writes".into()),
            Dir::Reads => Some("reads".into()),
        }
    }

    /// The counters of this direction's I/Os alone. The busy time is the
    /// two directions' together, kept as it is (and not judged alone).
    fn view(self, cs: &[MemberCounters]) -> Vec<MemberCounters> {
        cs.iter()
            .map(|c| match self {
                Dir::All => c.clone(),
                Dir::Writes => MemberCounters {
                    read_ios: 0,
                    read_merges: 0,
                    read_sectors: 0,
                    read_ticks_ms: 0,
                    ..c.clone()
                },
                Dir::Reads => MemberCounters {
                    write_ios: 0,
                    write_merges: 0,
                    write_sectors: 0,
                    write_ticks_ms: 0,
                    ..c.clone()
                },
            })
            .collect()
    }
}

/// Slow members and slow layers over the runs judged: on all their I/O,
/// then, for what that did not name, on writes alone and on reads alone.
fn slow(
    stack: &Stack,
    peers: &[String],
    judged: &[&(&RunRecord, &[MemberCounters])],
) -> Vec<StackFinding> {
    let mut out: Vec<StackFinding> = Vec::new();
    for dir in [Dir::All, Dir::Writes, Dir::Reads] {
        let (mut slow, mut layers) = (Vec::new(), Vec::new());
        for (r, m) in judged {
            let v = dir.view(m);
            let ios = |d: &str| counters(&v, d).map_or(0, |c| c.ios());
            let lat_ms = (r.summary.lat_mean_ns > 0.0).then(|| r.summary.lat_mean_ns / 1e6);
            for (d, s) in slow_members(&v, peers, lat_ms, dir == Dir::All) {
                slow.push((d.clone(), r.id.clone(), ios(&d), s));
            }
            for (d, s) in slow_layers(stack, &v, m, lat_ms) {
                layers.push((d.clone(), r.id.clone(), ios(&d), s));
            }
        }
        let named = |out: &[StackFinding], member: bool, disk: &str| {
            out.iter().any(|f| {
                f.disk() == Some(disk)
                    && matches!(
                        (member, f),
                        (true, StackFinding::SlowMember { .. })
                            | (false, StackFinding::SlowLayer { .. })
                    )
            })
        };
        let mut found = Vec::new();
        for (disk, runs, s, judged) in majority(slow) {
            if named(&out, true, &disk) {
                continue;
            }
            found.push(StackFinding::SlowMember {
                layer: kind_of(stack, &disk),
                disk,
                direction: dir.name(),
                mean_ms_per_io: s.0,
                peers_median_ms_per_io: s.1,
                busy_pct: s.2,
                peers_median_busy_pct: s.3,
                ios: s.4,
                runs,
                judged,
            });
        }
        for (disk, runs, s, judged) in majority(layers) {
            if named(&out, false, &disk) {
                continue;
            }
            found.push(StackFinding::SlowLayer {
                layer: kind_of(stack, &disk),
                disk,
                direction: dir.name(),
                over: s.0,
                mean_ms_per_io: s.1,
                under_mean_ms_per_io: s.2,
                ios: s.3,
                runs,
                judged,
            });
        }
        out.extend(found);
    }
    out
}

/// An uneven split over the runs judged, judged on every run with enough
/// I/O.
fn uneven_split(
    peers: &[String],
    judged: &[&(&RunRecord, &[MemberCounters])],
) -> Vec<StackFinding> {
    let n = judged.len();
    let split = judged
        .iter()
        .filter_map(|(r, m)| uneven(m, peers).map(|s| (s.0.clone(), r.id.clone(), s.3, Some(s))))
        .collect();
    majority(split)
        .into_iter()
        .filter(|(_, runs, _, _)| 2 * runs.len() > n)
        .map(|(disk, runs, s, _)| StackFinding::UnevenSplit {
            disk,
            share_pct: s.1,
            even_pct: s.2,
            ios: s.3,
            runs,
            judged: n,
        })
        .collect()
}

/// Judge the stack from its runs' counters (None without a stack).
pub fn judge(stack: &Stack, runs: &[RunRecord]) -> Option<StackJudgement> {
    if !stack.is_stacked() {
        return None;
    }
    let measured: Vec<(&RunRecord, &[MemberCounters])> = runs
        .iter()
        .filter(|r| r.error.is_none())
        .filter_map(|r| Some((r, r.context.as_ref()?.members.as_slice())))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    let spreading = stack.spreading_layer();
    let peers: Vec<String> = spreading.map(|l| l.under.clone()).unwrap_or_default();
    let mut j = StackJudgement {
        spreading_layer: spreading.map(|l| l.disk.clone()),
        runs: measured
            .iter()
            .map(|(r, m)| RunFigures {
                run: r.id.clone(),
                alone: super::ceiling::member_alone(stack, r).map(String::from),
                members: m.iter().map(MemberFigures::of).collect(),
                layers_cpu: super::layer_cpu::of_run(stack, r),
                profile: super::layer_cpu::profile_of(r),
            })
            .collect(),
        findings: Vec::new(),
        ceiling: super::ceiling::ceiling(stack, runs),
    };
    // A member read alone is not the stack at work: its runs are not judged.
    let judged: Vec<&(&RunRecord, &[MemberCounters])> = measured
        .iter()
        .filter(|(r, _)| super::ceiling::member_alone(stack, r).is_none())
        .filter(|(_, m)| m.iter().any(|c| c.ios() >= MIN_IOS))
        .collect();
    let n = judged.len();
    j.findings = degraded(stack);
    j.findings.extend(slow(stack, &peers, &judged));
    j.findings.extend(uneven_split(&peers, &judged));
    j.findings.extend(super::queue::full_queues(stack, &judged));
    let at_work: Vec<super::layer_cpu::AtWork> = judged
        .iter()
        .map(|x| super::layer_cpu::AtWork::of(stack, x.0))
        .collect();
    j.findings
        .extend(super::layer_cpu::saturated(stack, &at_work));
    if let Some(l) = spreading {
        parity_and_alignment(&mut j, l, &peers, &judged);
    }
    let held_back = j.ceiling.as_ref().is_some_and(|c| c.held_back);
    if j.findings.is_empty() && !held_back {
        j.findings.push(StackFinding::NotIdentified {
            why: match n {
                0 => format!("no run gave any device of the stack {MIN_IOS} I/Os to judge"),
                _ => format!(
                    "over {n} runs no member's or layer's time per I/O or busy fraction was more than {SLOW_RATIO}x its peers', the I/O split evenly, and no run read members to write or crossed chunks"
                ),
            },
        });
    }
    Some(j)
}

/// Read-modify-write on RAID 4/5/6 and I/O misaligned with the chunk.
fn parity_and_alignment(
    j: &mut StackJudgement,
    l: &StackLayer,
    peers: &[String],
    judged: &[&(&RunRecord, &[MemberCounters])],
) {
    let (level, chunk) = array(l);
    let sum = |m: &[MemberCounters], f: fn(&MemberCounters) -> u64| -> u64 {
        peers.iter().filter_map(|p| counters(m, p)).map(f).sum()
    };
    if let Some(level) = level.filter(|v| matches!(*v, "raid4" | "raid5" | "raid6")) {
        let writes: Vec<_> = judged
            .iter()
            .filter(|(r, _)| matches!(r.workload.rw.as_str(), "write" | "randwrite"))
            .filter(|(_, m)| {
                let (rd, wr) = (sum(m, |c| c.read_ios), sum(m, |c| c.write_ios));
                wr > 0 && rd * 100 >= wr
            })
            .collect();
        if !writes.is_empty() {
            j.findings.push(StackFinding::ReadModifyWrite {
                level: level.to_string(),
                member_reads: writes.iter().map(|(_, m)| sum(m, |c| c.read_ios)).sum(),
                member_writes: writes.iter().map(|(_, m)| sum(m, |c| c.write_ios)).sum(),
                runs: writes.iter().map(|(r, _)| r.id.clone()).collect(),
            });
        }
    }
    let crossing: Vec<_> = judged
        .iter()
        .filter(|(r, _)| misaligned(r.workload.bs, chunk))
        .collect();
    if let Some((r, _)) = crossing.first() {
        j.findings.push(StackFinding::Misaligned {
            bs: r.workload.bs,
            chunk_bytes: chunk,
            array_ios: crossing
                .iter()
                .filter_map(|(_, m)| counters(m, &l.disk))
                .map(|c| c.ios())
                .sum(),
            member_ios: crossing.iter().map(|(_, m)| sum(m, |c| c.ios())).sum(),
            runs: crossing.iter().map(|(r, _)| r.id.clone()).collect(),
        });
    }
}
