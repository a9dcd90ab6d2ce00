//! Options: one table of option definitions ([`TABLES`], in parts) drives parsing, validation
//! messages and `ssdready options`. Command-line `--name=value` pairs and fio
//! job-file lines both go through [`apply`], via [`build_jobs`]; nothing else
//! sets a [`JobSpec`] field. Options fio has that are not in the table are
//! ignored on purpose or refused as not supported yet ([`crate::optsets`]).
//!
//! Options are applied in order, as fio does: `kb_base` affects the sizes that
//! follow it; `rwmixwrite` sets `rwmixread` to its complement.

use crate::host::Host;
pub use crate::option_def::{Arity, OptionDef};
pub use crate::option_table::OPTIONS;
pub use crate::option_table_io::IO_OPTIONS;
use crate::spec::*;
use std::collections::BTreeMap;

/// The option tables, one for each part of a job: its shape (the main
/// table), files, I/O (verification, syncs, buffers), replay, zoned
/// devices, passthrough, run-time resources, scheduling, engines' own
/// options, library engines, file access, logs, sprandom, random offsets,
/// submission and completion, pacing, start and end, and the report.
pub const TABLES: &[&[OptionDef]] = &[
    OPTIONS,
    crate::option_table_files::FILE_OPTIONS,
    IO_OPTIONS,
    crate::option_table_replay::REPLAY_OPTIONS,
    crate::option_table_zbd::ZBD_OPTIONS,
    crate::option_table_passthru::PASSTHRU_OPTIONS,
    crate::option_table_run::RUN_OPTIONS,
    crate::option_table_sched::SCHED_OPTIONS,
    crate::option_table_engines::ENGINE_OPTIONS,
    crate::option_table_library::LIBRARY_OPTIONS,
    crate::option_table_access::ACCESS_OPTIONS,
    crate::option_table_logs::LOG_OPTIONS,
    crate::option_table_sprandom::SPRANDOM_OPTIONS,
    crate::option_table_random::RANDOM_OPTIONS,
    crate::option_table_submit::SUBMIT_OPTIONS,
    crate::option_table_rate::RATE_OPTIONS,
    crate::option_table_flow::FLOW_OPTIONS,
    crate::option_table_report::REPORT_OPTIONS,
];

/// The options engines declare in their own files (`ssdready-io`'s
/// `engines/`, as their facts: [`crate::engines`]), gathered by the
/// linker. Such an option keeps its value as written in
/// [`crate::spec_types::EngineOptions::own`], where its engine reads it.
#[linkme::distributed_slice]
pub static OPTIONS_IN_FILES: [OptionDef];

/// Every option: the [`TABLES`], then [`OPTIONS_IN_FILES`].
fn every() -> impl Iterator<Item = &'static OptionDef> {
    TABLES
        .iter()
        .flat_map(|t| t.iter())
        .chain(OPTIONS_IN_FILES.iter())
}

/// Every supported option, sorted by name (from all the [`TABLES`] and
/// the engines' files).
pub fn all() -> Vec<&'static OptionDef> {
    let mut v: Vec<&'static OptionDef> = every().collect();
    v.sort_unstable_by_key(|o| o.name);
    v
}

/// Look an option up by name or alias.
pub fn find(name: &str) -> Option<&'static OptionDef> {
    every().find(|o| o.name == name || o.aliases.contains(&name))
}

/// A job from `name[=value]` words, each [`apply`]'d in order as a job
/// file's lines are: for tests and examples. The first option that is
/// not one, or whose value is refused, says so.
pub fn job_of(text: &str) -> Result<JobSpec, String> {
    let mut s = JobSpec::default();
    for kv in text.split_whitespace() {
        let (k, v) = kv.split_once('=').map_or((kv, None), |(k, v)| (k, Some(v)));
        apply(&mut s, k, v).map_err(|e| e.to_string())?;
    }
    Ok(s)
}

/// The closest option names, for "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
    fn dist(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                cur.push(
                    (prev[j] + usize::from(ca != *cb))
                        .min(prev[j + 1] + 1)
                        .min(cur[j] + 1),
                );
            }
            prev = cur;
        }
        prev[b.len()]
    }
    all()
        .into_iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|n| (dist(name, n), n))
        .filter(|(d, _)| *d <= 2 && *d < name.chars().count())
        .min()
        .map(|(_, n)| n)
}

