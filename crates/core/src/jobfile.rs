//! fio's job-file format (INI): `[global]` and job sections, `;`/`#`
//! comments, value-less flags, `include FILE`, and `${VAR}` expansion (plus
//! fio's reserved `$pagesize`, `$mb_memory`, `$ncpus`, with fio's `bc` math
//! on a value that used one: `size=8*$mb_memory`).
//!
//! fio's rules, kept: a `;` or `#` anywhere on a line ends it (an inline
//! comment, `numjobs=4 ; four threads`; fio cuts a path containing one too);
//! a section whose name starts with `global` is a global section.
//!
//! The parser is pure: the caller supplies how to read an included file and
//! how to look a variable up, so it can be tested without a file system.
//! The caller's reader is the one place an include is resolved, checked
//! and read: it gets the name exactly as parsed (after `include` and any
//! white space, form feed and no-break space included, up to a comment)
//! and the path of the file that includes it, for includes nested in
//! included files too. What one job file expands to is bounded: includes
//! nest at most [`MAX_INCLUDE_DEPTH`] deep, [`MAX_INCLUDES`] files are
//! included in all, and the texts add up to at most [`MAX_EXPANDED_BYTES`]
//! (files that include each other many times over would otherwise expand
//! without end).
//! Each option keeps where it was written, so errors can say
//! `job 'seq-read' (line 12): option 'exitall_on_error' is not supported yet`.

use crate::options::{RawOption, Section};
use crate::spec::SpecError;

/// An included file as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Included {
    /// How messages name it (`common.fio line 3`).
    pub label: String,
    pub text: String,
    /// Where it is: the `from` of the includes it holds.
    pub path: String,
}

/// Reads an included file: given the name as written and the path of the
/// file that includes it (`""` for a main text that is no file), returns
/// it, or why not.
pub type IncludeFn<'a> = dyn FnMut(&str, &str) -> Result<Included, String> + 'a;
/// Looks a variable up (`VAR` of `${VAR}`, or a reserved name).
pub type EnvFn<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// How deep includes nest.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// How many files one job file includes in all, nested or not.
pub const MAX_INCLUDES: usize = 1024;
/// How much text one job file expands to with its includes.
pub const MAX_EXPANDED_BYTES: usize = 16 << 20;

/// What a job file has expanded to so far.
#[derive(Default)]
struct Expanded {
    files: usize,
    bytes: usize,
}

fn loc(label: Option<&str>, line: usize) -> String {
    match label {
        Some(l) => format!("{l} line {line}"),
        None => format!("line {line}"),
    }
}

/// A line without its comment: fio ends a line at its first `;` or `#`,
/// wherever it is (`strip_blank_end` in fio's parse.c).
pub fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(i) => line[..i].trim(),
        None => line.trim(),
    }
}

/// `text` with `${VAR}` and the reserved keywords substituted; also
/// whether a reserved keyword was (fio then does `bc` math on the value).
fn expand(text: &str, at: &str, env: &EnvFn<'_>) -> Result<(String, bool), SpecError> {
    let mut keyword = false;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let end = body
                .find('}')
                .ok_or_else(|| SpecError::new("${", "unterminated ${...}").at(Some(at)))?;
            let name = &body[..end];
            let v = env(name).ok_or_else(|| {
                SpecError::new(&format!("${{{name}}}"), "environment variable is not set")
                    .at(Some(at))
            })?;
            out.push_str(&v);
            rest = &body[end + 1..];
        } else {
            let reserved = ["pagesize", "mb_memory", "ncpus"]
                .into_iter()
                .find(|r| after.starts_with(r));
            match reserved.and_then(|r| env(r).map(|v| (r, v))) {
                Some((r, v)) => {
                    out.push_str(&v);
                    rest = &after[r.len()..];
                    keyword = true;
                }
                None => {
                    out.push('$');
                    rest = after;
                }
            }
        }
    }
    out.push_str(rest);
    Ok((out, keyword))
}

/// Parse `text` (labelled `label` in messages; None for the main file) and
/// append its sections to `out`. Options before the first section are an
/// error, as in fio. The main text is no file: its includes come `from` "".
pub fn parse_into(
    text: &str,
    label: Option<&str>,
    include: &mut IncludeFn<'_>,
    env: &EnvFn<'_>,
    out: &mut Vec<Section>,
) -> Result<(), SpecError> {
    parse_file_into(text, label, "", include, env, out)
}

