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
//! Each option keeps where it was written, so errors can say
//! `job 'seq-read' (line 12): option 'exitall_on_error' is not supported yet`.

use crate::options::{RawOption, Section};
use crate::spec::SpecError;

/// Reads an included file: given the name as written, returns (label for
/// messages, text).
pub type IncludeFn<'a> = dyn FnMut(&str) -> Result<(String, String), String> + 'a;
/// Looks a variable up (`VAR` of `${VAR}`, or a reserved name).
pub type EnvFn<'a> = dyn Fn(&str) -> Option<String> + 'a;

const MAX_INCLUDE_DEPTH: usize = 16;

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
/// error, as in fio.
pub fn parse_into(
    text: &str,
    label: Option<&str>,
    include: &mut IncludeFn<'_>,
    env: &EnvFn<'_>,
    out: &mut Vec<Section>,
) -> Result<(), SpecError> {
    parse_depth(text, label, include, env, out, 0)
}

fn parse_depth(
    text: &str,
    label: Option<&str>,
    include: &mut IncludeFn<'_>,
    env: &EnvFn<'_>,
    out: &mut Vec<Section>,
    depth: usize,
) -> Result<(), SpecError> {
    for (i, raw) in text.lines().enumerate() {
        let at = loc(label, i + 1);
        let line = strip_comment(raw);
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            // fio drops the header's last character, whatever it is
            // (`string[strlen(string) - 1] = '\0'` in fio's init.c): a
            // header without its ']' ("[job1") names the job "job".
            let name = match name.strip_suffix(']') {
                Some(n) => n,
                None => name.char_indices().last().map_or("", |(i, _)| &name[..i]),
            }
            .trim();
            if name.is_empty() {
                return Err(SpecError::new(line, "empty section name").at(Some(&at)));
            }
            out.push(Section {
                name: name.to_string(),
                // fio: `strncmp(name, "global", 6)`.
                global: name.starts_with("global"),
                options: Vec::new(),
            });
            continue;
        }
        if let Some(file) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(
                    SpecError::new("include", "includes nested too deeply (a cycle?)")
                        .at(Some(&at)),
                );
            }
            let (file, _) = expand(file.trim(), &at, env)?;
            let (sub_label, sub) = include(&file)
                .map_err(|e| SpecError::new("include", format!("{file}: {e}")).at(Some(&at)))?;
            parse_depth(&sub, Some(&sub_label), include, env, out, depth + 1)?;
            continue;
        }
        let (line, keyword) = expand(line, &at, env)?;
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
                    .at(Some(&at)))
                }
                None => Some(v),
            },
            (_, v) => v,
        };
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
        let mut inc = |f: &str| match f {
            "common.fio" => Ok((
                "common.fio".to_string(),
                "[global]\nioengine=io_uring\ndirect=1\n".to_string(),
            )),
            "loop.fio" => Ok(("loop.fio".to_string(), "include loop.fio\n".to_string())),
            _ => Err("no such file".to_string()),
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
            parse("include common.fio\n[j]\nfilename=/x\nsize=${SIZE}\nnumjobs=$ncpus\n").unwrap();
        let jobs = build_jobs(&s).unwrap();
        assert_eq!(jobs[0].size, Some(1 << 30));
        assert_eq!(jobs[0].numjobs, 2);
        assert!(jobs[0].direct);
        let e = parse("[j]\nsize=${NOPE}\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(e.to_string().contains("NOPE"), "{e}");
        assert!(parse("include loop.fio\n")
            .unwrap_err()
            .to_string()
            .contains("nested"));
        assert!(parse("include missing.fio\n")
            .unwrap_err()
            .to_string()
            .contains("no such file"));
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
