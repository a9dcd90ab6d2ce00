//! The small payloads of fio's protocol (all little-endian, laid out as
//! fio's C structures): PROBE both ways, JOB, JOBLINE, START, STOP, TEXT,
//! JOB_OPT and the ETA (`jobs_eta`).

use crate::Error;

fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn put_str(dst: &mut [u8], s: &str) {
    let n = s.len().min(dst.len().saturating_sub(1));
    dst[..n].copy_from_slice(&s.as_bytes()[..n]);
}

fn need<'a>(b: &'a [u8], n: usize, what: &str) -> Result<&'a [u8], Error> {
    b.get(..n)
        .ok_or_else(|| Error::Garbage(format!("{what} of {} bytes (expected {n})", b.len())))
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4"))
}

/// fio's `FIO_PROBE_FLAG_ZLIB`.
pub const PROBE_ZLIB: u64 = 1;

/// The client's PROBE: `flags` (u64) and the server's name as the client
/// wrote it (128 bytes).
pub fn client_probe(flags: u64, server: &str) -> Vec<u8> {
    let mut b = vec![0u8; 136];
    b[..8].copy_from_slice(&flags.to_le_bytes());
    put_str(&mut b[8..], server);
    b
}

/// The flags of a client's PROBE.
pub fn client_probe_flags(b: &[u8]) -> Result<u64, Error> {
    let b = need(b, 8, "a PROBE")?;
    Ok(u64::from_le_bytes(b.try_into().expect("8")))
}

/// The server's PROBE reply (`cmd_probe_reply_pdu`, 112 bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeReply {
    pub hostname: String,
    pub bigendian: u8,
    pub fio_version: String,
    pub os: u8,
    pub arch: u8,
    pub bpp: u8,
    pub cpus: u32,
    pub flags: u64,
}

impl ProbeReply {
    pub fn parse(b: &[u8]) -> Result<Self, Error> {
        let b = need(b, 112, "a PROBE reply")?;
        Ok(ProbeReply {
            hostname: cstr(&b[..64]),
            bigendian: b[64],
            fio_version: cstr(&b[65..97]),
            os: b[97],
            arch: b[98],
            bpp: b[99],
            cpus: u32_at(b, 100),
            flags: u64::from_le_bytes(b[104..112].try_into().expect("8")),
        })
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut b = vec![0u8; 112];
        put_str(&mut b[..64], &self.hostname);
        b[64] = self.bigendian;
        put_str(&mut b[65..97], &self.fio_version);
        b[97] = self.os;
        b[98] = self.arch;
        b[99] = self.bpp;
        b[100..104].copy_from_slice(&self.cpus.to_le_bytes());
        b[104..112].copy_from_slice(&self.flags.to_le_bytes());
        b
    }
}

/// fio's `FIO_CLIENT_TYPE_CLI`.
pub const CLIENT_CLI: u32 = 1;

/// A JOB payload: the job file's text.
pub fn job(text: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + text.len() + 1);
    b.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    b.extend_from_slice(&CLIENT_CLI.to_le_bytes());
    b.extend_from_slice(text.as_bytes());
    b.push(0);
    b
}

/// The text of a JOB payload (up to its first NUL).
pub fn job_text(b: &[u8]) -> Result<String, Error> {
    let head = need(b, 8, "a JOB")?;
    let len = u32_at(head, 0) as usize;
    let body = b
        .get(8..8 + len)
        .ok_or_else(|| Error::Garbage(format!("a JOB claiming {len} bytes in {}", b.len())))?;
    Ok(cstr(body))
}

/// A JOBLINE payload: the arguments (fio sends its own name first).
pub fn jobline(args: &[String]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(args.len() as u16).to_le_bytes());
    b.extend_from_slice(&(CLIENT_CLI as u16).to_le_bytes());
    for a in args {
        b.extend_from_slice(&(a.len() as u16 + 1).to_le_bytes());
        b.extend_from_slice(a.as_bytes());
        b.push(0);
    }
    b
}

