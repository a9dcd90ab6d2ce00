//! The stack's ceiling in words ([`super::ceiling()`]): the stack against
//! its members at small requests, the members all at once, and the
//! stack's bandwidth at large requests set beside its IOPS — each a
//! finding with what to do, and its figures as printed.

use super::ceiling::{SizeCeiling, StackCeiling, Together, HELD_BACK_PCT, SHARED_PCT};

/// The paper whose RAID-controller finding these comparisons ask of a
/// software stack.
pub const SAMSUNG: &str = "Samsung's \"System-wide issues for efficient use of E-SSD\"";

/// A block size in words (`4 KiB`).
pub(crate) fn bytes(bs: u64) -> String {
    match bs {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1024 && b % 1024 == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// IOPS in thousands, as the terminal prints them (`9.8K`).
pub(crate) fn k(iops: f64) -> String {
    if iops >= 1000.0 {
        format!("{:.1}K", iops / 1000.0)
    } else {
        format!("{iops:.0}")
    }
}

/// Bytes per second as MB/s (`1250.0 MB/s`).
pub(crate) fn mb(bytes_per_s: f64) -> String {
    format!("{:.1} MB/s", bytes_per_s / 1e6)
}

/// `dm-0 and dm-1`, `a, b and c`.
fn and_list(v: &[String]) -> String {
    match v {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl StackCeiling {
    /// What the stack is over: `md raid0 over 2 members`, or where its
    /// members lie on one disk, `md raid0 over 2 members, dm-0 and dm-1,
    /// both on one disk, vdb, which they share`.
    pub fn over(&self) -> String {
        if let Some((f, disk)) = self.loop_file() {
            return format!("{} over {f}, on {disk}", self.layer);
        }
        let n = if self.under.is_empty() {
            self.members.len()
        } else {
            self.under.len()
        };
        let members = if n == 1 { "member" } else { "members" };
        let head = format!("{} over {n} {members}", self.layer);
        match (self.shared.as_slice(), self.members.as_slice()) {
            ([], _) => head,
            ([one], [_]) => format!(
                "{head}, {}, {} on one disk, {one}, which they share",
                and_list(&self.under),
                if n == 2 { "both" } else { "all" }
            ),
            (shared, _) => format!(
                "{head} ({}), some sharing a disk: {}",
                and_list(&self.under),
                and_list(shared)
            ),
        }
    }

    /// The backing file a loop device's one member was read through, and
    /// that member (the disk the file is on).
    fn loop_file(&self) -> Option<(&str, &str)> {
        match self.members.as_slice() {
            [m] => m.path.as_deref().map(|f| (f, m.disk.as_str())),
            _ => None,
        }
    }

    /// `its members'`, or the disk's where the members share one (`vdb's`,
    /// `its disks'`), or a loop device's file's.
    fn alone_whose(&self) -> String {
        if let Some((f, disk)) = self.loop_file() {
            return format!("its backing file's ({f}, on {disk}, read directly)");
        }
        match (self.shared.as_slice(), self.members.as_slice()) {
            ([], _) => "its members'".into(),
            (_, [one]) => format!("{}'s", one.disk),
            _ => "its disks'".into(),
        }
    }

    /// The finding at small requests in one sentence, and what to do.
    pub fn words(&self) -> (String, String) {
        let what = format!(
            "{} ({}) delivers {} IOPS of {} random reads at QD {}, {:.0} % (± {:.0} %) of {} {} measured alone over {} round(s)",
            self.stack,
            self.over(),
            k(self.stack_iops),
            bytes(self.bs),
            self.qd,
            self.ratio_pct,
            self.ratio_err_pct,
            self.alone_whose(),
            k(self.members_sum_iops),
            self.rounds
        );
        let shared = self.together.as_ref().filter(|t| t.shared);
        let what = match shared {
            Some(t) => format!(
                "{what}; read all at once its members give {} ({:.0} % ± {:.0} % of that sum), and the stack {:.0} % (± {:.0} %) of that",
                k(t.iops),
                t.ratio_pct,
                t.ratio_err_pct,
                t.stack_ratio_pct,
                t.stack_ratio_err_pct
            ),
            None => what,
        };
        if let Some(f) = self.fullest.as_ref().filter(|f| f.full) {
            return (
                format!(
                    "{what}: within it {} gives {} IOPS, {:.0} % (± {:.0} %) of its {} alone, so that member, not the stack's layers, is the ceiling",
                    f.disk,
                    k(f.in_stack_iops),
                    f.pct,
                    f.pct_err,
                    k(f.alone_iops)
                ),
                format!(
                    "the stack cannot pass {} while {} is this slow: look at it and what is under it (its queue, its settings, its health)",
                    f.disk, f.disk
                ),
            );
        }
        match (self.held_back, shared.is_some()) {
            (true, _) if self.loop_file().is_some() => (
                format!("{what}: the loop device's own path holds it back, not the disk under it"),
                format!(
                    "its file gives more read directly: let the application read the file (or the file system) without {}; where the loop device must stay, look at its direct I/O (/sys/block/{}/loop/dio) and its worker's CPU",
                    self.stack, self.stack
                ),
            ),
            (true, _) => (
                format!("{what}: the stack's own layers hold it back"),
                format!(
                    "look at {}'s own work per I/O (its threads, locks, a crypt or delay target under it) and its settings: its members could give more",
                    self.stack
                ),
            ),
            (false, true) => (
                format!("{what}: the stack keeps up with what its members give together; the ceiling is what they share"),
                "the stack's layers are not the limit here: see what holds the members read all at once".into(),
            ),
            (false, false) => (
                format!("{what}: the stack keeps up with its members"),
                "nothing to change in the stack's layers on this evidence".into(),
            ),
        }
    }

    /// The evidence: each figure, as printed.
    pub fn figures(&self) -> Vec<(String, String)> {
        let mut f = vec![(
            format!("{} (the stack)", self.stack),
            format!("{:.0} IOPS", self.stack_iops),
        )];
        for m in &self.members {
            let who = match &m.path {
                Some(p) => format!("{p} (on {}) read directly", m.disk),
                None => format!("{} alone", m.disk),
            };
            f.push((who, format!("{:.0} IOPS", m.iops)));
        }
        f.push((
            "members' sum".into(),
            format!("{:.0} IOPS", self.members_sum_iops),
        ));
        if let Some(t) = &self.together {
            f.push(("members all at once".into(), format!("{:.0} IOPS", t.iops)));
        }
        f.push((
            "stack / members".into(),
            format!("{:.1} % ± {:.1} %", self.ratio_pct, self.ratio_err_pct),
        ));
        if let Some(m) = &self.fullest {
            f.push((
                format!("{} within the stack / alone", m.disk),
                format!(
                    "{:.0} / {:.0} IOPS: {:.1} % ± {:.1} %",
                    m.in_stack_iops, m.alone_iops, m.pct, m.pct_err
                ),
            ));
        }
        f
    }

    /// The stack's share of its members at small requests, and of what:
    /// the members all at once where something they share holds them,
    /// else each alone.
    fn small_share(&self) -> (f64, f64, &'static str) {
        match self.together.as_ref().filter(|t| t.shared) {
            Some(t) => (
                t.stack_ratio_pct,
                t.stack_ratio_err_pct,
                "of what its members give all at once",
            ),
            None => (self.ratio_pct, self.ratio_err_pct, "of its members' IOPS"),
        }
    }

    /// The stack's bandwidth at large requests set beside its IOPS at
    /// small ones: at which size it keeps up, and what that says of its
    /// layers' cost (None without the large reads).
    pub fn bandwidth_words(&self) -> Option<(String, String)> {
        let b = self.bandwidth.as_ref()?;
        let (s, s_err, of) = self.small_share();
        let small_held = s + s_err < HELD_BACK_PCT;
        let what = format!(
            "{} delivers {s:.0} % (± {s_err:.0} %) {of} at {} but {:.0} % (± {:.0} %) of their bandwidth at {} ({} against {} read alone, sequential, QD {}, {} round(s))",
            self.stack,
            bytes(self.bs),
            b.ratio_pct,
            b.ratio_err_pct,
            bytes(b.bs),
            mb(b.stack_bytes_per_s),
            mb(b.members_sum_bytes_per_s),
            b.qd,
            b.rounds
        );
        let what = if small_held == b.held_back {
            what.replacen(" but ", " and ", 1)
        } else {
            what
        };
        let st = &self.stack;
        Some(match (small_held, b.held_back) {
            (true, false) => (
                format!("{what}: its layers' cost is per request, as {SAMSUNG} found of RAID controllers"),
                format!("large requests pass through {st} at its members' speed; for small ones look at its work per I/O (threads, locks, the targets under it), or send fewer, larger requests"),
            ),
            (false, true) => (
                format!("{what}: its layers' cost grows with the bytes (copying, encryption, parity), not with the requests"),
                format!("look at what {st}'s layers do to each byte: a crypt target's cipher, a parity computation, a bounce copy"),
            ),
            (true, true) => (
                format!("{what}: it holds back small and large requests alike"),
                format!("look at {st}'s layers at both sizes: a cost per request and per byte, or one layer capping its bandwidth"),
            ),
            (false, false) => (
                format!("{what}: it keeps up at both sizes"),
                "nothing to change in the stack's layers on this evidence".into(),
            ),
        })
    }
}

impl SizeCeiling {
    /// The evidence: each figure, as printed.
    pub fn figures(&self, stack: &str) -> Vec<(String, String)> {
        let mut f = vec![(
            format!("{stack} (the stack), {} sequential", bytes(self.bs)),
            mb(self.stack_bytes_per_s),
        )];
        for m in &self.members {
            f.push((format!("{} alone", m.disk), mb(m.bytes_per_s)));
        }
        f.push(("members' sum".into(), mb(self.members_sum_bytes_per_s)));
        f.push((
            "stack / members".into(),
            format!("{:.1} % ± {:.1} %", self.ratio_pct, self.ratio_err_pct),
        ));
        f
    }
}

impl Together {
    /// The finding in one sentence, and what to do.
    pub fn words(&self, c: &StackCeiling) -> (String, String) {
        let what = format!(
            "{}'s {} physical members read all at once (4 KiB random reads, QD {} each) give {} IOPS, {:.0} % (± {:.0} %) of the {} they give each alone, over {} round(s)",
            c.stack,
            c.members.len(),
            self.qd,
            k(self.iops),
            self.ratio_pct,
            self.ratio_err_pct,
            k(c.members_sum_iops),
            self.rounds
        );
        if self.shared {
            (
                format!(
                    "{what}: something they share holds them (a host controller, a bus, the CPUs, as {SAMSUNG} found a driver holding a host controller), and that, not {}'s layers, is its ceiling",
                    c.stack
                ),
                "look at what the members share: the controller or bridge they sit behind, its driver and queues, the CPUs that submit and complete their I/O".into(),
            )
        } else {
            (
                format!("{what}: nothing they share holds them (below {SHARED_PCT:.0} % it would)"),
                "nothing to change in what the members share on this evidence".into(),
            )
        }
    }

    /// The evidence: each figure, as printed.
    pub fn figures(&self, c: &StackCeiling) -> Vec<(String, String)> {
        let mut f = vec![(
            "members all at once".into(),
            format!("{:.0} IOPS", self.iops),
        )];
        for m in &self.members {
            f.push((
                format!("{} at once (its counters)", m.disk),
                format!("{:.0} IOPS", m.iops),
            ));
        }
        f.push((
            "sum of each alone".into(),
            format!("{:.0} IOPS", c.members_sum_iops),
        ));
        f.push((
            "at once / alone".into(),
            format!("{:.1} % ± {:.1} %", self.ratio_pct, self.ratio_err_pct),
        ));
        f.push((
            format!("{} / at once", c.stack),
            format!(
                "{:.1} % ± {:.1} %",
                self.stack_ratio_pct, self.stack_ratio_err_pct
            ),
        ));
        f
    }
}
