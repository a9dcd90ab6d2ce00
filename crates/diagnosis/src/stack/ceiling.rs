//! The stack's ceiling against its members measured alone: from the
//! `ceiling` sweep's runs (each physical member of the stack read alone,
//! in turns with the stack itself, and all of them at once), three
//! comparisons, each with the rounds' spread as its error:
//!
//! - **small requests** (4 KiB random reads at one depth): the stack's
//!   IOPS against the sum of its members' IOPS alone. A stack delivering
//!   less than [`HELD_BACK_PCT`] of its members beyond that error is held
//!   back by its own layers — the RAID controller's ceiling of Samsung's
//!   "System-wide issues for efficient use of E-SSD", in software;
//! - **large requests** (sequential reads of a stripe's width): the
//!   stack's bandwidth against the sum of its members' bandwidth alone
//!   ([`SizeCeiling`]); the paper's controllers held small requests while
//!   bandwidth kept scaling: a cost per request, not per byte;
//! - **the members all at once** ([`Together`]): when they deliver clearly
//!   less than the sum of each alone (below [`SHARED_PCT`] beyond the
//!   spread), something they share — a host controller, a bus, the CPUs —
//!   holds them, and the stack is judged against that instead.

use serde::{Deserialize, Serialize};
use ssdready_measured::curve::mean;
use ssdready_measured::record::RunRecord;
use ssdready_measured::stack_layers::{short_kind, LayerKind, Stack};

/// Below this share of its members' sum (beyond the rounds' spread) the
/// stack is said to be held back by its own layers.
pub const HELD_BACK_PCT: f64 = 70.0;
/// Below this share of the sum of each alone (beyond the spread), the
/// members read all at once are held by something they share.
pub const SHARED_PCT: f64 = 85.0;
/// The sweep whose runs this reads.
pub const SWEEP: &str = "ceiling";
/// What [`member_alone`] answers for the run that read every physical
/// member at once: not the stack at work either.
pub const TOGETHER: &str = "every member at once";
/// The large requests' size bounds and depth (see [`bandwidth_bs`]).
pub const BANDWIDTH_MIN_BS: u64 = 128 << 10;
pub const BANDWIDTH_MAX_BS: u64 = 1 << 20;
pub const BANDWIDTH_QD: u32 = 8;

/// The stack against its members alone (`figures.stack.ceiling`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackCeiling {
    /// The stack's top device (`md0`).
    pub stack: String,
    /// What it is, short (`md raid0`).
    pub layer: String,
    pub bs: u64,
    pub qd: u32,
    /// The stack's IOPS, mean over the rounds.
    pub stack_iops: f64,
    /// Each physical member's IOPS read alone, mean over the rounds.
    pub members: Vec<MemberAlone>,
    /// The stack's own members, directly under it (`dm-0`, `dm-1`): more
    /// than its physical members where several lie on one disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub under: Vec<String>,
    /// The physical disks that two or more of those members lie on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    /// The members' IOPS summed in each round, mean over the rounds.
    pub members_sum_iops: f64,
    /// The stack's IOPS over its members' sum, percent: mean of the
    /// rounds' ratios.
    pub ratio_pct: f64,
    /// Half the spread of the rounds' ratios, percent (0 with one round).
    pub ratio_err_pct: f64,
    /// Complete rounds (the stack and every member measured).
    pub rounds: usize,
    /// Whether the stack's own layers hold it back: its ratio to what its
    /// members give — each alone, or all at once where something they
    /// share holds them ([`Together::shared`]) — below [`HELD_BACK_PCT`]
    /// beyond its error.
    pub held_back: bool,
    pub runs: Vec<String>,
    /// Large sequential reads: the stack's bandwidth against its members'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<SizeCeiling>,
    /// Every physical member read at once (two or more members).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<Together>,
    /// The member that, within the stack's runs, gave the largest share of
    /// what it gives alone: where that share is [`MEMBER_FULL_PCT`] or
    /// more, the member, not the stack's layers, is the ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fullest: Option<MemberFull>,
}

