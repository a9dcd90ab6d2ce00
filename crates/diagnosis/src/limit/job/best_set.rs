//! The job's best configuration searched as the device study's
//! combination is ([`crate::trials::combination`]): the same members, the
//! same subset search and the same choice, the job as written its point.
//!
//! - Its members ([`combination`]): the host's changes that helped, best
//!   first (the first is the best single change, never left out of a
//!   subset); the job's options chosen ([`super::best::chosen`]); and
//!   behind them the host's caps that bought nothing alone
//!   ([`crate::trials::combination::behind`]: a CPU quota behind a request
//!   queue of four, which binds only once the queue is lifted).
//! - Each set measured becomes the job's [`Best`] of its members
//!   ([`best_of`]); the search asks for the next
//!   ([`crate::trials::combination::next_subset`]), and the choice keeps
//!   the first set that bought at least the best single change (more
//!   beyond the noise where it holds a cap that bought nothing alone),
//!   else that change alone as its own trial measured it ([`kept`]).
//!
//! Where no change of the host helped, or one of the job's options gained
//! more than the best change of the host by more than
//! [`super::GAIN_PCT`], there is nothing to search: the set is measured
//! once and stands (an option is measured once, not in turns).

use super::best::{self as job_best, member_of, Best};
use super::VariantResult;
use crate::levers::{self, Kind, Metric};
use crate::trials::combination::{self as model, Combination, Member, Set};
use crate::trials::Trial;

/// The member of one of the job's options chosen (`iodepth=128`),
/// measured once as the job's variant.
fn option_member(v: &VariantResult) -> Member {
    let (k, value) = v.option.split_once('=').unwrap_or((&v.option, ""));
    Member {
        lever: v.option.clone(),
        kind: Kind::Application,
        change: v.option.clone(),
        value: value.into(),
        options: vec![(k.into(), value.into())],
        alone_at: "the job's variant, run once".into(),
        ..Default::default()
    }
}

/// The search's combination of the job's changes (the module's
/// members), judged on the job's metric; None where there is nothing to
/// search (see the module's documentation).
pub fn combination(
    chosen: &[&VariantResult],
    trials: &[Trial],
    helped: &[Trial],
    by_bandwidth: bool,
) -> Option<Combination> {
    let measure = metric(by_bandwidth);
    let gain = |t: &Trial| {
        t.gains
            .iter()
            .find(|g| g.metric == measure)
            .map(|g| g.change_pct)
    };
    let mut host: Vec<&Trial> = helped.iter().filter(|t| gain(t).is_some()).collect();
    host.sort_by(|a, b| {
        gain(b)
            .unwrap_or(f64::MIN)
            .total_cmp(&gain(a).unwrap_or(f64::MIN))
    });
    let best = gain(host.first()?)?;
    let options_best = chosen
        .iter()
        .filter_map(|v| v.gain_pct)
        .fold(f64::MIN, f64::max);
    if options_best > best + super::GAIN_PCT {
        return None;
    }
    let table = levers::shipped();
    let cap = |id: &str| table.iter().any(|l| l.id == id && l.raises_cap());
    let behind = model::behind(trials, &host, &cap);
    // Each weighed alone on the job's metric, as the sets are.
    let on_measure = |t: &Trial| Member {
        alone: t.gain_on(measure).cloned(),
        ..member_of(t)
    };
    let mut changes: Vec<Member> = host.iter().map(|t| on_measure(t)).collect();
    changes.extend(chosen.iter().map(|v| option_member(v)));
    changes.extend(behind.iter().map(|t| Member {
        behind: true,
        ..on_measure(t)
    }));
    Some(Combination {
        at: "the job as written".into(),
        measure,
        changes,
        ..Default::default()
    })
}

