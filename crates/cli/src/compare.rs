//! `ssdready compare A B`: two results side by side, the differences that
//! exceed the noise seen in repeats (`ssdready_history::compare`); and
//! `--baseline` on `study` and `run`, the same comparison as a regression
//! check (exit code 3 when a key figure got worse beyond the noise).
//!
//! A and B are each a study directory (its `study.json`), a JSON file (a
//! `study.json` or a run's native JSON) or a history id. Naming something
//! that is none of these is bad input (exit code 2, nothing written), and
//! so are two results that measured different things: the command says
//! why instead of inventing differences.

use crate::history::{db_path, error_code};
use crate::{fail, say};
use ssdready_history::compare::{
    compare, render_regressions, render_text, Comparison, Origin, Row, Verdict,
};
use ssdready_history::figures::Document;
use ssdready_history::{History, Kind, Side};
use ssdready_report::html::ReportDoc;
use std::path::{Path, PathBuf};

/// The `compare` command line.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The reference: a study directory, a study.json, a run's native JSON, or a history id.
    pub a: String,
    /// The other, named the same ways.
    pub b: String,
    /// The history database that ids refer to (default: $XDG_DATA_HOME/ssdready/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Write DIR/compare.json (docs/compare-schema.md) and DIR/compare.html (the two curves overlaid).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Show every figure, not only the differences.
    #[arg(long)]
    pub all: bool,
}

/// A result read from where the user named it.
pub struct Loaded {
    pub origin: Origin,
    pub doc: Document,
}

/// The largest JSON file read (a long full study is tens of MB).
const MAX_JSON_BYTES: u64 = 1 << 30;

