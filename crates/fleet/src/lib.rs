//! Many hosts through fio's client/server protocol, both ways.
//!
//! Storage engineers who outgrow one machine run `fio --server` on every
//! host and drive them with `fio --client=hostfile job.fio`. This crate
//! speaks that protocol (written from fio's documented behaviour and from
//! bytes captured between real fio 3.33 processes; no fio code):
//!
//! - [`wire`]: the framing (24-byte header, CRC-16, 1 KiB fragments);
//! - [`layout`] and [`tstat`]: `thread_stat` and `group_run_stats`, one
//!   small table per protocol version spoken ([`VERSIONS`]);
//! - [`pdu`]: the small messages (PROBE, JOB, JOBLINE, START, STOP, TEXT…);
//! - [`client`]: drive fio servers (or ssdready servers) and collect each
//!   host's results, a host that fails named and the others kept;
//! - [`server`]: answer an unmodified `fio --client` with a run engine of
//!   the caller's choosing ([`server::Runner`]); [`listen`]: what it
//!   listens on (TCP, or a Unix socket removed safely at the end);
//! - [`iolog`]: the jobs' sample logs (IOLOG), zlib both ways, bounded;
//!   [`logs`]: which of them a client writes, and where;
//! - [`bounds`]: what a remote client can make the server hold, and the
//!   bound of each (a job's sample logs among them);
//! - [`merge`]: one consolidated result: histograms summed bin by bin
//!   (never percentiles averaged), a host on every job, the slowest host
//!   and its share of the fleet's time; [`summary`]: its terminal lines.
#![forbid(unsafe_code)]

pub mod bounds;
pub mod client;
pub mod from_result;
pub mod iolog;
pub mod layout;
pub mod listen;
pub mod logs;
pub mod merge;
pub mod pdu;
pub mod policy;
pub mod server;
pub mod summary;
pub mod tstat;
pub mod wire;

/// The protocol versions spoken (`FIO_SERVER_VER`): 97 is fio 3.33,
/// 120 fio 3.42. Both ends of a connection must use the same one.
pub const VERSIONS: [u16; 2] = [97, 120];

/// fio's default port.
pub const DEFAULT_PORT: u16 = 8765;

/// What went wrong on a connection.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Io(String),
    #[error("the peer speaks fio protocol version {got}; this side speaks {}", fmt_versions(.spoken))]
    Version { got: u16, spoken: Vec<u16> },
    #[error("not fio's protocol or corrupted: {0}")]
    Garbage(String),
    #[error("no answer in time")]
    Timeout,
    #[error("stopped")]
    Stopped,
    #[error("{0}")]
    Refused(String),
}

fn fmt_versions(v: &[u16]) -> String {
    v.iter()
        .map(|x| format!("{x} ({})", fio_of(*x)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The fio release a protocol version belongs to.
pub fn fio_of(version: u16) -> &'static str {
    match version {
        97 => "fio 3.33",
        120 => "fio 3.42",
        _ => "unknown fio",
    }
}
