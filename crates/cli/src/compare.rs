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
//!
//! Here: the command line, the output files and what is printed; reading
//! the results and judging them are `ssdready_history`'s (`load`,
//! `compare`, `outcome`).

use crate::stdout::out;
use crate::{fail, say};
use ssdready_diagnosis::model::StudyDoc;
use ssdready_history::compare::{compare, render_text, Comparison};
use ssdready_history::figures::Document;
pub use ssdready_history::load::Baseline;
use ssdready_history::load::{self, load, Loaded};
use ssdready_history::outcome::{self, differences};
use ssdready_history::{Kind, Side};
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

/// Where `--output DIR` puts compare.json, checked before anything is read.
fn output_dir(dir: &Path) -> Result<PathBuf, crate::Exit> {
    if let Err(why) = ssdready_written::vet(dir, ssdready_written::Allow::Dir) {
        return Err(fail(
            2,
            &format!("option '--output': {}: {why}", dir.display()),
        ));
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(fail(
            2,
            &format!(
                "option '--output': directory {} does not exist",
                parent.display()
            ),
        ));
    }
    let probe = if dir.is_dir() {
        dir.join("compare.json")
    } else {
        parent.join(".ssdready-compare-probe")
    };
    if let Err(e) = crate::output::check(&probe, "option '--output'") {
        return Err(fail(2, &e.to_string()));
    }
    Ok(dir.join("compare.json"))
}

/// Write `compare.json` and `compare.html` (each atomically) into `dir`,
/// made if missing.
fn write_outputs(
    dir: &Path,
    c: &Comparison,
    a: &ReportDoc,
    b: &ReportDoc,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let file = dir.join("compare.json");
    let text = serde_json::to_string_pretty(c).expect("a comparison serialises") + "\n";
    crate::output::write(&crate::output::Sink::File(file.clone()), &text)?;
    let html = ssdready_report::html::render_compare(a, b, &differences(c));
    crate::output::write(&crate::output::Sink::File(dir.join("compare.html")), &html)?;
    Ok(file)
}

/// The document as the report crate takes it: a study read whole from
/// its text (the history reads only the fields it compares), so that a
/// study document that does not read is bad input here as it is for the
/// report.
fn report_doc(l: &Loaded) -> Result<ReportDoc, String> {
    match &l.doc {
        Document::Study(_) => {
            // Read as the text's value, as the history reads its view.
            let v: serde_json::Value = serde_json::from_str(&l.text).map_err(|e| e.to_string())?;
            serde_json::from_value::<StudyDoc>(v)
                .map(|d| ReportDoc::Study(Box::new(d)))
                .map_err(|e| {
                    let file = l
                        .origin
                        .path
                        .as_deref()
                        .unwrap_or(Path::new(&l.origin.given));
                    let at = match l.origin.history_id {
                        Some(id) => format!("history id {id}: its result {}", file.display()),
                        None => file.display().to_string(),
                    };
                    format!("{at}: a study document that does not read: {e}")
                })
        }
        Document::Run(r) => Ok(ReportDoc::Run(r.clone())),
    }
}

/// Run `ssdready compare`.
pub fn command(a: CompareArgs) -> crate::Done {
    if let Some(dir) = &a.output {
        output_dir(dir)?;
    }
    let load_or_fail = |given: &str, which: &str| {
        let l = load(given, a.db.as_deref())
            .map_err(|e| fail(e.exit_code(), &format!("{which}: {e}")))?;
        let whole = report_doc(&l).map_err(|e| fail(2, &format!("{which}: {e}")))?;
        Ok::<_, crate::Exit>((l, whole))
    };
    let (la, ra) = load_or_fail(&a.a, "A")?;
    let (lb, rb) = load_or_fail(&a.b, "B")?;
    let (sa, sb) = (la.doc.side(), lb.doc.side());
    let c = compare((la.origin, &sa), (lb.origin, &sb));
    if !c.comparable {
        let text = render_text(&c, a.all);
        out!(
            "{}",
            text.lines()
                .take(2)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        )?;
        return Err(fail(
            2,
            &format!("not comparable: {}", c.not_comparable.join("; ")),
        ));
    }
    out!("{}", render_text(&c, a.all))?;
    if let Some(dir) = &a.output {
        match write_outputs(dir, &c, &ra, &rb) {
            Ok(p) => eprintln!("ssdready: wrote {}", p.display()),
            Err(e) => return Err(fail(1, &e)),
        }
    }
    Ok(())
}

/// Read the baseline of a `kind`; bad input ends the command (exit code 2).
pub fn baseline(given: &str, db: Option<&Path>, kind: Kind) -> Result<Baseline, crate::Exit> {
    load::baseline(given, db, kind)
        .map_err(|e| fail(e.exit_code(), &format!("option '--baseline': {e}")))
}

/// Judge `new` against the baseline, saying what regressed on stderr;
/// returns 3 when a key figure got worse beyond the noise, 1 when the two
/// cannot be compared, else 0.
pub fn regression_check(base: &Baseline, new: &Side) -> i32 {
    let check = outcome::regression_check(base, new);
    for line in check.lines() {
        say(&line);
    }
    check.exit_code()
}
