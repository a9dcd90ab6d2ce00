//! What `ssdready study`'s command line asks, checked before anything runs
//! (bad input is a typed [`AskError`], one line, nothing written): the
//! budget, the latency target, the optional sweeps and the output
//! directory of a study of one machine ([`Ask::check`]) and the plan it
//! fits in the budget ([`Ask::plan`]); and for the study of a fleet
//! ([`Ask::fleet`]) the options it refuses, its hosts (each named once,
//! each answering) and its target. The binary turns its arguments into an
//! [`Ask`] and an error into exit code 2.

use crate::capacity::{Slo, SloError, DEFAULT_SLO};
use crate::fleet::HostInfo;
use crate::fleet_run;
use crate::plan::{self, Plan, StudyOptions, OPTIONAL_SWEEPS};
use ssdready_fleet::client::{self, Host, HostError};
use ssdready_measured::record::{Machine, TargetProfile};
use ssdready_run::output::{self, OutputError};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// The study's command line, as parsed.
#[derive(Clone, Debug, Default)]
pub struct Ask {
    pub target: Option<String>,
    pub quick: bool,
    pub output: Option<PathBuf>,
    /// `--budget`, when given.
    pub budget: Option<String>,
    pub slo: Option<String>,
    pub sweeps: Vec<String>,
    pub allow_destructive: bool,
    pub in_process: bool,
    /// `--baseline` or `--db` was given (the study of a fleet refuses them).
    pub baseline: bool,
    pub db: bool,
    /// Every `--client`.
    pub clients: Vec<String>,
    /// The study may change the target device's settings: asked with
    /// `--try-changes` or a device the study made, and its lock held.
    pub host_changes: bool,
}

/// A command line the study refuses.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("option '--budget': {0} (allowed: a time such as 10m or 90s)")]
    Budget(ssdready_core::units::UnitError),
    #[error("option '--budget': {0} s is too short (allowed: 10 s or more)")]
    ShortBudget(f64),
    #[error(transparent)]
    Slo(#[from] SloError),
    #[error("option '--sweeps': '{0}' is not a sweep (allowed: {list})", list = OPTIONAL_SWEEPS.join(", "))]
    Sweep(String),
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A second study there would change what the first one's files say.
    #[error("option '--output': {} already holds a study (study.json); name a new directory", .0.display())]
    Taken(PathBuf),
    #[error("option '{option}': not with --client ({why})")]
    NotWithClient {
        option: &'static str,
        why: &'static str,
    },
    #[error("option '--client': {}", .0.to_string().trim_start_matches("option '--client': "))]
    Hosts(HostError),
    #[error("option '--client': host {0} is named twice (a server runs one client at a time)")]
    Twice(String),
    #[error("option '--client': host {host}: {why}")]
    NoAnswer {
        host: String,
        why: ssdready_fleet::Error,
    },
    #[error(
        "study target '{0}': not a path or emu: target for the hosts (no '[', ']' or line breaks)"
    )]
    FleetTarget(String),
}

/// The run time the tests ask for (`SSDREADY_STUDY_RUNTIME`, seconds),
/// which replaces the plan's.
pub fn test_runtime_s() -> Option<f64> {
    std::env::var("SSDREADY_STUDY_RUNTIME")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|&r| r > 0.0)
}

/// The budget of a study that names none.
pub const DEFAULT_BUDGET: &str = "10m";

/// The budget of a quick study that names none: its minute, and a quarter
/// more for the trials of its two levers.
pub const QUICK_BUDGET_S: f64 = 75.0;

impl Ask {
    /// `--budget` (else [`DEFAULT_BUDGET`]) as seconds, read (not yet
    /// checked for length).
    fn budget_read(&self) -> Result<f64, AskError> {
        let b = self.budget.as_deref().unwrap_or(DEFAULT_BUDGET);
        ssdready_core::units::parse_time_ns(b, 1_000_000_000)
            .map(|ns| ns as f64 / 1e9)
            .map_err(AskError::Budget)
    }

