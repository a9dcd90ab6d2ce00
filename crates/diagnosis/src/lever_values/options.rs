//! `options K=V …`: the job's own options, `{qd}`, `{half_qd}`,
//! `{quad_qd}`, `{quad_bs}`, `{threads}` and `{cpu_list}` filled from the
//! point and the machine; in place where the point already runs with
//! each of them.

use super::form::{Form, Now};
use crate::lever_context::{Candidate, Context, Point};
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "options K=V…";

/// The deepest queue and the largest block an application lever tries.
pub const MAX_QD: u32 = 256;
pub const MAX_BS: u64 = 4 << 20;

/// The form from the rest of its line: its options.
pub fn parse(rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    let kv: Option<Vec<(String, String)>> = rest
        .split(' ')
        .map(|o| o.split_once('=').map(|(k, v)| (k.into(), v.into())))
        .collect();
    Some(match kv {
        Some(kv) if !kv.is_empty() => Ok(Arc::new(Options(kv))),
        _ => Err("options are KEY=VALUE, space-separated".into()),
    })
}

/// `options K=V …`.
#[derive(Debug)]
pub struct Options(pub Vec<(String, String)>);

fn fill(v: &str, p: &Point, cx: &Context) -> String {
    v.replace("{qd}", &p.qd.to_string())
        .replace("{half_qd}", &(p.qd / 2).max(1).to_string())
        .replace("{quad_qd}", &(p.qd * 4).min(MAX_QD).to_string())
        .replace("{quad_bs}", &format!("{}k", (p.bs * 4).min(MAX_BS) >> 10))
        .replace("{threads}", &p.threads.to_string())
        .replace("{cpu_list}", &cx.cpu_list)
}

/// Whether the point already runs with option `k` at `v` (only the
/// engine, the depth and the block are known of it).
fn holds(p: &Point, k: &str, v: &str) -> bool {
    match k {
        "ioengine" => p.engine.as_deref() == Some(v),
        "iodepth" => v.parse() == Ok(p.qd),
        "bs" => v.strip_suffix('k').and_then(|k| k.parse::<u64>().ok()) == Some(p.bs >> 10),
        _ => false,
    }
}

impl Form for Options {
    fn text(&self) -> String {
        let kv: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("options {}", kv.join(" "))
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        let options: Vec<(String, String)> = self
            .0
            .iter()
            .map(|(k, v)| (k.clone(), fill(v, now.point, now.cx)))
            .collect();
        let value = options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        vec![Candidate { value, options }]
    }

    fn in_place(&self, c: &Candidate, now: &Now) -> bool {
        c.options.iter().all(|(k, v)| holds(now.point, k, v))
    }
}
