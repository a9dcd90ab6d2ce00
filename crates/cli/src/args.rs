//! The `run` command line, fio style: `--name=value` pairs; options before
//! the first `--name` are global, each `--name` starts a job. A few options
//! belong to the tool rather than to a job (`--output`, `--output-format`,
//! `--quiet`, `--allow-destructive`); they may appear anywhere.

use ssdready_core::options::JobSection;
use ssdready_core::SpecError;
use std::path::PathBuf;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The terminal summary.
    Normal,
    /// The native JSON.
    Json,
}

/// A parsed `run` command line.
#[derive(Debug, Default)]
pub struct RunArgs {
    pub formats: Vec<Format>,
    pub output: Option<PathBuf>,
    pub quiet: bool,
    pub allow_destructive: bool,
    pub global: Vec<(String, Option<String>)>,
    pub jobs: Vec<JobSection>,
}

/// Parse the arguments after `run`.
pub fn parse(args: &[String]) -> Result<RunArgs, SpecError> {
    let mut r = RunArgs::default();
    for a in args {
        let Some(body) = a.strip_prefix("--") else {
            return Err(SpecError::new(
                a,
                "job files are not supported yet; give options as --name=value (see 'ssdready options')",
            ));
        };
        let (k, v) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (body, None),
        };
        match k {
            "output" => {
                let v = v
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| SpecError::new("output", "needs a file path"))?;
                r.output = Some(PathBuf::from(v));
            }
            "output-format" => {
                let v = v.unwrap_or_default();
                r.formats.clear();
                for f in v.split(',') {
                    r.formats.push(match f {
                        "normal" => Format::Normal,
                        "json" => Format::Json,
                        _ => {
                            return Err(SpecError::new(
                                "output-format",
                                format!("'{f}' is not a format (allowed: normal, json, or both comma-separated)"),
                            ))
                        }
                    });
                }
            }
            "quiet" => r.quiet = true,
            "allow-destructive" | "allow_destructive" => r.allow_destructive = true,
            "name" => {
                let name = v
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| SpecError::new("name", "needs a job name"))?;
                r.jobs.push(JobSection {
                    name,
                    options: Vec::new(),
                });
            }
            _ => match r.jobs.last_mut() {
                Some(j) => j.options.push((k.to_string(), v)),
                None => r.global.push((k.to_string(), v)),
            },
        }
    }
    if r.formats.is_empty() {
        r.formats.push(Format::Normal);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn globals_come_before_the_first_name() {
        let r = parse(&s(&[
            "--bs=4k",
            "--name=a",
            "--rw=read",
            "--name=b",
            "--time_based",
            "--output-format=json",
        ]))
        .unwrap();
        assert_eq!(r.global, vec![("bs".to_string(), Some("4k".to_string()))]);
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(r.jobs[1].options, vec![("time_based".to_string(), None)]);
        assert_eq!(r.formats, vec![Format::Json]);
    }

    #[test]
    fn bad_format_and_bare_words_are_errors() {
        assert!(parse(&s(&["--output-format=xml"])).is_err());
        assert!(parse(&s(&["job.fio"])).is_err());
    }
}