/// Apply one `name[=value]` to a spec: a supported option sets its field;
/// an ignored one is noted in `spec.ignored`; a not-yet one or an unknown one
/// is an error.
pub fn apply(spec: &mut JobSpec, name: &str, value: Option<&str>) -> Result<(), SpecError> {
    let Some(def) = find(name) else {
        let canonical = crate::optsets::canonical(name);
        let alias = if canonical == name {
            String::new()
        } else {
            format!(" (fio's other name for '{canonical}')")
        };
        if let Some(why) = crate::optsets::ignored(name) {
            spec.ignored.push(format!("{name}{alias}: {why}"));
            return Ok(());
        }
        if let Some(refusal) = crate::optsets::refused_at_run(name, value) {
            // A job's own value replaces its [global] one.
            let (set, named) = (format!("option '{name}="), format!("option '{name}'"));
            spec.refused
                .retain(|r| !r.starts_with(&set) && !r.starts_with(&named));
            if let Some(why) = refusal {
                let v = value.map(|v| format!("={v}")).unwrap_or_default();
                spec.refused
                    .push(format!("option '{name}{v}'{alias}: {why}"));
            }
            return Ok(());
        }
        if crate::optsets::not_yet(name) {
            return Err(SpecError::new(name, format!("is not supported yet{alias}")));
        }
        let hint = suggest(name)
            .map(|s| format!("; did you mean '{s}'?"))
            .unwrap_or_default();
        return Err(SpecError::new(
            name,
            format!("unknown option (see 'ssdready options'){hint}"),
        ));
    };
    let v = match (def.arity, value) {
        (Arity::Flag, None) => "1",
        (Arity::Optional, None) => "",
        (Arity::Value, None) | (Arity::Value, Some("")) => {
            return Err(SpecError::new(
                def.name,
                format!("needs a value (allowed: {})", def.allowed_values()),
            ))
        }
        (_, Some(v)) => v,
    };
    (def.set)(spec, v)
        .map_err(|m| SpecError::new(def.name, format!("{m} (allowed: {})", def.allowed_values())))
}

/// One `name[=value]` as written, with where it was written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawOption {
    /// Option name.
    pub key: String,
    /// Value, if any.
    pub value: Option<String>,
    /// `line N` (or `FILE line N` in an included file); None on the command line.
    pub at: Option<String>,
}

/// Where a [`RawOption::default_of`] was "written": nowhere the user did.
pub const TOOL_DEFAULT: &str = "the tool's default";

impl RawOption {
    /// An option given on the command line.
    pub fn cli(key: &str, value: Option<&str>) -> Self {
        RawOption {
            key: key.into(),
            value: value.map(String::from),
            at: None,
        }
    }

    /// A default the tool sets as if given first (ssdready called as
    /// `fio`: fio's engine); not listed among the options given.
    pub fn default_of(key: &str, value: &str) -> Self {
        RawOption {
            key: key.into(),
            value: Some(value.into()),
            at: Some(TOOL_DEFAULT.into()),
        }
    }

    /// Whether the tool set it ([`RawOption::default_of`]).
    pub fn is_tool_default(&self) -> bool {
        self.at.as_deref() == Some(TOOL_DEFAULT)
    }
}

/// A `[global]` or job section, from a job file or the command line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    /// The job's name (`global` for a global section).
    pub name: String,
    /// Whether this is a `[global]` section.
    pub global: bool,
    /// The options in order.
    pub options: Vec<RawOption>,
}

/// Options that set the same field: an error about one may be due to the
/// other, whichever was written last.
const SAME_FIELD: &[(&str, &str)] = &[
    ("cpus_allowed", "cpumask"),
    ("bs", "bsrange"),
    ("bs", "bssplit"),
    ("rwmixread", "rwmixwrite"),
];

/// Where each option of one job (by its table name) was last written, and
/// in which order, so that whole-job errors can say `line N` too.
#[derive(Default)]
struct Written<'a> {
    at: BTreeMap<&'a str, (usize, Option<&'a str>)>,
    count: usize,
}

impl<'a> Written<'a> {
    fn note(&mut self, o: &'a RawOption) {
        let name = find(&o.key).map_or(o.key.as_str(), |d| d.name);
        self.count += 1;
        self.at.insert(name, (self.count, o.at.as_deref()));
    }