/// Within the stack's runs, a member's I/O rate (its own counters) against
/// what it gives read alone in the same round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberFull {
    pub disk: String,
    /// Its IOPS within the stack's runs, mean over the rounds.
    pub in_stack_iops: f64,
    /// Its IOPS read alone, mean over the rounds.
    pub alone_iops: f64,
    /// The first over the second, percent, mean of the rounds'.
    pub pct: f64,
    pub pct_err: f64,
    /// At least [`MEMBER_FULL_PCT`] beyond its error: the member is full.
    pub full: bool,
}

/// A member giving this share of its rate alone inside the stack is full:
/// every I/O of the stack that reaches it waits its turn there.
pub const MEMBER_FULL_PCT: f64 = 70.0;

/// One physical member read alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberAlone {
    pub disk: String,
    pub iops: f64,
    /// What was read for it where not its node: the backing file of the
    /// loop device on it ([`Stack::loop_file_on`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Large sequential reads of the stack and of each member alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeCeiling {
    pub bs: u64,
    pub qd: u32,
    /// The stack's bytes per second, mean over the rounds.
    pub stack_bytes_per_s: f64,
    /// Each member's bytes per second read alone, mean over the rounds.
    pub members: Vec<MemberBandwidth>,
    /// The members' bytes per second summed in each round, mean.
    pub members_sum_bytes_per_s: f64,
    /// The stack's over the members' sum, percent, mean of the rounds'.
    pub ratio_pct: f64,
    /// Half the rounds' spread, percent.
    pub ratio_err_pct: f64,
    pub rounds: usize,
    /// Below [`HELD_BACK_PCT`] beyond its error.
    pub held_back: bool,
    pub runs: Vec<String>,
}

/// One member's bandwidth read alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberBandwidth {
    pub disk: String,
    pub bytes_per_s: f64,
}

/// Every physical member read at once (one job each, the same depth).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Together {
    pub qd: u32,
    /// Their IOPS together, mean over the rounds.
    pub iops: f64,
    /// Each member's share of it, from its own counters over the run
    /// (`/sys/block/X/stat`), mean over the rounds (none where unread).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberAlone>,
    /// Their IOPS together over the sum of each alone in the same round,
    /// percent, mean of the rounds'.
    pub ratio_pct: f64,
    pub ratio_err_pct: f64,
    /// Below [`SHARED_PCT`] beyond its error: something they share holds
    /// them.
    pub shared: bool,
    /// The stack's IOPS over the members' together in the same round,
    /// percent, mean of the rounds'.
    pub stack_ratio_pct: f64,
    pub stack_ratio_err_pct: f64,
    pub rounds: usize,
    pub runs: Vec<String>,
}

/// What a `ceiling` run read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read<'a> {
    /// The stack itself.
    Stack,
    /// One physical member alone: its disk.
    Member(&'a str),
    /// Every physical member at once.
    Together,
}

/// The physical member `path` reads alone (`/dev/nullb0` → `nullb0`; a
/// loop device's backing file → the disk it lies on).
fn physical<'a>(stack: &'a Stack, path: &str) -> Option<&'a str> {
    stack
        .physical
        .iter()
        .find(|p| stack.read_alone(p) == path)
        .map(String::as_str)
}

/// What `r` read, where it is a `ceiling` run.
pub fn read_of<'a>(stack: &'a Stack, r: &RunRecord) -> Option<Read<'a>> {
    if r.sweep != SWEEP {
        return None;
    }
    let disks: Option<Vec<&str>> = r
        .workload
        .targets
        .iter()
        .map(|p| physical(stack, p))
        .collect();
    match (r.workload.targets.len(), disks) {
        (1, Some(d)) => Some(Read::Member(d[0])),
        (1, None) => Some(Read::Stack),
        (n, Some(_)) if n >= 2 => Some(Read::Together),
        _ => None,
    }
}

/// Whether `r` read the physical members and not the stack: the member it
/// read alone, or [`TOGETHER`] for the run that read all at once.
pub fn member_alone<'a>(stack: &'a Stack, r: &RunRecord) -> Option<&'a str> {
    match read_of(stack, r)? {
        Read::Member(d) => Some(d),
        Read::Together => Some(TOGETHER),
        Read::Stack => None,
    }
}

