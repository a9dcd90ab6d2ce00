//! fio's `--server[=SPEC]` and `--daemonize=FILE` among a run's arguments
//! (what `fio --server=,8765 --daemonize=PIDFILE` passes), read as the
//! server they ask for. SPEC is fio's: `[ip:|ip6:]HOST[,PORT]`, `,PORT`,
//! `sock:PATH`, or empty; without a host the server listens on loopback
//! (fio listens on every address: serving the network stays an explicit
//! choice here). Anything else among the arguments is refused
//! ([`SpecError`], the one line the binary exits 2 with).

use std::path::PathBuf;

/// The server fio's switches ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioServer {
    pub bind: String,
    pub port: u16,
    /// `sock:PATH`: a Unix socket instead of TCP (`bind` and `port` are
    /// then the defaults).
    pub socket: Option<PathBuf>,
    pub daemonize: Option<PathBuf>,
}

/// fio's server switches that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    #[error("option '--server': '{0}' cannot go with it (allowed beside it: --daemonize=FILE)")]
    Beside(String),
    #[error(
        "option '--server': '{spec}' {why} (allowed: [ip:|ip6:]HOST[,PORT], ,PORT, sock:PATH)"
    )]
    Spec { spec: String, why: &'static str },
}

/// The server `args` ask for, or `None` when there is no `--server`
/// among them; `default_port` where SPEC names none.
pub fn switches(args: &[String], default_port: u16) -> Option<Result<FioServer, SpecError>> {
    let spec = args.iter().find_map(|a| {
        (a == "--server")
            .then(String::new)
            .or_else(|| a.strip_prefix("--server=").map(str::to_string))
    })?;
    Some(server(&spec, args, default_port))
}

fn server(spec: &str, args: &[String], default_port: u16) -> Result<FioServer, SpecError> {
    let mut daemonize = None;
    for a in args {
        if let Some(f) = a.strip_prefix("--daemonize=") {
            daemonize = Some(PathBuf::from(f));
        } else if !(a == "--server" || a.starts_with("--server=")) {
            return Err(SpecError::Beside(a.clone()));
        }
    }
    let bad = |why| SpecError::Spec {
        spec: spec.to_string(),
        why,
    };
    if let Some(p) = spec.strip_prefix("sock:") {
        if p.is_empty() {
            return Err(bad("names no socket path"));
        }
        return Ok(FioServer {
            bind: "127.0.0.1".into(),
            port: default_port,
            socket: Some(PathBuf::from(p)),
            daemonize,
        });
    }
    let body = spec
        .strip_prefix("ip:")
        .or_else(|| spec.strip_prefix("ip6:"))
        .unwrap_or(spec);
    let (host, port) = body.rsplit_once(',').unwrap_or((body, ""));
    let port = match port {
        "" => default_port,
        p => p.parse().map_err(|_| bad("has no port number"))?,
    };
    let bind = match host {
        "" | "localhost" => "127.0.0.1".to_string(),
        h => h.to_string(),
    };
    Ok(FioServer {
        bind,
        port,
        socket: None,
        daemonize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(args: &[&str]) -> Option<Result<FioServer, SpecError>> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        switches(&args, 8765)
    }

    fn tcp(bind: &str, port: u16, daemonize: Option<&str>) -> FioServer {
        FioServer {
            bind: bind.into(),
            port,
            socket: None,
            daemonize: daemonize.map(PathBuf::from),
        }
    }

    #[test]
    fn no_server_switch_asks_for_no_server() {
        assert_eq!(read(&["--daemonize=/tmp/p"]), None);
        assert_eq!(read(&["--name=x"]), None);
    }

    #[test]
    fn fios_specs_name_the_address_and_port_and_loopback_by_default() {
        let ok = |args: &[&str]| read(args).unwrap().unwrap();
        assert_eq!(ok(&["--server"]), tcp("127.0.0.1", 8765, None));
        assert_eq!(ok(&["--server=,9000"]), tcp("127.0.0.1", 9000, None));
        assert_eq!(ok(&["--server=localhost"]), tcp("127.0.0.1", 8765, None));
        assert_eq!(ok(&["--server=ip:0.0.0.0,1"]), tcp("0.0.0.0", 1, None));
        assert_eq!(ok(&["--server=ip6:::1,2"]), tcp("::1", 2, None));
        assert_eq!(
            ok(&["--daemonize=/run/p", "--server=,9"]),
            tcp("127.0.0.1", 9, Some("/run/p"))
        );
        let sock = ok(&["--server=sock:/tmp/s,7"]);
        assert_eq!(sock.socket, Some(PathBuf::from("/tmp/s,7")));
        assert_eq!((sock.bind.as_str(), sock.port), ("127.0.0.1", 8765));
    }

    #[test]
    fn a_bad_spec_or_another_switch_is_one_line_that_says_what_is_allowed() {
        let no = |args: &[&str]| read(args).unwrap().unwrap_err().to_string();
        assert_eq!(
            no(&["--server=,http"]),
            "option '--server': ',http' has no port number (allowed: [ip:|ip6:]HOST[,PORT], ,PORT, sock:PATH)"
        );
        assert_eq!(
            no(&["--server=sock:"]),
            "option '--server': 'sock:' names no socket path (allowed: [ip:|ip6:]HOST[,PORT], ,PORT, sock:PATH)"
        );
        assert_eq!(
            no(&["--server", "--bs=4k"]),
            "option '--server': '--bs=4k' cannot go with it (allowed beside it: --daemonize=FILE)"
        );
    }
}