    /// The error, naming the option actually written last for its field
    /// and where it was written.
    fn locate(&self, mut e: SpecError) -> SpecError {
        let mut best = self.at.get(e.option.as_str()).copied();
        for &(a, b) in SAME_FIELD {
            let other = match e.option.as_str() {
                x if x == a => b,
                x if x == b => a,
                _ => continue,
            };
            if let Some(w) = self.at.get(other).copied() {
                if best.is_none_or(|(n, _)| w.0 > n) {
                    best = Some(w);
                    e.option = other.to_string();
                }
            }
        }
        e.at(best.and_then(|(_, at)| at))
    }
}

/// The global options in effect for the last job, for fio's `global options`.
pub fn global_options(sections: &[Section]) -> Vec<(String, String)> {
    sections
        .iter()
        .filter(|s| s.global)
        .flat_map(|s| s.options.iter())
        .filter(|o| !o.is_tool_default())
        .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
        .collect()
}

/// Build validated specs from sections in order: every job starts from the
/// defaults, then every global section seen so far (fio's rule: a `[global]`
/// applies to the jobs after it), then its own options. With no job section,
/// the globals form one job named `job`. Machine limits are not checked:
/// see [`build_jobs_on`].
pub fn build_jobs(sections: &[Section]) -> Result<Vec<JobSpec>, SpecError> {
    build_jobs_on(sections, &Host::default())
}