fn read_json(path: &Path) -> Result<Document, String> {
    let md = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !md.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if md.len() > MAX_JSON_BYTES {
        return Err(format!("{} is larger than 1 GiB", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Document::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Read what `given` names; the error is one line and its exit code.
pub fn load(given: &str, db: Option<&Path>) -> Result<Loaded, (i32, String)> {
    let bad = |m: String| (2, m);
    let p = Path::new(given);
    if p.exists() {
        let file = if p.is_dir() {
            let f = p.join("study.json");
            if !f.is_file() {
                return Err(bad(format!(
                    "{given} is a directory without a study.json (allowed: a study directory, a study.json or a run's native JSON, or a history id)"
                )));
            }
            f
        } else {
            p.to_path_buf()
        };
        let doc = read_json(&file).map_err(bad)?;
        return Ok(Loaded {
            origin: Origin {
                given: given.into(),
                path: Some(file),
                history_id: None,
            },
            doc,
        });
    }
    let Ok(id) = given.parse::<i64>() else {
        return Err(bad(format!(
            "'{given}' is neither a file, a directory nor a history id (allowed: a study directory, a study.json or a run's native JSON, or a history id)"
        )));
    };
    let path = db_path(db).map_err(|e| bad(e.to_string()))?;
    let h = match History::open_existing(&path) {
        Ok(Some(h)) => h,
        Ok(None) => {
            return Err(bad(format!(
                "history id {id}: there is no history database at {} (give --db, or a file)",
                path.display()
            )))
        }
        Err(e) => return Err((error_code(&e), e.to_string())),
    };
    let e = h
        .get(id)
        .map_err(|e| (error_code(&e), e.to_string()))?
        .ok_or_else(|| {
            bad(format!(
                "history id {id}: no such entry in {} (ssdready history lists them)",
                path.display()
            ))
        })?;
    let file = e.json_path.ok_or_else(|| {
        bad(format!(
            "history id {id}: the entry has no saved result to compare"
        ))
    })?;
    let doc = read_json(&file).map_err(|m| bad(format!("history id {id}: its result {m}")))?;
    Ok(Loaded {
        origin: Origin {
            given: given.into(),
            path: Some(file),
            history_id: Some(id),
        },
        doc,
    })
}

/// Where `--output DIR` puts compare.json, checked before anything is read.
fn output_dir(dir: &Path) -> PathBuf {
    if let Err(why) = ssdready_io::written::vet(dir, ssdready_io::written::Allow::Dir) {
        fail(2, &format!("option '--output': {}: {why}", dir.display()));
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        fail(
            2,
            &format!(
                "option '--output': directory {} does not exist",
                parent.display()
            ),
        );
    }
    let probe = if dir.is_dir() {
        dir.join("compare.json")
    } else {
        parent.join(".ssdready-compare-probe")
    };
    if let Err(e) = crate::output::check(&probe, "option '--output'") {
        fail(2, &e);
    }
    dir.join("compare.json")
}

/// Write `compare.json` and `compare.html` (each atomically) into `dir`,
/// made if missing.
fn write_outputs(
    dir: &Path,
    c: &Comparison,
    a: &Document,
    b: &Document,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let file = dir.join("compare.json");
    let text = serde_json::to_string_pretty(c).expect("a comparison serialises") + "\n";
    crate::output::write(&crate::output::Sink::File(file.clone()), &text)?;
    let html =
        ssdready_report::html::render_compare(&report_doc(a), &report_doc(b), &differences(c));
    crate::output::write(&crate::output::Sink::File(dir.join("compare.html")), &html)?;
    Ok(file)
}

/// The document as the report crate takes it.
fn report_doc(d: &Document) -> ReportDoc {
    match d {
        Document::Study(s) => ReportDoc::Study(s.clone()),
        Document::Run(r) => ReportDoc::Run(r.clone()),
    }
}

/// The comparison's judgement as compare.html's table shows it: the
/// figures beyond the noise (all of them when none is), with the counts
/// and the notes beside.
fn differences(c: &Comparison) -> serde_json::Value {
    let beyond = |r: &&Row| r.verdict != Verdict::Same;
    let rows: Vec<serde_json::Value> = c
        .figures
        .iter()
        .filter(beyond)
        .map(|r| {
            serde_json::json!({
                "figure": r.label,
                "unit": r.unit,
                "A": r.a,
                "B": r.b,
                "change %": r.change_pct,
                "noise %": r.noise_pct,
                "noise from": r.noise_source,
                "verdict": r.verdict,
                "key": r.key,
            })
        })
        .collect();
    serde_json::json!({
        "differences": rows,
        "better": c.better,
        "worse": c.worse,
        "regressions": c.regressions.join(", "),
        "noise floor %": c.noise_floor_pct,
        "notes": c.notes.join("; "),
    })
}

/// Run `ssdready compare`.
pub fn command(a: CompareArgs) {
    if let Some(dir) = &a.output {
        output_dir(dir);
    }
    let load_or_fail = |given: &str, which: &str| {
        load(given, a.db.as_deref())
            .unwrap_or_else(|(code, m)| fail(code, &format!("{which}: {m}")))
    };
    let la = load_or_fail(&a.a, "A");
    let lb = load_or_fail(&a.b, "B");
    let (sa, sb) = (la.doc.side(), lb.doc.side());
    let c = compare((la.origin, &sa), (lb.origin, &sb));
    if !c.comparable {
        let text = render_text(&c, a.all);
        print!(
            "{}",
            text.lines()
                .take(2)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
        fail(
            2,
            &format!("not comparable: {}", c.not_comparable.join("; ")),
        );
    }
    print!("{}", render_text(&c, a.all));
    if let Some(dir) = &a.output {
        match write_outputs(dir, &c, &la.doc, &lb.doc) {
            Ok(p) => eprintln!("ssdready: wrote {}", p.display()),
            Err(e) => fail(1, &e),
        }
    }
}

/// A baseline for `--baseline`, read before the study or run starts.
pub struct Baseline {
    pub origin: Origin,
    pub side: Side,
}

/// Read the baseline of a `kind`; bad input ends the command (exit code 2).
pub fn baseline(given: &str, db: Option<&Path>, kind: Kind) -> Baseline {
    let l = load(given, db)
        .unwrap_or_else(|(code, m)| fail(code, &format!("option '--baseline': {m}")));
    let side = l.doc.side();
    if side.kind != kind {
        fail(
            2,
            &format!(
                "option '--baseline': {given} is a {}; the baseline of a {} is a {}",
                side.kind.as_str(),
                kind.as_str(),
                kind.as_str()
            ),
        );
    }
    Baseline {
        origin: l.origin,
        side,
    }
}

/// Judge `new` against the baseline, saying what regressed on stderr;
/// returns 3 when a key figure got worse beyond the noise, 1 when the two
/// cannot be compared, else 0.
pub fn regression_check(base: &Baseline, new: &Side) -> i32 {
    let origin = Origin {
        given: "this run".into(),
        ..Origin::default()
    };
    let c = compare((base.origin.clone(), &base.side), (origin, new));
    if !c.comparable {
        say(&format!(
            "the baseline ({}) is not comparable: {}; no regression check was made",
            base.origin.given,
            c.not_comparable.join("; ")
        ));
        return 1;
    }
    if c.regressions.is_empty() {
        say(&format!(
            "no regression against the baseline ({}): none of {} key figures got worse beyond the noise ({} figures better, {} worse that are not key figures)",
            base.origin.given,
            c.figures.iter().filter(|r| r.key).count(),
            c.better,
            c.worse
        ));
        return 0;
    }
    for line in render_regressions(&c).lines() {
        say(line);
    }
    3
}