/// The job's configuration of set `levers` of `c`, not yet measured: its
/// options, what each asks (from `chosen`) and its host's changes.
pub fn best_of(
    c: &Combination,
    levers: &[String],
    chosen: &[&VariantResult],
    by_bandwidth: bool,
) -> Best {
    let set = Set {
        levers: levers.to_vec(),
        ..Default::default()
    };
    let members: Vec<&Member> = c.members_of(&set).collect();
    let of_host = |m: &&&Member| m.kind != Kind::Application;
    let options: Vec<&VariantResult> = chosen
        .iter()
        .copied()
        .filter(|v| levers.contains(&v.option))
        .collect();
    Best {
        options: options.iter().map(|v| v.option.clone()).collect(),
        asks: options.iter().map(|v| v.asks.clone()).collect(),
        host: members
            .iter()
            .filter(of_host)
            .map(|m| m.change.clone())
            .collect(),
        by_bandwidth,
        best_single_pct: c.best_gain().map_or(f64::MIN, |g| g.change_pct),
        ..Default::default()
    }
}

/// The configuration the search keeps ([`model::choose`] against the best
/// single change's trial `single`): the set kept, its judgement, and the
/// choice in words where it is not the whole set as measured, or the set
/// holds a cap that bought nothing alone. `sets` are the job's sets
/// measured, in the order of `c.sets`.
pub fn kept(c: &mut Combination, sets: Vec<Best>, single: &Trial) -> Best {
    model::choose(c, single);
    let whole_kept = c.sets.first().is_some_and(|w| w.levers == c.kept.levers);
    let behind = c.members_of(&c.kept).any(|m| m.behind);
    let said = (!whole_kept || behind).then(|| c.words.clone());
    let at = c
        .sets
        .iter()
        .position(|s| !c.kept.single && s.levers == c.kept.levers);
    let mut b = match at.and_then(|i| sets.get(i)) {
        Some(b) => b.clone(),
        None => Best {
            host: vec![single.change()],
            by_bandwidth: sets.first().is_some_and(|b| b.by_bandwidth),
            turns: single.turns.clone(),
            best_single_pct: c.best_gain().map_or(f64::MIN, |g| g.change_pct),
            ..Default::default()
        },
    };
    job_best::judge(&mut b);
    b.instead_of = said;
    b.whole = sets
        .into_iter()
        .next()
        .filter(|_| !whole_kept)
        .map(Box::new);
    b
}

/// The search: the [`combination`], each set's configuration
/// ([`best_of`]) run by `measure` (its turns filled and judged), the next
/// asked of [`model::next_subset`] while `more()` allows, then the
/// configuration [`kept`]. None where there is nothing to search: the
/// caller measures the whole set once.
pub fn search(
    (chosen, trials, helped): (&[&VariantResult], &[Trial], &[Trial]),
    by_bandwidth: bool,
    measure: &mut dyn FnMut(&mut Best),
    more: &dyn Fn() -> bool,
) -> Option<Best> {
    let mut c = combination(chosen, trials, helped, by_bandwidth)?;
    let first = c.changes.first().map(|m| m.lever.clone());
    let single = helped.iter().find(|t| Some(&t.lever) == first.as_ref())?;
    let mut levers: Vec<String> = c.changes.iter().map(|m| m.lever.clone()).collect();
    let mut sets = Vec::new();
    loop {
        let mut b = best_of(&c, &levers, chosen, by_bandwidth);
        measure(&mut b);
        let mut set = Set {
            levers,
            turns: b.turns.clone(),
            ..Default::default()
        };
        model::judge_set(&mut set, c.measure);
        c.sets.push(set);
        sets.push(b);
        match model::next_subset(&c) {
            Some(next) if more() => levers = next,
            _ => break,
        }
    }
    Some(kept(&mut c, sets, single))
}

/// The metric a job is judged on: bandwidth where every direction
/// streams, else IOPS.
fn metric(by_bandwidth: bool) -> Metric {
    match by_bandwidth {
        true => Metric::Bandwidth,
        false => Metric::Iops,
    }
}

#[cfg(test)]
#[path = "best_set_tests.rs"]
mod tests;
