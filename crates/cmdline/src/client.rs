//! `run --client=HOSTS …`'s command line, as fio reads it: each
//! `--client` value with the job files right after it, which are that
//! client's own; a client without any gets the job files given elsewhere.

/// One `--client` value and the job files right after it, which are
/// that client's own (fio's rule); a client without any gets the job
/// files given elsewhere.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientArg {
    pub hosts: String,
    pub own_jobs: Vec<String>,
}

/// `run --client=HOSTS …`: the `--client` values with their own job
/// files, and the other arguments, or `None` when there is no `--client`.
pub fn split(args: &[String]) -> Option<(Vec<ClientArg>, Vec<String>)> {
    let mut clients: Vec<ClientArg> = Vec::new();
    let mut rest = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let hosts = if let Some(v) = a.strip_prefix("--client=") {
            v.to_string()
        } else if a == "--client" {
            it.next().cloned().unwrap_or_default()
        } else {
            rest.push(a.clone());
            continue;
        };
        let mut own_jobs = Vec::new();
        while let Some(f) = it.next_if(|f| !f.starts_with('-')) {
            own_jobs.push(f.clone());
        }
        clients.push(ClientArg { hosts, own_jobs });
    }
    (!clients.is_empty()).then_some((clients, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// fio's rule: the job files right after a `--client` are that
    /// client's own; the others are shared.
    #[test]
    fn job_files_right_after_a_client_are_its_own() {
        let (clients, rest) = split(&s(&[
            "--client=,8765",
            "a.fio",
            "--client",
            "h,8766",
            "b.fio",
            "c.fio",
            "--output-format=json",
            "shared.fio",
            "--client=x",
        ]))
        .unwrap();
        let own: Vec<(&str, Vec<String>)> = clients
            .iter()
            .map(|c| (c.hosts.as_str(), c.own_jobs.clone()))
            .collect();
        assert_eq!(
            own,
            [
                (",8765", s(&["a.fio"])),
                ("h,8766", s(&["b.fio", "c.fio"])),
                ("x", vec![]),
            ]
        );
        assert_eq!(rest, s(&["--output-format=json", "shared.fio"]));
        assert!(split(&s(&["job.fio"])).is_none());
    }
}