/// The arguments of a JOBLINE payload.
pub fn jobline_args(b: &[u8]) -> Result<Vec<String>, Error> {
    let head = need(b, 4, "a JOBLINE")?;
    let lines = u16::from_le_bytes([head[0], head[1]]) as usize;
    let mut off = 4;
    let mut out = Vec::with_capacity(lines.min(1024));
    for _ in 0..lines {
        let l = b
            .get(off..off + 2)
            .ok_or_else(|| Error::Garbage("a JOBLINE cut short".into()))?;
        let len = u16::from_le_bytes([l[0], l[1]]) as usize;
        let text = b
            .get(off + 2..off + 2 + len)
            .ok_or_else(|| Error::Garbage("a JOBLINE argument cut short".into()))?;
        out.push(cstr(text));
        off += 2 + len;
    }
    Ok(out)
}

/// START: jobs to run and result blocks (TS messages) to expect.
pub fn start(jobs: u32, stat_outputs: u32) -> Vec<u8> {
    let mut b = jobs.to_le_bytes().to_vec();
    b.extend_from_slice(&stat_outputs.to_le_bytes());
    b
}

pub fn parse_start(b: &[u8]) -> Result<(u32, u32), Error> {
    let b = need(b, 8, "a START")?;
    Ok((u32_at(b, 0), u32_at(b, 4)))
}

/// STOP: the run's error and signal.
pub fn stop(error: u32, signal: u32) -> Vec<u8> {
    start(error, signal)
}

pub fn parse_stop(b: &[u8]) -> Result<(u32, u32), Error> {
    let b = need(b, 8, "a STOP")?;
    Ok((u32_at(b, 0), u32_at(b, 4)))
}

/// TEXT: a log line (`level` 0 info, 1 error), stamped with the time.
pub fn text(level: u32, s: &str) -> Vec<u8> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut b = level.to_le_bytes().to_vec();
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(&now.as_secs().to_le_bytes());
    b.extend_from_slice(&u64::from(now.subsec_micros()).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
    b
}

pub fn parse_text(b: &[u8]) -> Result<String, Error> {
    let head = need(b, 24, "a TEXT")?;
    let len = u32_at(head, 4) as usize;
    let body = b.get(24..24 + len).unwrap_or(&b[24..]);
    Ok(String::from_utf8_lossy(body).into_owned())
}

/// JOB_OPT (`cmd_job_option`, 200 bytes): one option of a group, or a
/// global one, for the json "job options".
pub fn job_opt(global: bool, groupid: u32, name: &str, value: &str) -> Vec<u8> {
    let mut b = vec![0u8; 200];
    b[0] = u8::from(global);
    b[2] = u8::from(name.len() > 63 || value.len() > 127);
    b[4..8].copy_from_slice(&groupid.to_le_bytes());
    put_str(&mut b[8..72], name);
    put_str(&mut b[72..200], value);
    b
}

/// A JOB_OPT's (global, name, value).
pub fn parse_job_opt(b: &[u8]) -> Result<(bool, String, String), Error> {
    let b = need(b, 200, "a JOB_OPT")?;
    Ok((
        u16::from_le_bytes([b[0], b[1]]) != 0,
        cstr(&b[8..72]),
        cstr(&b[72..200]),
    ))
}

/// A `jobs_eta` (version 97 and 120 alike, 168 bytes with no run string):
/// jobs running, elapsed and remaining seconds, and the current IOPS and
/// bandwidth per direction.
pub fn eta(running: u32, elapsed_s: u64, eta_s: u64, iops: [u32; 3], rate: [u64; 3]) -> Vec<u8> {
    let mut b = vec![0u8; 168];
    b[0..4].copy_from_slice(&running.to_le_bytes());
    for d in 0..3 {
        let o = 16 + 48 + d * 8; // rate[] after m_rate[] and t_rate[]
        b[o..o + 8].copy_from_slice(&rate[d].to_le_bytes());
        let o = 88 + 24 + d * 4; // iops[] after m_iops[] and t_iops[]
        b[o..o + 4].copy_from_slice(&iops[d].to_le_bytes());
    }
    b[128..136].copy_from_slice(&elapsed_s.to_le_bytes());
    b[136..144].copy_from_slice(&eta_s.to_le_bytes());
    b[148..152].copy_from_slice(&0u32.to_le_bytes()); // unit_base: bytes
    b[152..156].copy_from_slice(&4u32.to_le_bytes()); // sig_figs
    b
}