/// [`parse_into`] for the text of the file at `path` (its includes come
/// `from` it).
pub fn parse_file_into(
    text: &str,
    label: Option<&str>,
    path: &str,
    include: &mut IncludeFn<'_>,
    env: &EnvFn<'_>,
    out: &mut Vec<Section>,
) -> Result<(), SpecError> {
    let mut seen = Expanded {
        files: 0,
        bytes: text.len(),
    };
    let file = File { text, label, path };
    parse_depth(&file, include, env, out, 0, &mut seen)
}

/// A text being parsed: what messages call it, and where it is.
struct File<'a> {
    text: &'a str,
    label: Option<&'a str>,
    path: &'a str,
}

/// Read the file an `include` names (`file`, at `at`), within the bounds
/// of what one job file may expand to.
fn read_include(
    file: &str,
    from: &str,
    at: &str,
    include: &mut IncludeFn<'_>,
    seen: &mut Expanded,
) -> Result<Included, SpecError> {
    let bad = |why: String| SpecError::new("include", why).at(Some(at));
    seen.files += 1;
    if seen.files > MAX_INCLUDES {
        return Err(bad(format!(
            "{file}: more than {MAX_INCLUDES} files included in all (allowed: at most \
             {MAX_INCLUDES}, nested includes counted each time)"
        )));
    }
    let inc = include(file, from).map_err(|e| bad(format!("{file}: {e}")))?;
    seen.bytes += inc.text.len();
    if seen.bytes > MAX_EXPANDED_BYTES {
        return Err(bad(format!(
            "{file}: the job file and its includes exceed {} MiB in all (allowed: at most {} MiB)",
            MAX_EXPANDED_BYTES >> 20,
            MAX_EXPANDED_BYTES >> 20
        )));
    }
    Ok(inc)
}

fn parse_depth(
    f: &File<'_>,
    include: &mut IncludeFn<'_>,
    env: &EnvFn<'_>,
    out: &mut Vec<Section>,
    depth: usize,
    seen: &mut Expanded,
) -> Result<(), SpecError> {
    let label = f.label;
    for (i, raw) in f.text.lines().enumerate() {
        let at = loc(label, i + 1);
        let line = strip_comment(raw);
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            out.push(section_header(line, name, &at)?);
            continue;
        }
        if let Some(file) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            // fio: "option <include …> outside of [] job section".
            if out.is_empty() {
                return Err(SpecError::new(line, "appears before any [section]").at(Some(&at)));
            }
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(
                    SpecError::new("include", "includes nested too deeply (a cycle?)")
                        .at(Some(&at)),
                );
            }
            let (file, _) = expand(file.trim(), &at, env)?;
            let inc = read_include(&file, f.path, &at, include, seen)?;
            let sub = File {
                text: &inc.text,
                label: Some(&inc.label),
                path: &inc.path,
            };
            parse_depth(&sub, include, env, out, depth + 1, seen)?;
            continue;
        }
        let (k, v) = option(line, &at, env)?;
        let Some(sec) = out.last_mut() else {
            return Err(SpecError::new(&k, "appears before any [section]").at(Some(&at)));
        };
        sec.options.push(RawOption {
            key: k,
            value: v,
            at: Some(at),
        });
    }
    Ok(())
}

/// A section from its header `line` (`name`: after its '[').
fn section_header(line: &str, name: &str, at: &str) -> Result<Section, SpecError> {
    // fio drops the header's last character, whatever it is
    // (`string[strlen(string) - 1] = '\0'` in fio's init.c): a
    // header without its ']' ("[job1") names the job "job".
    let name = match name.strip_suffix(']') {
        Some(n) => n,
        None => name.char_indices().last().map_or("", |(i, _)| &name[..i]),
    }
    .trim();
    if name.is_empty() {
        return Err(SpecError::new(line, "empty section name").at(Some(at)));
    }
    Ok(Section {
        name: name.to_string(),
        // fio: `strncmp(name, "global", 6)`.
        global: name.starts_with("global"),
        options: Vec::new(),
    })
}