/// The block size of the large reads: a whole stripe (chunk × data disks)
/// where the stack spreads I/O in chunks, at least [`BANDWIDTH_MIN_BS`]
/// (whole stripes) and at most [`BANDWIDTH_MAX_BS`] (whole chunks where
/// one fits); else [`BANDWIDTH_MIN_BS`].
pub fn bandwidth_bs(stack: &Stack) -> u64 {
    let Some((chunk, data)) = stripe(stack) else {
        return BANDWIDTH_MIN_BS;
    };
    let width = chunk * u64::from(data.max(1));
    let bs = width * BANDWIDTH_MIN_BS.div_ceil(width);
    match bs {
        b if b <= BANDWIDTH_MAX_BS => b,
        _ if chunk <= BANDWIDTH_MAX_BS => BANDWIDTH_MAX_BS / chunk * chunk,
        _ => BANDWIDTH_MAX_BS,
    }
}

/// The spreading layer's chunk in bytes and its data disks (md's level and
/// disks; a dm `striped` target's stripes), where it has a chunk.
pub fn stripe(stack: &Stack) -> Option<(u64, u32)> {
    match &stack.spreading_layer()?.kind {
        LayerKind::Md {
            level,
            chunk_bytes,
            raid_disks,
            ..
        } => {
            let chunk = chunk_bytes.filter(|c| *c > 0)?;
            let n = (*raid_disks)?;
            let data = match level.as_deref()? {
                "raid0" => n,
                "raid4" | "raid5" => n.saturating_sub(1),
                "raid6" => n.saturating_sub(2),
                "raid10" => n / 2,
                _ => return None,
            };
            Some((chunk, data.max(1)))
        }
        LayerKind::Dm { targets, .. } => {
            let t = targets.iter().find(|t| t.target_type == "striped")?;
            let mut f = t.params.split_whitespace();
            let stripes: u32 = f.next()?.parse().ok()?;
            let sectors: u64 = f.next()?.parse().ok()?;
            (sectors > 0).then_some((sectors * 512, stripes.max(1)))
        }
        _ => None,
    }
}

/// The mean of the ratios and half their spread.
fn spread(ratios: &[f64]) -> (f64, f64) {
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    (mean(ratios), (hi - lo).max(0.0) / 2.0)
}

fn pct(a: f64, b: f64) -> f64 {
    100.0 * a / b.max(f64::MIN_POSITIVE)
}

/// One complete round of one size: its number, the stack's figure, each
/// member's alone (in the stack's order), and the runs.
struct Round {
    n: u32,
    stack: f64,
    members: Vec<f64>,
    runs: Vec<String>,
}

/// The complete rounds among `runs` (the stack and every member alone),
/// each figure read by `f`.
fn rounds(stack: &Stack, runs: &[&RunRecord], f: fn(&RunRecord) -> f64) -> Vec<Round> {
    let mut ns: Vec<u32> = runs.iter().map(|r| r.repeat).collect();
    ns.sort_unstable();
    ns.dedup();
    let mut out = Vec::new();
    for n in ns {
        let of = |w: Read| {
            runs.iter()
                .find(|r| r.repeat == n && read_of(stack, r) == Some(w))
        };
        let Some(s) = of(Read::Stack) else { continue };
        let members: Option<Vec<&&RunRecord>> = stack
            .physical
            .iter()
            .map(|d| of(Read::Member(d.as_str())))
            .collect();
        let Some(members) = members else { continue };
        out.push(Round {
            n,
            stack: f(s),
            members: members.iter().map(|r| f(r)).collect(),
            runs: std::iter::once(s)
                .chain(members)
                .map(|r| r.id.clone())
                .collect(),
        });
    }
    out
}

/// The physical disks under `disk` (itself, where nothing is under it).
fn physical_under(stack: &Stack, disk: &str) -> Vec<String> {
    let mut todo = vec![disk.to_string()];
    let mut out = Vec::new();
    let mut seen = 0;
    while let Some(d) = todo.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        match stack.layer(&d).filter(|l| !l.under.is_empty()) {
            Some(l) => todo.extend(l.under.iter().cloned()),
            None if !out.contains(&d) => out.push(d),
            None => {}
        }
    }
    out
}

