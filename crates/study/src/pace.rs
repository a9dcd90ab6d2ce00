//! The sweeps against the budget's clock: before each point the driver
//! asks whether its run still fits before the sweeps' [`Deadline`], at the
//! pace the runs so far kept (the plan's estimate, or longer where they
//! took longer). Repeats give way first: a repeat runs only when it and
//! every run of higher rank still to come fit (first measurements rank
//! above repeats, a second measurement above a third), so a short budget
//! drops the repeats, then the last sweeps' first measurements, and keeps
//! the queue-depth sweep that comes first. What was dropped is said as
//! skips, one for each sweep's repeats and one for its first
//! measurements, with the clock's reason.

use crate::clock::Deadline;
use crate::model::Skip;
use crate::plan::{Plan, Point};

/// One point dropped for time.
struct Dropped {
    sweep: &'static str,
    repeat: bool,
    id: String,
    why: String,
}

/// The sweeps' time-keeping.
pub(crate) struct Pace {
    planned_s: f64,
    runs: usize,
    runs_s: f64,
    dropped: Vec<Dropped>,
}

impl Pace {
    pub(crate) fn new(plan: &Plan) -> Pace {
        Pace {
            planned_s: plan.settings.runtime_s + plan.settings.ramp_s + plan.overhead_s,
            runs: 0,
            runs_s: 0.0,
            dropped: Vec::new(),
        }
    }

    /// A run's seconds: the plan's estimate, or the mean of the runs so
    /// far where longer (the fill, which writes the whole region, aside).
    pub(crate) fn per_run_s(&self) -> f64 {
        match self.runs {
            0 => self.planned_s,
            n => self.planned_s.max(self.runs_s / n as f64),
        }
    }

    /// A run of `sweep` took `s` seconds.
    pub(crate) fn ran(&mut self, sweep: &str, s: f64) {
        if sweep != "fill" {
            self.runs += 1;
            self.runs_s += s;
        }
    }

    /// Whether the plan's point `i` may start before `d`; else why not.
    pub(crate) fn admit(&self, plan: &Plan, i: usize, d: &Deadline) -> Result<(), String> {
        let per = self.per_run_s();
        let rank = plan.points[i].repeat;
        if rank <= 1 {
            return d.check(per, "this run takes");
        }
        let ahead = plan.points[i + 1..]
            .iter()
            .filter(|q| q.repeat < rank)
            .count();
        let which = match rank {
            2 => "first measurements",
            _ => "first measurements and earlier repeats",
        };
        let takes = match ahead {
            0 => "this repeat takes".to_string(),
            n => format!("this repeat and the {n} {which} still to come take"),
        };
        d.check(per * (1 + ahead) as f64, &takes)
    }

    /// `p`, at depth `qd`, was dropped for `why`.
    pub(crate) fn drop_point(&mut self, p: &Point, qd: u32, why: String) {
        self.dropped.push(Dropped {
            sweep: p.sweep,
            repeat: p.repeat > 1,
            id: p.id(qd),
            why,
        });
    }

    /// What was dropped: for each sweep, its repeats and its first
    /// measurements (each with the first drop's reason), in the order the
    /// plan had them.
    pub(crate) fn skips(&self) -> Vec<Skip> {
        let mut groups: Vec<(&'static str, bool, Vec<&Dropped>)> = Vec::new();
        for d in &self.dropped {
            match groups
                .iter_mut()
                .find(|g| g.0 == d.sweep && g.1 == d.repeat)
            {
                Some(g) => g.2.push(d),
                None => groups.push((d.sweep, d.repeat, vec![d])),
            }
        }
        groups
            .into_iter()
            .map(|(sweep, repeat, ds)| Skip {
                what: group_name(sweep, repeat, &ds),
                why: ds[0].why.clone(),
            })
            .collect()
    }
}

/// "the scheduler sweep's repeats (32 runs: sched-bfq-qd1#2 … sched-none-qd32#5)".
fn group_name(sweep: &str, repeat: bool, ds: &[&Dropped]) -> String {
    let kind = match repeat {
        true => "repeats",
        false => "first measurements",
    };
    let ids = match ds {
        [one] => one.id.clone(),
        [a, b] => format!("{}, {}", a.id, b.id),
        [a, .., z] => format!("{} … {}", a.id, z.id),
        [] => String::new(),
    };
    let n = ds.len();
    let runs = if n == 1 { "run" } else { "runs" };
    format!("the {sweep} sweep's {kind} ({n} {runs}: {ids})")
}

#[cfg(test)]
#[path = "pace_tests.rs"]
mod tests;