/// An option line's key and value, its variables expanded and, where it
/// was a keyword's math, its value worked out.
fn option(line: &str, at: &str, env: &EnvFn<'_>) -> Result<(String, Option<String>), SpecError> {
    let (line, keyword) = expand(line, at, env)?;
    let (k, v) = match line.split_once('=') {
        Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
        None => (line.trim().to_string(), None),
    };
    let v = match (keyword, v) {
        (true, Some(v)) => match crate::arith::bc(&v) {
            Some(Ok(r)) => Some(r),
            Some(Err(e)) => {
                return Err(SpecError::new(
                    &k,
                    format!("'{v}': {e} (fio's keyword math is bc's integer arithmetic)"),
                )
                .at(Some(at)))
            }
            None => Some(v),
        },
        (_, v) => v,
    };
    Ok((k, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::build_jobs;

    fn parse(text: &str) -> Result<Vec<Section>, SpecError> {
        let mut out = Vec::new();
        let env = |k: &str| match k {
            "SIZE" => Some("1g".to_string()),
            "ncpus" => Some("2".to_string()),
            _ => None,
        };
        let mut inc = |f: &str, _: &str| {
            let text = match f {
                "common.fio" => "[global]\nioengine=io_uring\ndirect=1\n",
                "loop.fio" => "include loop.fio\n",
                _ => return Err("no such file".to_string()),
            };
            Ok(Included {
                label: f.into(),
                text: text.into(),
                path: f.into(),
            })
        };
        parse_into(text, None, &mut inc, &env, &mut out)?;
        Ok(out)
    }

    #[test]
    fn sections_comments_flags_and_globals() {
        let s = parse(
            "; a comment\n# another\n[global]\nbs=4k\nfilename=/dev/loop0\n\n[seq read]\nrw=read\ntime_based\nruntime=5\n\
             [global]\nbs=8k\n[rand]\nrw=randread\n",
        )
        .unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s[1].name, "seq read");
        assert_eq!(
            s[1].options[1],
            RawOption {
                key: "time_based".into(),
                value: None,
                at: Some("line 9".into())
            }
        );
        let jobs = build_jobs(&s).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].bs.max(), 4096);
        assert_eq!(
            jobs[1].bs.max(),
            8192,
            "a later [global] applies to the jobs after it"
        );
        assert!(jobs[0].time_based);
        assert_eq!(jobs[0].options_given.len(), 3);
    }

    #[test]
    fn includes_and_variables() {
        let s =
            parse("[global]\ninclude common.fio\n[j]\nfilename=/x\nsize=${SIZE}\nnumjobs=$ncpus\n")
                .unwrap();
        let jobs = build_jobs(&s).unwrap();
        assert_eq!(jobs[0].size, Some(1 << 30));
        assert_eq!(jobs[0].numjobs, 2);
        assert!(jobs[0].direct);
        let e = parse("[j]\nsize=${NOPE}\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(e.to_string().contains("NOPE"), "{e}");
        // fio: "option <include …> outside of [] job section".
        let e = parse("include common.fio\n[j]\n").unwrap_err().to_string();
        assert!(
            e.contains("before any [section]") && e.contains("line 1"),
            "{e}"
        );
        assert!(parse("[j]\ninclude loop.fio\n")
            .unwrap_err()
            .to_string()
            .contains("nested"));
        assert!(parse("[j]\ninclude missing.fio\n")
            .unwrap_err()
            .to_string()
            .contains("no such file"));
    }

    #[test]
    fn files_that_include_each_other_many_times_over_stop_at_a_bound() {
        // f0 includes f1 ten times, f1 includes f2 ten times, … : 10^8
        // includes unbounded.
        let mut reads = 0;
        let mut inc = |f: &str, _: &str| {
            reads += 1;
            let n: usize = f[1..].parse().unwrap();
            let text = match n {
                0..8 => format!("include f{}\n", n + 1).repeat(10),
                _ => "[j]\nsize=1m\n".into(),
            };
            Ok(Included {
                label: f.into(),
                text,
                path: f.into(),
            })
        };
        let mut out = Vec::new();
        let e = parse_into("[j]\ninclude f0\n", None, &mut inc, &|_| None, &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 1024 files included"), "{e}");
        assert_eq!(reads, MAX_INCLUDES);
        // A few large files included many times: the text's bound.
        let big = "; padding\n".repeat(100_000);
        let mut inc = |f: &str, _: &str| {
            Ok(Included {
                label: f.into(),
                text: big.clone(),
                path: f.into(),
            })
        };
        let text = format!("[j]\n{}", "include a\n".repeat(30));
        let e = parse_into(&text, None, &mut inc, &|_| None, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("exceed 16 MiB"), "{e}");
    }

    #[test]
    fn the_reader_gets_each_include_as_parsed_with_the_file_it_is_in() {
        let mut asked: Vec<(String, String)> = Vec::new();
        let mut inc = |f: &str, from: &str| {
            asked.push((f.to_string(), from.to_string()));
            let text = match f {
                "x.fio" => "include sub/y.fio ; /../../etc/shadow\n",
                _ => "[j]\nsize=1m\n",
            };
            Ok(Included {
                label: f.into(),
                text: text.into(),
                path: format!("/jobs/{f}"),
            })
        };
        let lines = [
            "[top]",
            "include\x0cx.fio",
            "include\x0bx.fio",
            "include\u{a0}x.fio",
            "include x.fio ; /../etc",
            "include\tx.fio#/../../etc/shadow",
        ];
        let mut out = Vec::new();
        parse_file_into(
            &lines.join("\n"),
            None,
            "/top.fio",
            &mut inc,
            &|_| None,
            &mut out,
        )
        .unwrap();
        assert_eq!(asked.len(), 10, "{asked:?}");
        for pair in asked.chunks(2) {
            assert_eq!(pair[0], ("x.fio".into(), "/top.fio".into()));
            assert_eq!(pair[1], ("sub/y.fio".into(), "/jobs/x.fio".into()));
        }
    }

    #[test]
    fn errors_name_the_job_and_the_line() {
        let s = parse("[global]\nfilename=/x\n[seq-read]\nrw=read\nprofile=act\n").unwrap();
        let e = build_jobs(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("job 'seq-read' (line 5): option 'profile'")
                && e.contains("no built-in profiles"),
            "{e}"
        );
        let e = parse("bs=4k\n[j]\n").unwrap_err();
        assert!(e.to_string().contains("before any [section]"), "{e}");
        let s = parse("[global]\nbs=4q\n[j]\nfilename=/x\n").unwrap();
        let e = build_jobs(&s).unwrap_err();
        assert!(
            e.to_string().starts_with("job 'j' (line 2): option 'bs'"),
            "{e}"
        );
    }

    #[test]
    fn inline_comments_end_a_line_as_in_fio() {
        let s = parse(
            "[global] ; defaults\nfilename=/x\nnumjobs=4\t; 4 simultaneous threads\nbs=8k # x\n\
             [j] # the job\nrw=read;seq\n  ; indented comment\n\t# another\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].global);
        assert_eq!(s[1].name, "j");
        let jobs = build_jobs(&s).unwrap();
        assert_eq!(jobs[0].numjobs, 4);
        assert_eq!(jobs[0].bs.max(), 8192);
        assert_eq!(jobs[0].rw, crate::spec::RwMode::Read);
        assert_eq!(
            strip_comment("filename=/tmp/a#b"),
            "filename=/tmp/a",
            "fio cuts it too"
        );
    }

    #[test]
    fn a_section_named_global_anything_is_global_as_in_fio() {
        let s = parse("[global-defaults]\nbs=8k\n[j]\nfilename=/x\n").unwrap();
        assert!(s[0].global);
        assert_eq!(build_jobs(&s).unwrap()[0].bs.max(), 8192);
    }

    #[test]
    fn keyword_math_uses_bc_arithmetic() {
        let s = parse("[j]\nfilename=/x\nsize=8*$ncpus*1024\nnumjobs=$ncpus/2\n").unwrap();
        let jobs = build_jobs(&s).unwrap();
        assert_eq!(
            jobs[0].size,
            Some(16384),
            "bc's result is in bytes, as in fio"
        );
        assert_eq!(jobs[0].numjobs, 1);
        let e = parse("[j]\nsize=8*$ncpus*4k\n").unwrap_err();
        assert!(e.to_string().contains("bc"), "{e}");
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn stonewall_implies_new_group() {
        let s = parse("[a]\nfilename=/x\n[b]\nfilename=/x\nstonewall\n").unwrap();
        let j = build_jobs(&s).unwrap();
        assert!(!j[0].new_group);
        assert!(j[1].new_group && j[1].stonewall);
    }
}