/// The physical disks that two or more of the target's own members lie
/// on (two dm-linear halves of one disk under an md array).
fn shared_disks(stack: &Stack) -> Vec<String> {
    let Some(top) = stack.layer(&stack.target) else {
        return Vec::new();
    };
    let under: Vec<Vec<String>> = top.under.iter().map(|u| physical_under(stack, u)).collect();
    stack
        .physical
        .iter()
        .filter(|p| under.iter().filter(|u| u.contains(p)).count() >= 2)
        .cloned()
        .collect()
}

/// The members' figures summed in each round, mean over the rounds.
fn members_sum(per: &[Round]) -> f64 {
    mean(
        &per.iter()
            .map(|r| r.members.iter().sum())
            .collect::<Vec<f64>>(),
    )
}

/// Every run of the rounds, in order.
fn every_run(per: &[Round]) -> Vec<String> {
    per.iter().flat_map(|r| r.runs.clone()).collect()
}

/// Each member's mean over the rounds.
fn member_means(per: &[Round]) -> Vec<f64> {
    (0..per.first().map_or(0, |r| r.members.len()))
        .map(|i| mean(&per.iter().map(|r| r.members[i]).collect::<Vec<_>>()))
        .collect()
}

/// The ceiling from the runs (None without a complete round of 4 KiB
/// random reads).
pub fn ceiling(stack: &Stack, runs: &[RunRecord]) -> Option<StackCeiling> {
    // A member the array marked faulty is no part of what it can give.
    let stack = &stack.serving();
    let ok: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| read_of(stack, r).is_some() && r.error.is_none() && r.summary.iops > 0.0)
        .collect();
    let small: Vec<&RunRecord> = ok
        .iter()
        .copied()
        .filter(|r| r.workload.rw == "randread")
        .collect();
    let per = rounds(stack, &small, |r| r.summary.iops);
    let first = small.first()?;
    if per.is_empty() {
        return None;
    }
    let (ratio_pct, ratio_err_pct) = spread(
        &per.iter()
            .map(|r| pct(r.stack, r.members.iter().sum()))
            .collect::<Vec<_>>(),
    );
    let together = together(stack, &small, &per);
    let fullest = fullest(stack, &small, &per);
    let member_full = fullest.as_ref().is_some_and(|f| f.full);
    let held_back = !member_full
        && match together.as_ref().filter(|t| t.shared) {
            Some(t) => t.stack_ratio_pct + t.stack_ratio_err_pct < HELD_BACK_PCT,
            None => ratio_pct + ratio_err_pct < HELD_BACK_PCT,
        };
    let large: Vec<&RunRecord> = ok.into_iter().filter(|r| r.workload.rw == "read").collect();
    Some(StackCeiling {
        stack: stack.target.clone(),
        layer: stack
            .layer(&stack.target)
            .map_or_else(|| stack.target.clone(), short_kind),
        under: stack
            .layer(&stack.target)
            .map(|l| l.under.clone())
            .unwrap_or_default(),
        shared: shared_disks(stack),
        bs: first.workload.bs,
        qd: first.workload.qd,
        stack_iops: mean(&per.iter().map(|r| r.stack).collect::<Vec<_>>()),
        members: stack
            .physical
            .iter()
            .zip(member_means(&per))
            .map(|(d, iops)| MemberAlone {
                disk: d.clone(),
                iops,
                path: stack.loop_file_on(d).map(str::to_string),
            })
            .collect(),
        members_sum_iops: members_sum(&per),
        ratio_pct,
        ratio_err_pct,
        rounds: per.len(),
        held_back,
        runs: every_run(&per),
        bandwidth: bandwidth(stack, &large),
        together,
        fullest,
    })
}

/// Each physical member's IOPS within one stack run, from its own
/// counters over the run.
fn in_stack(stack: &Stack, r: &RunRecord) -> Option<Vec<f64>> {
    let members = &r.context.as_ref()?.members;
    stack
        .physical
        .iter()
        .map(|d| {
            let c = members.iter().find(|c| &c.disk == d)?;
            (c.window_ms > 0).then(|| c.ios() as f64 * 1000.0 / c.window_ms as f64)
        })
        .collect()
}