    /// The study's budget: `--budget`, else [`QUICK_BUDGET_S`] for a quick
    /// study and [`DEFAULT_BUDGET`] for a full one. (A quick study of the
    /// tests' run length, `SSDREADY_STUDY_RUNTIME`, is not held to the
    /// minute of 1 s runs: it keeps the default.)
    fn study_budget(&self) -> Result<f64, AskError> {
        match (&self.budget, self.quick && test_runtime_s().is_none()) {
            (None, true) => Ok(QUICK_BUDGET_S),
            _ => self.budget_read(),
        }
    }

    /// The output directory, unless it cannot be used or holds a study.
    fn output_dir(&self) -> Result<PathBuf, AskError> {
        let dir = output::result_dir(self.output.as_deref(), "ssdready-study", "study.json")?;
        match dir.join("study.json").exists() {
            true => Err(AskError::Taken(dir)),
            false => Ok(dir),
        }
    }

    /// The study of one machine: the budget (seconds, at least 10) and the
    /// output directory.
    pub fn check(&self) -> Result<(f64, PathBuf), AskError> {
        let budget_s = self.study_budget()?;
        if let Some(s) = &self.slo {
            Slo::parse(s)?;
        }
        if budget_s < 10.0 {
            return Err(AskError::ShortBudget(budget_s));
        }
        if let Some(s) = self
            .sweeps
            .iter()
            .find(|s| !OPTIONAL_SWEEPS.contains(&s.as_str()))
        {
            return Err(AskError::Sweep(s.clone()));
        }
        Ok((budget_s, self.output_dir()?))
    }

    /// The latency target to search: `--slo`, else p99=1ms in a full study.
    pub fn slo(&self) -> Option<Slo> {
        match (&self.slo, self.quick) {
            (Some(s), _) => Slo::parse(s).ok(),
            (None, false) => Slo::parse(DEFAULT_SLO).ok(),
            (None, true) => None,
        }
    }

    /// The study's plan for the targets, fitted to the budget (a full
    /// study keeps a share of it for its trials).
    pub fn plan(&self, budget_s: f64, targets: &[TargetProfile], machine: &Machine) -> Plan {
        let o = StudyOptions {
            quick: self.quick,
            budget_s: budget_s - crate::clock::reserve_s(budget_s, self.quick),
            sweeps: self.sweeps.clone(),
            root: machine.root,
            host_changes: self.host_changes,
            cpus: machine.cpus,
            strategies: true,
        };
        let mut p = plan::plan(targets, &o);
        plan::fit_budget(&mut p, targets, &o);
        p.budget_s = budget_s;
        if let Some(r) = test_runtime_s() {
            p.settings.runtime_s = r;
        }
        p
    }

    /// The options the study of a fleet does not take.
    fn refuse_with_client(&self) -> Result<(), AskError> {
        let not = |option, why| Err(AskError::NotWithClient { option, why });
        if self.allow_destructive {
            return not("--allow-destructive", "each server applies its own safety checks to the target it is sent; a fleet's writes are never forced from here");
        }
        if self.in_process {
            return not("--in-process", "it chooses the local default drive; a fleet names its target, or runs fio's null engine");
        }
        let other = [
            ("--slo", self.slo.is_some()),
            ("--sweeps", !self.sweeps.is_empty()),
            ("--baseline", self.baseline),
            ("--db", self.db),
        ];
        match other.iter().find(|x| x.1) {
            Some((name, _)) => not(
                name,
                "the study of a fleet runs its own plan and is not recorded in the history",
            ),
            None => Ok(()),
        }
    }

    /// The hosts of every `--client`, each named once.
    fn hosts(&self) -> Result<Vec<Host>, AskError> {
        let mut hosts: Vec<Host> = Vec::new();
        for spec in &self.clients {
            hosts.extend(client::parse_hosts(spec).map_err(AskError::Hosts)?);
        }
        for (i, h) in hosts.iter().enumerate() {
            if hosts[..i].iter().any(|o| o.addr == h.addr) {
                return Err(AskError::Twice(format!("{},{}", h.name, h.port)));
            }
        }
        Ok(hosts)
    }

