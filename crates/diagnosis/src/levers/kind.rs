//! A lever's kind as one unit, in the style of fio's `ioengine_ops`:
//! everything that depends on what a lever changes — the value in place,
//! the consent it needs, where its limit binds, what it may buy, the
//! change the study makes and undoes, how a user makes it last and where
//! it stands in a set of changes — behind one interface ([`LeverKind`]),
//! one file per kind (`kind_queue`, `kind_cgroup`, `kind_application`,
//! `kind_priority`), listed in one table (`crate::levers::KINDS`). Pure:
//! the study reads the host and hands it in ([`Context`]), and makes the
//! typed change ([`Apply`]) through the `tune` crate. A unit knows the
//! lever and the trials as plain data (`lever`, `crate::trials::record`)
//! and nothing above them: what it needs of the table or of a
//! configuration is handed in ([`Lasting`]).

use super::estimate::Estimate;
use super::lever::{Apply, Consent, Lever};
use crate::lever_context::{Candidate, Context, Point};
use crate::limit::Cause;
use crate::trials::record::{Gain, Member, Reason};
use ssdready_measured::group_limits::Lift;
use ssdready_measured::limits::Inventory;

/// Why a lever cannot be tried: the reason and its words.
pub type NotTried = (Reason, String);

/// What one kind of lever does, for a lever of it.
pub trait LeverKind: Sync {
    /// The table's word for it (`kind WORD`).
    fn word(&self) -> &'static str;

    /// Keys a lever of this kind must have beyond `what` and `values`.
    fn needs(&self) -> &'static [&'static str] {
        &[]
    }

    /// It changes a file of the device's queue: its values propose from
    /// the file's value, and it is made on the target's disks.
    fn on_queue(&self) -> bool {
        false
    }

    /// It lifts a limit of the study's control groups: tried only where
    /// its limit holds or the findings want it.
    fn lifts_group(&self) -> bool {
        false
    }

    /// It changes the host, not the job's own options.
    fn of_host(&self) -> bool {
        self.on_queue() || self.lifts_group()
    }

    /// Made by the job's own options, yet no workload of the job's: tried
    /// on a study's job, in turns, where the job's judgement names one of
    /// its causes and the user asked for trials (`--try-changes`).
    fn on_job_where_named(&self) -> bool {
        false
    }

    /// The value in place, from what the study read (None: nothing read).
    fn current(&self, _l: &Lever, _cx: &Context) -> Option<String> {
        None
    }

    /// What its candidate replaces at `p`, in words.
    fn replaced(&self, l: &Lever, cx: &Context, p: &Point) -> String;

    /// Whether a lever of this kind may be tried, by what the user asked
    /// and what this machine can do.
    fn gate(&self, cause: Cause, c: &Consent) -> Result<(), NotTried>;

    /// Why this machine does not offer it at all (`place`: where, in
    /// words), before its candidates are asked for.
    fn offered(&self, _l: &Lever, _cx: &Context, _place: &str) -> Result<(), NotTried> {
        Ok(())
    }

    /// Why its limit cannot bind at `p`, where the facts say so.
    fn cannot_bind(&self, _l: &Lever, _cx: &Context, _p: &Point) -> Option<String> {
        None
    }

    /// Why its limit cannot bind for a job whose I/O is `p` (the job
    /// study's own bound, beyond [`LeverKind::cannot_bind`]).
    fn idle_for_job(&self, _l: &Lever, _p: &Point) -> Option<String> {
        None
    }

    /// What candidate `c` may buy at `p`, where a measurement says.
    fn estimate(&self, l: &Lever, cx: &Context, p: &Point, c: &Candidate) -> Option<Estimate> {
        super::estimate::of_values(l, cx, p, c)
    }

    /// The typed change that makes candidate `c` (for a group limit,
    /// `lift`): what the study applies and undoes.
    fn change(&self, l: &Lever, c: &Candidate, lift: &Lift) -> Apply;

    /// How a user makes `c` last on `disks`, where the table gives no
    /// `permanent` line (`options`: the candidate's as `--k=v`).
    fn permanent(&self, l: &Lever, disks: &[String], c: &Candidate, options: &str) -> String;

    /// Where its change is made among a set's (lower first), `attr` its
    /// queue file where it has one.
    fn order(&self, attr: Option<&str>) -> u8;

    /// The file of a configuration that makes this kind's changes last
    /// (`crate::trials::files`), where it has one of its own.
    fn lasting(&self) -> Option<&'static str> {
        None
    }

    /// That file's text for a configuration, from what [`Lasting`] hands
    /// in.
    fn lasting_text(&self, _f: &Lasting) -> String {
        String::new()
    }
}

/// What a kind's file that makes a configuration last is written from
/// ([`LeverKind::lasting_text`]), handed in by the files' writer
/// (`crate::trials::files`).
pub struct Lasting<'a> {
    /// The file's header: the study's date, the changes and what they
    /// bought.
    pub head: &'a str,
    /// The configuration's kept changes that this file makes last (those
    /// of the kinds whose file it is), in the order applied.
    pub members: Vec<&'a Member>,
    /// The kept configuration's gain on what it is judged on.
    pub gain: Option<&'a Gain>,
    /// The levers table the changes were made from.
    pub levers: &'a [Lever],
    /// The inventory of the study's limits, where it was read.
    pub limits: Option<&'a Inventory>,
}