/// The member whose rate within the stack's runs came nearest what it
/// gives alone in the same round (None without the members' counters).
fn fullest(stack: &Stack, small: &[&RunRecord], per: &[Round]) -> Option<MemberFull> {
    let mut shares: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); stack.physical.len()];
    for round in per {
        let s = small
            .iter()
            .find(|r| r.repeat == round.n && read_of(stack, r) == Some(Read::Stack))?;
        for (i, x) in in_stack(stack, s)?.into_iter().enumerate() {
            let alone = round.members[i];
            shares[i].push((x, alone, pct(x, alone)));
        }
    }
    let (i, v) = shares
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .max_by(|a, b| {
            let m = |v: &Vec<(f64, f64, f64)>| mean(&v.iter().map(|x| x.2).collect::<Vec<_>>());
            m(a.1).total_cmp(&m(b.1))
        })?;
    let (p, err) = spread(&v.iter().map(|x| x.2).collect::<Vec<_>>());
    Some(MemberFull {
        disk: stack.physical[i].clone(),
        in_stack_iops: mean(&v.iter().map(|x| x.0).collect::<Vec<_>>()),
        alone_iops: mean(&v.iter().map(|x| x.1).collect::<Vec<_>>()),
        pct: p,
        pct_err: err,
        full: p - err >= MEMBER_FULL_PCT,
    })
}

/// The large reads' comparison (None without a complete round).
fn bandwidth(stack: &Stack, large: &[&RunRecord]) -> Option<SizeCeiling> {
    let per = rounds(stack, large, |r| r.summary.bw_bytes_per_s);
    let first = large.first()?;
    if per.is_empty() {
        return None;
    }
    let (ratio_pct, ratio_err_pct) = spread(
        &per.iter()
            .map(|r| pct(r.stack, r.members.iter().sum()))
            .collect::<Vec<_>>(),
    );
    Some(SizeCeiling {
        bs: first.workload.bs,
        qd: first.workload.qd,
        stack_bytes_per_s: mean(&per.iter().map(|r| r.stack).collect::<Vec<_>>()),
        members: stack
            .physical
            .iter()
            .zip(member_means(&per))
            .map(|(d, b)| MemberBandwidth {
                disk: d.clone(),
                bytes_per_s: b,
            })
            .collect(),
        members_sum_bytes_per_s: members_sum(&per),
        ratio_pct,
        ratio_err_pct,
        rounds: per.len(),
        held_back: ratio_pct + ratio_err_pct < HELD_BACK_PCT,
        runs: every_run(&per),
    })
}

/// The members read at once, against each alone and the stack of the same
/// round (None without such a run in a complete round).
fn together(stack: &Stack, small: &[&RunRecord], per: &[Round]) -> Option<Together> {
    let mut with: Vec<(&RunRecord, &Round)> = Vec::new();
    for round in per {
        if let Some(r) = small
            .iter()
            .find(|r| r.repeat == round.n && read_of(stack, r) == Some(Read::Together))
        {
            with.push((r, round));
        }
    }
    let first = with.first()?.0;
    let (ratio_pct, ratio_err_pct) = spread(
        &with
            .iter()
            .map(|(r, w)| pct(r.summary.iops, w.members.iter().sum()))
            .collect::<Vec<_>>(),
    );
    let (stack_ratio_pct, stack_ratio_err_pct) = spread(
        &with
            .iter()
            .map(|(r, w)| pct(w.stack, r.summary.iops))
            .collect::<Vec<_>>(),
    );
    // Each member's IOPS in the run, from its own counters.
    let own = |r: &RunRecord, d: &str| -> Option<f64> {
        let c = r.context.as_ref()?.members.iter().find(|c| c.disk == d)?;
        Some(c.ios() as f64 * 1000.0 / c.window_ms.max(1) as f64)
    };
    let members = stack
        .physical
        .iter()
        .map(|d| {
            let v: Option<Vec<f64>> = with.iter().map(|(r, _)| own(r, d)).collect();
            v.map(|v| MemberAlone {
                disk: d.clone(),
                iops: mean(&v),
                path: None,
            })
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    Some(Together {
        qd: first.workload.qd,
        iops: mean(&with.iter().map(|(r, _)| r.summary.iops).collect::<Vec<_>>()),
        members,
        ratio_pct,
        ratio_err_pct,
        shared: ratio_pct + ratio_err_pct < SHARED_PCT,
        stack_ratio_pct,
        stack_ratio_err_pct,
        rounds: with.len(),
        runs: with.iter().map(|(r, _)| r.id.clone()).collect(),
    })
}