/// DU (`cmd_du_pdu`, 272 bytes): one disk's utilisation over the run, as
/// `/sys/block/X/stat` deltas (`disk_util_stat`: name, ios, merges,
/// sectors, ticks per direction, io_ticks, time_in_queue, the window in
/// ms), then `disk_util_agg` (the same summed over a device-mapper or md
/// device's members, their count and the highest utilisation): zero for a
/// plain disk, as fio sends it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskUtil {
    pub name: String,
    /// [read, write].
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks: [u64; 2],
    pub io_ticks: u64,
    pub time_in_queue: u64,
    pub msec: u64,
}

/// `FIO_DU_NAME_SZ`.
const DU_NAME: usize = 64;

impl DiskUtil {
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = vec![0u8; 272];
        put_str(&mut b[..DU_NAME], &self.name);
        let vals = [
            self.ios[0],
            self.ios[1],
            self.merges[0],
            self.merges[1],
            self.sectors[0],
            self.sectors[1],
            self.ticks[0],
            self.ticks[1],
            self.io_ticks,
            self.time_in_queue,
            self.msec,
        ];
        for (i, v) in vals.iter().enumerate() {
            let o = DU_NAME + i * 8;
            b[o..o + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    pub fn parse(b: &[u8]) -> Result<Self, Error> {
        let b = need(b, 272, "a DU")?;
        let v = |i: usize| {
            let o = DU_NAME + i * 8;
            u64::from_le_bytes(b[o..o + 8].try_into().expect("8"))
        };
        Ok(DiskUtil {
            name: cstr(&b[..DU_NAME]),
            ios: [v(0), v(1)],
            merges: [v(2), v(3)],
            sectors: [v(4), v(5)],
            ticks: [v(6), v(7)],
            io_ticks: v(8),
            time_in_queue: v(9),
            msec: v(10),
        })
    }

    /// Busy share of the window, percent (fio's `util`).
    pub fn util_pct(&self) -> f64 {
        if self.msec == 0 {
            0.0
        } else {
            (self.io_ticks as f64 * 100.0 / self.msec as f64).min(100.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobline_round_trips() {
        let args = vec!["fio".to_string(), "--output-format=json+".to_string()];
        let b = jobline(&args);
        assert_eq!(b.len(), 34);
        assert_eq!(jobline_args(&b).unwrap(), args);
    }

    #[test]
    fn probe_reply_round_trips() {
        let p = ProbeReply {
            hostname: "h".into(),
            fio_version: "fio-3.33".into(),
            os: 1,
            arch: 1,
            bpp: 8,
            cpus: 2,
            flags: 1,
            ..Default::default()
        };
        assert_eq!(ProbeReply::parse(&p.bytes()).unwrap(), p);
    }

    #[test]
    fn disk_util_round_trips() {
        let d = DiskUtil {
            name: "loop3".into(),
            ios: [100, 2],
            merges: [1, 0],
            sectors: [800, 16],
            ticks: [40, 3],
            io_ticks: 50,
            time_in_queue: 43,
            msec: 1000,
        };
        let b = d.bytes();
        assert_eq!(b.len(), 272);
        assert_eq!(DiskUtil::parse(&b).unwrap(), d);
        assert_eq!(d.util_pct(), 5.0);
    }

    #[test]
    fn cut_payloads_are_garbage_not_panics() {
        assert!(jobline_args(&[3, 0, 1, 0, 200, 0, b'x']).is_err());
        assert!(job_text(&[255, 255, 0, 0, 1, 0, 0, 0]).is_err());
        assert!(ProbeReply::parse(&[0; 50]).is_err());
    }
}