    /// The study of a fleet (`--client`): its plan, once every host has
    /// answered (`stop` ends the wait for one).
    pub fn fleet(&self, stop: &AtomicBool) -> Result<fleet_run::Plan, AskError> {
        self.refuse_with_client()?;
        let budget_s = self.budget_read()?;
        if budget_s < 10.0 {
            return Err(AskError::ShortBudget(budget_s));
        }
        let hosts = self.hosts()?;
        if let Some(t) = &self.target {
            if t.is_empty() || t.contains(['\n', '[', ']']) {
                return Err(AskError::FleetTarget(t.clone()));
            }
        }
        let dir = self.output_dir()?;
        let infos = probe(&hosts, stop)?;
        let depths = fleet_run::Plan::depths(self.quick);
        let runtime_s = test_runtime_s().unwrap_or_else(|| {
            fleet_run::Plan::runtime_s(self.quick, budget_s, depths.len(), hosts.len())
        });
        Ok(fleet_run::Plan {
            hosts,
            infos,
            target: self.target.clone(),
            depths,
            runtime_s,
            budget_s,
            dir,
        })
    }
}

/// What each host says it is; a host that does not answer is bad input.
fn probe(hosts: &[Host], stop: &AtomicBool) -> Result<Vec<HostInfo>, AskError> {
    hosts
        .iter()
        .map(|h| {
            let host = format!("{},{}", h.name, h.port);
            match client::probe(h, stop) {
                Ok((v, p)) => Ok(HostInfo {
                    host,
                    hostname: p.hostname,
                    fio_version: p.fio_version,
                    protocol_version: v,
                }),
                Err(why) => Err(AskError::NoAnswer { host, why }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ask whose output is a new directory in `tmp`, changed by `f`.
    fn ask(tmp: &tempfile::TempDir, f: impl FnOnce(&mut Ask)) -> Ask {
        let mut a = Ask {
            budget: Some("10m".into()),
            output: Some(tmp.path().join("out")),
            ..Default::default()
        };
        f(&mut a);
        a
    }

    #[test]
    fn a_study_takes_its_budget_and_a_new_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let a = ask(&tmp, |a| a.budget = Some("90s".into()));
        let (budget_s, dir) = a.check().unwrap();
        assert_eq!(budget_s, 90.0);
        assert_eq!(Some(dir), a.output);
        assert!(!tmp.path().join("out").exists(), "nothing made yet");
    }

    #[test]
    fn a_quick_study_without_a_budget_is_held_to_its_minute() {
        let tmp = tempfile::tempdir().unwrap();
        let quick = ask(&tmp, |a| {
            a.quick = true;
            a.budget = None;
        });
        let want = match test_runtime_s() {
            None => QUICK_BUDGET_S,
            Some(_) => 600.0,
        };
        assert_eq!(quick.check().unwrap().0, want);
        let given = ask(&tmp, |a| {
            a.quick = true;
            a.budget = Some("3m".into());
        });
        assert_eq!(given.check().unwrap().0, 180.0, "a budget given is kept");
        let full = ask(&tmp, |a| a.budget = None);
        assert_eq!(full.check().unwrap().0, 600.0);
    }

    #[test]
    fn bad_study_arguments_say_what_is_allowed() {
        let tmp = tempfile::tempdir().unwrap();
        let refused = |f: &dyn Fn(&mut Ask)| ask(&tmp, f).check().unwrap_err().to_string();
        for (e, want) in [
            (refused(&|a| a.budget = Some("soon".into())), "option '--budget': "),
            (
                refused(&|a| a.budget = Some("5s".into())),
                "option '--budget': 5 s is too short (allowed: 10 s or more)",
            ),
            (
                refused(&|a| a.sweeps = vec!["raw".into(), "colour".into()]),
                "option '--sweeps': 'colour' is not a sweep (allowed: scheduler, buffered, raw, devices, applications)",
            ),
            (refused(&|a| a.slo = Some("1ms".into())), "names no percentile"),
        ] {
            assert!(e.contains(want), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        assert!(refused(&|a| a.budget = Some("soon".into()))
            .ends_with("(allowed: a time such as 10m or 90s)"));
        // A bad latency target is said before a budget that is too short.
        let e = refused(&|a| {
            a.budget = Some("5s".into());
            a.slo = Some("1ms".into());
        });
        assert!(e.starts_with("option '--slo'"), "{e}");
    }

    #[test]
    fn a_directory_that_holds_a_study_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let a = ask(&tmp, |_| {});
        let dir = a.output.clone().unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        assert!(a.check().is_ok(), "an empty directory is used");
        std::fs::write(dir.join("study.json"), "{}").unwrap();
        let e = a.check().unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "option '--output': {} already holds a study (study.json); name a new directory",
                dir.display()
            )
        );
    }

    #[test]
    fn the_latency_target_is_the_one_given_else_p99_1ms_in_a_full_study() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(ask(&tmp, |a| a.quick = true).slo(), None);
        let full = ask(&tmp, |_| {}).slo().unwrap();
        assert_eq!((full.pct, full.limit_ns), (99.0, 1_000_000));
        let given = ask(&tmp, |a| a.slo = Some("p99.9=5ms".into()))
            .slo()
            .unwrap();
        assert_eq!((given.pct, given.limit_ns), (99.9, 5_000_000));
    }

    #[test]
    fn a_fleet_refuses_the_options_of_one_machine_first() {
        let tmp = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        type Change<'a> = (&'a dyn Fn(&mut Ask), &'a str);
        let changes: [Change; 6] = [
            (&|a| a.allow_destructive = true, "--allow-destructive"),
            (&|a| a.in_process = true, "--in-process"),
            (&|a| a.slo = Some("p99=1ms".into()), "--slo"),
            (&|a| a.sweeps = vec!["raw".into()], "--sweeps"),
            (&|a| a.baseline = true, "--baseline"),
            (&|a| a.db = true, "--db"),
        ];
        for (f, option) in changes {
            let a = ask(&tmp, |a| {
                a.clients = vec!["no such host".into()];
                a.budget = Some("soon".into());
                f(a);
            });
            let e = a.fleet(&stop).unwrap_err().to_string();
            let want = format!("option '{option}': not with --client (");
            assert!(e.starts_with(&want), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn a_fleet_names_each_host_once_and_a_target_it_can_send() {
        let tmp = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let fleet = |f: &dyn Fn(&mut Ask)| {
            let a = ask(&tmp, |a| {
                a.clients = vec!["127.0.0.1,1;127.0.0.1,2".into()];
                f(a);
            });
            a.fleet(&stop).unwrap_err().to_string()
        };
        let e = fleet(&|a| a.clients.push("127.0.0.1,1".into()));
        assert_eq!(
            e,
            "option '--client': host 127.0.0.1,1 is named twice (a server runs one client at a time)"
        );
        let e = fleet(&|a| a.clients = vec!["127.0.0.1,0".into()]);
        assert!(e.starts_with("option '--client': host '"), "{e}");
        assert!(e.contains("port '0'"), "{e}");
        let e = fleet(&|a| a.target = Some("emu:[x]".into()));
        assert!(e.starts_with("study target 'emu:[x]': not a path"), "{e}");
        let e = fleet(&|a| a.budget = Some("5s".into()));
        assert!(e.contains("5 s is too short"), "{e}");
    }

    #[test]
    fn a_fleet_host_that_does_not_answer_is_named_and_nothing_is_made() {
        let tmp = tempfile::tempdir().unwrap();
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let a = ask(&tmp, |a| a.clients = vec![format!("127.0.0.1,{port}")]);
        let e = a.fleet(&AtomicBool::new(false)).unwrap_err().to_string();
        let want = format!("option '--client': host 127.0.0.1,{port}: ");
        assert!(e.starts_with(&want), "{e}");
        assert!(!a.output.unwrap().exists(), "nothing made");
    }
}
