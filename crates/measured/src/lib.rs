//! # ssdready-measured: what a study measured and read, as data
//!
//! The name says the promise: this crate holds what was measured (each
//! run, its figures, the block-device stack's counters) and what was read
//! of the machine (the inventory of what can cap I/O, the device's
//! basis), never what is concluded from it. The judgement — figures
//! derived from the runs, causes, verdicts, what to change — is
//! `ssdready-diagnosis`, which depends on this crate; the crates that
//! measure (`ssdready-probe`, and through it `ssdready-run`), change the
//! machine (`ssdready-tune`) or keep past results (`ssdready-history`)
//! depend on this one and need not build the judge.
//!
//! It makes no system call: the probes read the files and hand the text
//! to the parsers here ([`limits::parse`]). Its types are serialized in
//! study.json (schema `ssdready.study`, `docs/study-schema.md`); their
//! serde attributes are the schema.
//!
//! * [`record`]: each run, the targets, the machine, the shape of a
//!   verdict and its evidence;
//! * [`summary`]: a run's figures as the study uses them;
//! * [`curve`]: the queue-depth curve's point as study.json keeps it, and
//!   the median that combines repeats;
//! * [`schema`]: the study document's schema name and versions;
//! * [`basis`]: what the device can do, known apart from the study's runs
//!   (the emulator's analytic model's limit, the raw device, a
//!   specification);
//! * [`limits`]: the inventory of what can cap I/O — cgroup throttles and
//!   quotas, the cpuset and affinity, memory limits, the devices' queues —
//!   with each value's source, its parsers ([`limits::parse`]), its text,
//!   and the cgroups' counters over a run ([`limits::counters`]);
//! * [`group_limits`]: the limits of the study's own control groups, which
//!   of them hold, and what lifting one alone leaves and keeps (the plan
//!   `ssdready-tune` carries out);
//! * [`stack_layers`]: the block-device stack under a target and its
//!   devices' counters.
//!
//! The `fixtures` feature adds inventories of planted control groups
//! (`group_limits::fixtures`) for other crates' tests.

#![forbid(unsafe_code)]

pub mod basis;
pub mod curve;
pub mod group_limits;
pub mod limits;
pub mod record;
pub mod schema;
pub mod stack_layers;
pub mod summary;