/// [`build_jobs`], also checking each job against what `host` has (CPUs,
/// AIO requests). An error of the whole-job checks names where the option
/// at fault was last written.
pub fn build_jobs_on(sections: &[Section], host: &Host) -> Result<Vec<JobSpec>, SpecError> {
    let mut globals: Vec<&RawOption> = Vec::new();
    let mut out = Vec::new();
    let implicit = [Section {
        name: "job".into(),
        global: false,
        options: Vec::new(),
    }];
    let has_jobs = sections.iter().any(|s| !s.global);
    let all: Vec<&Section> = sections
        .iter()
        .chain(if has_jobs { &[][..] } else { &implicit[..] })
        .collect();
    for sec in all {
        if sec.global {
            globals.extend(sec.options.iter());
            continue;
        }
        let mut spec = JobSpec {
            name: sec.name.clone(),
            ..JobSpec::default()
        };
        let mut written = Written::default();
        for o in &globals {
            apply(&mut spec, &o.key, o.value.as_deref())
                .map_err(|e| e.in_job(&sec.name).at(o.at.as_deref()))?;
            written.note(o);
        }
        for o in &sec.options {
            apply(&mut spec, &o.key, o.value.as_deref())
                .map_err(|e| e.in_job(&sec.name).at(o.at.as_deref()))?;
            spec.options_given
                .push((o.key.clone(), o.value.clone().unwrap_or_default()));
            written.note(o);
        }
        let locate = |e: SpecError| written.locate(e);
        // fio: a `name=` in a job's own section renames the job (kubestr's
        // `[job1]` … `name=read_iops`); a global one does not.
        if !sec.options.iter().any(|o| o.key == "name") {
            spec.name = sec.name.clone();
        }
        if spec.stonewall {
            spec.new_group = true;
        }
        spec.settle();
        // fio: named files use the first of several directories.
        if let Some(dir) = spec
            .directory
            .as_deref()
            .and_then(|d| crate::option_values::split_names(d).into_iter().next())
        {
            for f in spec.filename.iter_mut() {
                if !f.starts_with('/') && !f.starts_with("emu") {
                    *f = format!("{}/{f}", dir.trim_end_matches('/'));
                }
            }
        }
        spec.validate().map_err(locate)?;
        crate::host::check(&spec, host).map_err(locate)?;
        out.push(spec);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(s: &[(&str, &str)]) -> Vec<RawOption> {
        s.iter().map(|(k, v)| RawOption::cli(k, Some(v))).collect()
    }

    fn global(s: &[(&str, &str)]) -> Section {
        Section {
            name: "global".into(),
            global: true,
            options: kv(s),
        }
    }

    #[test]
    fn table_is_sorted_and_unique() {
        for part in TABLES {
            let names: Vec<_> = part.iter().map(|o| o.name).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(names, sorted, "each part sorted by name");
        }
        let names: Vec<_> = all()
            .iter()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "names and aliases are unique");
        for n in &names {
            assert!(find(n).is_some());
        }
    }

    #[test]
    fn globals_then_job_options() {
        let secs = [
            global(&[
                ("filename", "/x"),
                ("bs", "4k"),
                ("iodepth", "8"),
                ("ioengine", "io_uring"),
            ]),
            Section {
                name: "a".into(),
                global: false,
                options: kv(&[("bs", "8k")]),
            },
        ];
        let specs = build_jobs(&secs).unwrap();
        assert_eq!(specs[0].bs, BlockSizes::Fixed(8192));
        assert_eq!(specs[0].iodepth, 8);
        assert_eq!(specs[0].filename, vec!["/x".to_string()]);
    }

    #[test]
    fn bad_values_name_the_option_and_the_allowed_values() {
        let mut s = JobSpec::default();
        let e = apply(&mut s, "bs", Some("4q")).unwrap_err();
        assert_eq!(e.option, "bs");
        assert!(e.message.contains("allowed"), "{e}");
        let e = apply(&mut s, "iodepth", Some("0")).unwrap_err();
        assert!(e.to_string().contains("at least 1"), "{e}");
        let e = apply(&mut s, "profile", Some("tiobench")).unwrap_err();
        assert!(e.to_string().contains("'tiobench' profile"), "{e}");
        apply(&mut s, "thread", None).unwrap();
        assert!(s.ignored[0].starts_with("thread: "));
        let e = apply(&mut s, "iodeph", Some("4")).unwrap_err();
        assert!(e.to_string().contains("did you mean 'iodepth'"), "{e}");
        let e = apply(&mut s, "rw", Some("randomread")).unwrap_err();
        assert!(e.to_string().contains("randread"), "{e}");
    }

    #[test]
    fn whole_job_errors_name_the_line_of_the_option_at_fault() {
        let at = |line: &str| RawOption {
            key: String::new(),
            value: None,
            at: Some(line.into()),
        };
        let opt = |k: &str, v: &str, line: &str| RawOption {
            key: k.into(),
            value: Some(v.into()),
            ..at(line)
        };
        let secs = [Section {
            name: "j".into(),
            global: false,
            options: vec![
                opt("ioengine", "null", "line 2"),
                opt("size", "4k", "line 3"),
                opt("bssplit", "4k/50:8k/50", "line 4"),
            ],
        }];
        let e = build_jobs(&secs).unwrap_err();
        assert_eq!(e.at.as_deref(), Some("line 4"), "{e}");
        assert_eq!(e.option, "bssplit", "{e}");
        let host = Host {
            cpus: Some(vec![0, 1]),
            aio_requests: None,
        };
        let secs = [Section {
            name: "j".into(),
            global: false,
            options: vec![
                opt("ioengine", "null", "line 2"),
                opt("size", "1m", "line 3"),
                opt("cpumask", "0xf", "line 7"),
            ],
        }];
        let e = build_jobs_on(&secs, &host).unwrap_err();
        assert_eq!(
            e.to_string(),
            "job 'j' (line 7): option 'cpumask': CPUs 2-3 are not available to this process (allowed: CPUs 0-1)"
        );
        assert!(build_jobs(&secs).is_ok(), "no host, no machine check");
    }

    #[test]
    fn values_beyond_their_type_are_refused_not_truncated() {
        let mut s = JobSpec::default();
        for (k, v) in [
            ("iodepth_batch_complete_max", "4294967297"),
            ("iodepth_batch_complete_min", "4294967296"),
            ("iodepth_batch_submit", "4294967297"),
            ("sqthread_poll_cpu", "4294967296"),
            ("numjobs", "4294967297"),
            ("iodepth", "65537"),
            ("log_avg_msec", "18446744073709551615"),
            ("bs", "4g"),
            ("runtime", "1e400"),
            ("thinktime", "99999999999999999999"),
        ] {
            let e = apply(&mut s, k, Some(v)).unwrap_err();
            assert_eq!(e.option, k, "{e}");
            assert!(e.message.contains("allowed"), "{e}");
        }
        let many: Vec<String> = (1..=65).map(|i| format!("{i}k/")).collect();
        let e = apply(&mut s, "bssplit", Some(&many.join(":"))).unwrap_err();
        assert!(e.to_string().contains("at most 64"), "{e}");
        assert_eq!(s, JobSpec::default(), "nothing was set");
    }

    #[test]
    fn control_characters_and_nul_bytes_are_refused() {
        let job = |name: &str, file: &str| Section {
            name: name.into(),
            global: false,
            options: kv(&[("filename", file), ("size", "1m")]),
        };
        assert!(build_jobs(&[job("a\u{1b}[2J", "/x")]).is_err());
        let e = build_jobs(&[job("ok", "/x\0y")]).unwrap_err();
        assert_eq!(e.option, "filename");
        assert!(build_jobs(&[job("ünïcode ok", "/x")]).is_ok());
    }

    #[test]
    fn bs_larger_than_size_is_refused() {
        let e =
            build_jobs(&[global(&[("filename", "/x"), ("size", "4k"), ("bs", "8k")])]).unwrap_err();
        assert_eq!(e.option, "bs");
    }

    #[test]
    fn missing_filename_means_the_emulator() {
        let j = build_jobs(&[global(&[("rw", "read")])]).unwrap();
        assert!(j[0].on_emulator(), "no filename: the emulator");
        assert!(build_jobs(&[global(&[("ioengine", "null"), ("size", "1m")])]).is_ok());
        let j = build_jobs(&[global(&[("filename", "emu:x25e,size=1g")])]).unwrap();
        assert_eq!(j[0].filename, vec!["emu:x25e,size=1g".to_string()]);
        assert!(j[0].on_emulator());
    }

    #[test]
    fn bssplit_fills_blank_weights() {
        let mut s = JobSpec::default();
        apply(&mut s, "bssplit", Some("4k/50:8k/:64k/")).unwrap();
        assert_eq!(
            s.bs,
            BlockSizes::Split(vec![(4096, 50), (8192, 25), (65536, 25)])
        );
    }

    #[test]
    fn distributions_parse() {
        let mut s = JobSpec::default();
        apply(&mut s, "random_distribution", Some("zipf:1.2")).unwrap();
        assert_eq!(s.random_distribution, Distribution::Zipf(1.2));
        assert!(apply(&mut s, "random_distribution", Some("pareto:1.5")).is_err());
        apply(&mut s, "random_distribution", Some("zipf")).unwrap();
        assert_eq!(
            s.random_distribution,
            Distribution::Zipf(1.1),
            "fio's default θ"
        );
        assert!(apply(&mut s, "random_distribution", Some("zipf:1")).is_err());
        apply(&mut s, "random_distribution", Some("zipf:1.2:0.25")).unwrap();
        assert_eq!(
            (s.random_distribution.clone(), s.random_center),
            (Distribution::Zipf(1.2), Some(0.25))
        );
        let e = apply(&mut s, "random_distribution", Some("normal:5:1.5")).unwrap_err();
        assert!(e.to_string().contains("center"), "{e}");
        apply(&mut s, "random_distribution", Some("gauss")).unwrap();
        assert_eq!(s.random_distribution, Distribution::Normal(0.0));
    }

    #[test]
    fn zoned_distributions_parse_as_fio_fills_them() {
        let mut s = JobSpec::default();
        apply(&mut s, "random_distribution", Some("zoned:50/5:30/15:20/")).unwrap();
        let z = |a, sp| Zone {
            access_pct: a,
            span: sp,
        };
        let three = vec![z(50, 5), z(30, 15), z(20, 80)];
        assert_eq!(
            s.random_distribution,
            Distribution::Zoned(Box::new([three.clone(), three.clone(), three.clone()]))
        );
        apply(
            &mut s,
            "random_distribution",
            Some("zoned:50/5:30/15:20/,50/10:50/90"),
        )
        .unwrap();
        let Distribution::Zoned(d) = &s.random_distribution else {
            panic!()
        };
        assert_eq!(d[0], three);
        assert_eq!(d[1], vec![z(50, 10), z(50, 90)]);
        assert_eq!(d[2], d[1]);
        apply(
            &mut s,
            "random_distribution",
            Some("zoned_abs:60/20G:30/100G:10/500g"),
        )
        .unwrap();
        let Distribution::ZonedAbs(d) = &s.random_distribution else {
            panic!()
        };
        assert_eq!(d[0][1], z(30, 100 << 30));
        let e = apply(&mut s, "random_distribution", Some("zoned:50/5:30/15")).unwrap_err();
        assert!(e.to_string().contains("add up to 80%"), "{e}");
    }

    #[test]
    fn per_direction_values_set_each_direction() {
        let mut s = JobSpec::default();
        apply(&mut s, "bs", Some("4k,64k")).unwrap();
        assert_eq!(s.bs.for_dir(0), &BlockSizes::Fixed(4096));
        assert_eq!(s.bs.for_dir(2), &BlockSizes::Fixed(65536));
        apply(&mut s, "bssplit", Some(",8k/50:16k/50")).unwrap();
        assert_eq!(
            s.bs.for_dir(0),
            &BlockSizes::Fixed(4096),
            "reads keep theirs"
        );
        assert_eq!(
            s.bs.for_dir(1),
            &BlockSizes::Split(vec![(8192, 50), (16384, 50)])
        );
        apply(&mut s, "bsrange", Some("1k-4k,2k:8k")).unwrap();
        assert_eq!(
            s.bs.for_dir(1),
            &BlockSizes::Range {
                min: 2048,
                max: 8192
            }
        );
        apply(&mut s, "bs", Some("8k")).unwrap();
        assert_eq!(s.bs, BlockSizes::Fixed(8192), "three equal collapse to one");
        apply(&mut s, "rate", Some("1m,500k")).unwrap();
        assert_eq!(
            s.rate_bytes,
            [Some(1 << 20), Some(500 << 10), Some(500 << 10)]
        );
        apply(&mut s, "rate", Some(",200k,")).unwrap();
        assert_eq!(
            s.rate_bytes,
            [Some(1 << 20), Some(200 << 10), Some(500 << 10)]
        );
        apply(&mut s, "rate_iops", Some("300,300,300")).unwrap();
        assert_eq!(s.rate_iops, [Some(300); 3]);
        let e = apply(&mut s, "bs", Some("4k,8q")).unwrap_err();
        assert!(e.to_string().contains("write: "), "{e}");
    }

    #[test]
    fn rw_postfixes_and_percentages() {
        let mut s = JobSpec::default();
        apply(&mut s, "rw", Some("randread:8")).unwrap();
        assert_eq!((s.rw, s.rw_seq_nr), (RwMode::RandRead, 8));
        apply(&mut s, "rw", Some("read:-8k")).unwrap();
        assert_eq!((s.rw, s.rw_seq_add), (RwMode::Read, -8192));
        apply(&mut s, "rw", Some("write:112k")).unwrap();
        assert_eq!(s.rw_seq_add, 112 << 10);
        assert!(apply(&mut s, "rw", Some("randread:0")).is_err());
        apply(&mut s, "size", Some("50%")).unwrap();
        assert_eq!((s.size, s.size_percent), (None, Some(50)));
        apply(&mut s, "offset", Some("25%")).unwrap();
        assert_eq!(s.offset_percent, Some(25));
        apply(&mut s, "offset_increment", Some("10%")).unwrap();
        assert_eq!(s.offset_increment, Amount::Percent(10));
        apply(&mut s, "size", Some("(2*1g)")).unwrap();
        assert_eq!((s.size, s.size_percent), (Some(2 << 30), None));
        let e = apply(&mut s, "size", Some("2*1g")).unwrap_err();
        assert!(e.to_string().contains("(2*1g)"), "{e}");
    }

    #[test]
    fn aliases_of_options_fio_has_resolve() {
        let mut s = JobSpec::default();
        apply(&mut s, "blockalign", Some("4k")).unwrap();
        assert_eq!(s.ba, [4096; 3]);
        apply(&mut s, "nr_files", Some("4")).unwrap();
        assert_eq!(s.nrfiles, 4);
        apply(&mut s, "fileoffset", Some("1m")).unwrap();
        assert_eq!(s.offset, 1 << 20);
        apply(&mut s, "disable_bw", None).unwrap();
        assert!(s.ignored.last().unwrap().contains("disable_bw_measurement"));
        apply(&mut s, "ratemin", Some("1m")).unwrap();
        assert_eq!(s.rate_min_bytes, [Some(1 << 20); 3]);
        apply(&mut s, "ratecycle", Some("500")).unwrap();
        assert_eq!(s.rate_cycle_ms, 500);
        apply(&mut s, "fill_fs", Some("1")).unwrap();
        assert!(s.fill_device);
        apply(&mut s, "mem_align", Some("64k")).unwrap();
        assert_eq!(s.run.mem.align, 64 << 10);
        apply(&mut s, "threads", Some("1")).unwrap();
        assert!(s.ignored.last().unwrap().contains("tiobench"));
    }
}
