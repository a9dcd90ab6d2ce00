//! A lever's kind as one unit, in the style of fio's `ioengine_ops`:
//! everything that depends on what a lever changes — the value in place,
//! the consent it needs, where its limit binds, what it may buy, the
//! change the study makes and undoes, how a user makes it last and where
//! it stands in a set of changes — behind one interface ([`LeverKind`]),
//! one file per kind (`kind_queue`, `kind_cgroup`, `kind_application`,
//! `kind_priority`), listed in one table ([`KINDS`]). Pure: the study
//! reads the host and hands it in ([`Context`]), and makes the typed
//! change ([`Apply`]) through the `tune` crate.

use super::{Apply, Candidate, Context, Kind, Lever, Point};
use crate::levers::estimate::Estimate;
use crate::limit::Cause;
use crate::trials::combination::Combination;
use crate::trials::plan::Consent;
use crate::trials::Reason;
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
        crate::levers::estimate::of_values(l, cx, p, c)
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

    /// That file's text for the configuration `c`, after `head`, from the
    /// inventory of the study's limits where it was read.
    fn lasting_text(&self, _c: &Combination, _head: &str, _limits: Option<&Inventory>) -> String {
        String::new()
    }
}

/// Every kind: its word in the table, the kind a trial records, and its
/// unit. A lever of `priority` is recorded as the application's own
/// choice, as it always was.
pub const KINDS: [(Kind, &dyn LeverKind); 4] = [
    (Kind::Queue, &super::kind_queue::QUEUE),
    (Kind::Cgroup, &super::kind_cgroup::CGROUP),
    (Kind::Application, &super::kind_application::APPLICATION),
    (Kind::Application, &super::kind_priority::PRIORITY),
];

/// A lever's unit: its place in [`KINDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit(usize);

impl Default for Unit {
    /// The application's own options, as [`Kind`]'s default.
    fn default() -> Unit {
        of_kind(Kind::default()).0
    }
}

impl Unit {
    /// Its unit.
    pub fn ops(self) -> &'static dyn LeverKind {
        KINDS[self.0].1
    }

    /// The kind a trial of it records.
    pub fn kind(self) -> Kind {
        KINDS[self.0].0
    }
}

/// The kind the table names by `word`.
pub fn by_word(word: &str) -> Option<Unit> {
    KINDS.iter().position(|k| k.1.word() == word).map(Unit)
}

/// The words the table allows.
pub fn words() -> String {
    KINDS.map(|k| k.1.word()).join(", ")
}

/// The first unit that records `kind`: what a recorded trial of that
/// kind is made and ordered by.
pub fn of_kind(kind: Kind) -> (Unit, &'static dyn LeverKind) {
    let i = KINDS.iter().position(|k| k.0 == kind).unwrap_or(0);
    (Unit(i), KINDS[i].1)
}
