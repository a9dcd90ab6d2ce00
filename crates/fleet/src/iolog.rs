//! IOLOG: a job's sample logs (`write_bw_log`, `write_lat_log`,
//! `write_iops_log`) sent from a server to its client, which writes them
//! as `NAME.HOST` (fio's client: `lg_lat.1.log.127.0.0.1`).
//!
//! One message per log: a fixed header (`cmd_iolog_pdu`: samples, the
//! job's thread number, fio's log type, how the samples are compressed,
//! the log's file name) in a fragment of its own, then the samples. How the
//! samples travel (the header's `compressed`):
//!
//! - 0: fio's binary samples (`struct io_sample`, 32 bytes in version 97,
//!   40 with `log_offset`; 40 and 48 in version 120), as they are;
//! - 1 (`XMIT_COMPRESSED`): the same bytes through zlib, when both ends
//!   agreed at PROBE (`FIO_PROBE_FLAG_ZLIB`). fio's server (3.33 to this
//!   day) leaves the stream unfinished: its last `deflate(Z_FINISH)` goes
//!   into a buffer already queued, and with it the up to seven bits
//!   `Z_BLOCK` held back, so the last sample or two may never arrive. A
//!   stream that simply ends is read to its end, and [`IoLog::samples`]
//!   gives the whole samples it holds ([`IoLog::held`] says how many;
//!   fio's own client writes the missing ones from uninitialized memory);
//! - 2 (`STORE_COMPRESSED`, `log_store_compressed=1`): the `.log.fz` file's
//!   bytes, written by the client as they came.
//!
//! Inflating is bounded: never more than the samples the header declares
//! (and never more than [`MAX_INFLATED`]); a stream that would inflate past
//! that is refused as a zip bomb, naming the log. Nothing else in fio's
//! protocol is compressed.

use crate::Error;
use flate2::{Decompress, FlushDecompress, Status};
use std::io::Write as _;

/// `compressed`: the samples went through zlib for the wire.
pub const XMIT_COMPRESSED: u32 = 1;
/// `compressed`: the samples are a `log_store_compressed` file's bytes.
pub const STORE_COMPRESSED: u32 = 2;
/// fio's `IO_LOG_TYPE_HIST` (histogram logs: not decoded here).
pub const LOG_TYPE_HIST: u32 = 6;
/// The most a log may inflate to (8 M samples of 32 bytes): a peer
/// claiming more is refused before anything is inflated.
pub const MAX_INFLATED: u64 = 256 << 20;
/// `FIO_NET_NAME_MAX`.
const NAME_MAX: usize = 256;
/// Sample ddir bits (fio's `LOG_OFFSET_SAMPLE_BIT`, `LOG_PRIO_SAMPLE_BIT`).
pub const OFFSET_BIT: u32 = 0x8000_0000;
pub const PRIO_BIT: u32 = 0x4000_0000;
/// Every flag bit of the ddir field (version 120 adds two).
const SAMPLE_BITS: u32 = 0xF000_0000;

/// Where a version keeps the header's fields and how big a sample is.
#[derive(Clone, Copy, Debug)]
struct Layout {
    header: usize,
    /// Offsets of log_offset, log_prio, hist_coarseness, per_job_logs, name.
    log_offset: usize,
    log_prio: usize,
    coarseness: usize,
    per_job_logs: Option<usize>,
    name: usize,
    /// `sizeof(struct io_sample)` (the value is 8 bytes in 97, 16 in 120).
    sample: usize,
}

fn layout(version: u16) -> Result<Layout, Error> {
    match version {
        97 => Ok(Layout {
            header: 288,
            log_offset: 20,
            log_prio: 24,
            coarseness: 28,
            per_job_logs: None,
            name: 32,
            sample: 32,
        }),
        120 => Ok(Layout {
            header: 296,
            log_offset: 20,
            log_prio: 24,
            coarseness: 32,
            per_job_logs: Some(36),
            name: 40,
            sample: 40,
        }),
        v => Err(Error::Version {
            got: v,
            spoken: crate::VERSIONS.to_vec(),
        }),
    }
}

/// One IOLOG message, its samples uncompressed (or, with
/// [`STORE_COMPRESSED`], the stored file's bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IoLog {
    pub nr_samples: u64,
    pub thread_number: u32,
    pub log_type: u32,
    /// How it came (or is to go): 0, [`XMIT_COMPRESSED`], [`STORE_COMPRESSED`].
    pub compressed: u32,
    pub log_offset: u32,
    pub log_prio: u32,
    pub hist_coarseness: u32,
    /// Version 120 only (fio 3.33 writes every log afresh).
    pub per_job_logs: u32,
    pub name: String,
    pub data: Vec<u8>,
}

/// One sample of a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub time_ms: u64,
    pub value: u64,
    /// With fio's flag bits ([`OFFSET_BIT`], [`PRIO_BIT`]).
    pub ddir: u32,
    pub prio: u16,
    pub bs: u64,
    pub offset: Option<u64>,
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4"))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8"))
}

impl IoLog {
    /// The header (`cmd_iolog_pdu` without its samples).
    pub fn header(&self, version: u16) -> Result<Vec<u8>, Error> {
        let l = layout(version)?;
        let mut h = vec![0u8; l.header];
        h[0..8].copy_from_slice(&self.nr_samples.to_le_bytes());
        h[8..12].copy_from_slice(&self.thread_number.to_le_bytes());
        h[12..16].copy_from_slice(&self.log_type.to_le_bytes());
        h[16..20].copy_from_slice(&self.compressed.to_le_bytes());
        h[l.log_offset..l.log_offset + 4].copy_from_slice(&self.log_offset.to_le_bytes());
        h[l.log_prio..l.log_prio + 4].copy_from_slice(&self.log_prio.to_le_bytes());
        h[l.coarseness..l.coarseness + 4].copy_from_slice(&self.hist_coarseness.to_le_bytes());
        if let Some(o) = l.per_job_logs {
            h[o..o + 4].copy_from_slice(&self.per_job_logs.to_le_bytes());
        }
        let n = self.name.len().min(NAME_MAX - 1);
        h[l.name..l.name + n].copy_from_slice(&self.name.as_bytes()[..n]);
        Ok(h)
    }

    /// The message on the wire, as fio's server sends it: the header in a
    /// fragment of its own, then the samples (through zlib when
    /// `compressed` is [`XMIT_COMPRESSED`]) in fragments of up to 1 KiB.
    pub fn encode(&self, version: u16, tag: u64) -> Result<Vec<u8>, Error> {
        let head = self.header(version)?;
        let body = if self.compressed == XMIT_COMPRESSED {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(&self.data)
                .and_then(|_| z.finish())
                .map_err(|e| Error::Io(format!("compressing a log: {e}")))?
        } else {
            self.data.clone()
        };
        Ok(crate::wire::encode_parts(
            version,
            crate::wire::op::IOLOG,
            tag,
            &[&head, &body],
        ))
    }

    /// Read a reassembled IOLOG payload, inflating compressed samples
    /// within the bound (see the module's notes).
    pub fn parse(version: u16, payload: &[u8]) -> Result<IoLog, Error> {
        let l = layout(version)?;
        let h = payload.get(..l.header).ok_or_else(|| {
            Error::Garbage(format!(
                "an IOLOG of {} bytes (its header alone is {})",
                payload.len(),
                l.header
            ))
        })?;
        let name_bytes = &h[l.name..l.name + NAME_MAX];
        let end = name_bytes.iter().position(|&c| c == 0).unwrap_or(NAME_MAX);
        let mut log = IoLog {
            nr_samples: u64_at(h, 0),
            thread_number: u32_at(h, 8),
            log_type: u32_at(h, 12),
            compressed: u32_at(h, 16),
            log_offset: u32_at(h, l.log_offset),
            log_prio: u32_at(h, l.log_prio),
            hist_coarseness: u32_at(h, l.coarseness),
            per_job_logs: l.per_job_logs.map_or(1, |o| u32_at(h, o)),
            name: String::from_utf8_lossy(&name_bytes[..end]).into_owned(),
            data: Vec::new(),
        };
        let body = &payload[l.header..];
        log.data = match log.compressed {
            0 | STORE_COMPRESSED => body.to_vec(),
            XMIT_COMPRESSED => {
                // A sample is at most the layout's size, its offset and
                // (120) its issue time; a histogram entry adds fio's bins.
                let per = if log.log_type == LOG_TYPE_HIST {
                    l.sample + 16 + 16 + 8 * 1856
                } else {
                    l.sample + 16
                } as u64;
                let limit = log.nr_samples.saturating_mul(per);
                if limit > MAX_INFLATED {
                    return Err(Error::Garbage(format!(
                        "log '{}' claims {} samples ({limit} bytes inflated; the bound is {} MiB)",
                        log.name,
                        log.nr_samples,
                        MAX_INFLATED >> 20
                    )));
                }
                inflate_bounded(body, limit as usize).map_err(|e| {
                    Error::Garbage(format!(
                        "log '{}' ({} samples): {e}",
                        log.name, log.nr_samples
                    ))
                })?
            }
            c => {
                return Err(Error::Garbage(format!(
                    "log '{}': compression {c} (fio's are 0, 1 and 2)",
                    log.name
                )))
            }
        };
        Ok(log)
    }

    /// How big each sample is: the first sample's flag bits say whether
    /// each carries an offset.
    fn sample_size(&self, l: &Layout) -> usize {
        let first_ddir = self.data.get(l.sample - 16..l.sample - 12);
        let offsets = first_ddir.is_some_and(|d| u32_at(d, 0) & OFFSET_BIT != 0);
        l.sample + if offsets { 8 } else { 0 }
    }

    /// The whole samples its data holds, at most those declared (fewer
    /// when fio's server cut its zlib stream short: see the module notes).
    /// Histogram and stored-compressed logs: those declared.
    pub fn held(&self, version: u16) -> u64 {
        match layout(version) {
            Ok(l) if self.log_type != LOG_TYPE_HIST && self.compressed != STORE_COMPRESSED => {
                let whole = self.data.len() / self.sample_size(&l);
                self.nr_samples.min(whole as u64)
            }
            _ => self.nr_samples,
        }
    }

    /// The samples, read as fio's client reads them. Histogram logs and
    /// stored-compressed logs have none to read here. A log that came
    /// through zlib gives the whole samples it holds (see [`IoLog::held`]);
    /// one that came as it is must hold every sample it declares.
    pub fn samples(&self, version: u16) -> Result<Vec<Sample>, Error> {
        let l = layout(version)?;
        if self.log_type == LOG_TYPE_HIST || self.compressed == STORE_COMPRESSED {
            return Ok(Vec::new());
        }
        let size = self.sample_size(&l);
        let offsets = size > l.sample;
        let mut need = (self.nr_samples as usize).saturating_mul(size);
        if self.compressed == XMIT_COMPRESSED {
            need = need.min(self.data.len() / size * size);
        }
        if self.data.len() < need {
            return Err(Error::Garbage(format!(
                "log '{}' declares {} samples of {size} bytes but holds {} bytes",
                self.name,
                self.nr_samples,
                self.data.len()
            )));
        }
        let v = l.sample - 24; // bytes of the value (8 or 16)
        Ok(self.data[..need]
            .chunks_exact(size)
            .map(|s| Sample {
                time_ms: u64_at(s, 0),
                value: u64_at(s, 8),
                ddir: u32_at(s, 8 + v),
                prio: u16::from_le_bytes([s[12 + v], s[13 + v]]),
                bs: u64_at(s, 16 + v),
                offset: offsets.then(|| u64_at(s, l.sample)),
            })
            .collect())
    }

    /// The log's text as fio's client writes it (`flush_samples`): time,
    /// value, direction, block size, `[offset,]` and the priority (with
    /// `log_prio`, fio's ioprio value in hex; otherwise whether it is of
    /// the real-time class).
    pub fn text(&self, version: u16) -> Result<String, Error> {
        use std::fmt::Write as _;
        let mut out = String::new();
        for s in self.samples(version)? {
            let _ = write!(
                out,
                "{}, {}, {}, {}, ",
                s.time_ms,
                s.value as i64,
                s.ddir & !SAMPLE_BITS,
                s.bs
            );
            if let Some(o) = s.offset {
                let _ = write!(out, "{o}, ");
            }
            if s.ddir & PRIO_BIT != 0 {
                let _ = writeln!(out, "0x{:04x}", s.prio);
            } else {
                // ioprio_value_is_class_rt: class 1 in the top 3 bits.
                let _ = writeln!(out, "{}", u32::from(s.prio >> 13 == 1));
            }
        }
        Ok(out)
    }
}

/// Samples in fio's binary layout of `version` (what a server sends).
pub fn encode_samples(version: u16, samples: &[Sample]) -> Result<Vec<u8>, Error> {
    let l = layout(version)?;
    let mut out = Vec::with_capacity(samples.len() * (l.sample + 8));
    for s in samples {
        out.extend_from_slice(&s.time_ms.to_le_bytes());
        out.extend_from_slice(&s.value.to_le_bytes());
        out.resize(out.len() + (l.sample - 32), 0); // version 120's second value
        out.extend_from_slice(&s.ddir.to_le_bytes());
        out.extend_from_slice(&s.prio.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&s.bs.to_le_bytes());
        if let Some(o) = s.offset {
            out.extend_from_slice(&o.to_le_bytes());
        }
    }
    Ok(out)
}

/// Why a compressed log could not be inflated.
#[derive(Debug, thiserror::Error)]
pub enum InflateError {
    #[error("not a zlib stream ({0})")]
    NotZlib(flate2::DecompressError),
    #[error("inflates past the {limit} bytes its samples can take (a zip bomb?)")]
    TooLarge { limit: usize },
}

/// Inflate a zlib stream into at most `limit` bytes. A stream that ends
/// without its trailer (fio 3.33's) gives what it holds; one that would
/// give more than `limit` is refused.
pub fn inflate_bounded(input: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    let mut z = Decompress::new(true);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let (in0, out0) = (z.total_in(), z.total_out());
        let rest = input.get(in0 as usize..).unwrap_or_default();
        let status = z
            .decompress(rest, &mut buf, FlushDecompress::None)
            .map_err(InflateError::NotZlib)?;
        let produced = (z.total_out() - out0) as usize;
        if out.len() + produced > limit {
            return Err(InflateError::TooLarge { limit });
        }
        out.extend_from_slice(&buf[..produced]);
        // The end of the stream, or of the input (an unfinished stream).
        if status == Status::StreamEnd || (z.total_in() == in0 && produced == 0) {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: u64, compressed: u32) -> IoLog {
        let samples: Vec<Sample> = (0..n)
            .map(|i| Sample {
                time_ms: i / 10,
                value: 1000 + i,
                ddir: (i % 2) as u32,
                prio: 0,
                bs: 4096,
                offset: None,
            })
            .collect();
        IoLog {
            nr_samples: n,
            thread_number: 1,
            log_type: 2,
            compressed,
            per_job_logs: 1,
            name: "x_clat.1.log".into(),
            data: encode_samples(97, &samples).unwrap(),
            ..Default::default()
        }
    }

    #[test]
    fn compressed_logs_round_trip_through_fragments() {
        for c in [0, XMIT_COMPRESSED] {
            let l = log(500, c);
            let bytes = l.encode(97, 0).unwrap();
            let m = crate::wire::split(&bytes, &[97]).unwrap();
            assert_eq!(m.len(), 1);
            let back = IoLog::parse(97, &m[0].payload).unwrap();
            assert!(back == l, "a log differs after its round trip");
            assert_eq!(back.text(97).unwrap().lines().count(), 500);
        }
        // Compressed, the 16 000 bytes of samples fit in a few fragments.
        let z = log(500, XMIT_COMPRESSED).encode(97, 0).unwrap();
        assert!(z.len() < 288 + 4000, "{}", z.len());
    }

    #[test]
    fn a_zip_bomb_is_refused_naming_the_log() {
        // 10 MiB of zeros compress to about 10 KiB; the header claims 3
        // samples (96 bytes).
        let mut l = log(3, XMIT_COMPRESSED);
        l.data = vec![0; 10 << 20];
        let bytes = l.encode(97, 0).unwrap();
        let m = crate::wire::split(&bytes, &[97]).unwrap();
        let e = IoLog::parse(97, &m[0].payload).unwrap_err().to_string();
        assert!(e.contains("x_clat.1.log") && e.contains("zip bomb"), "{e}");
        // A header claiming more than the bound is refused before inflating.
        let mut l = log(1, XMIT_COMPRESSED);
        l.nr_samples = 1 << 40;
        let m = crate::wire::split(&l.encode(97, 0).unwrap(), &[97]).unwrap();
        let e = IoLog::parse(97, &m[0].payload).unwrap_err().to_string();
        assert!(e.contains("claims"), "{e}");
    }

    #[test]
    fn an_unfinished_stream_gives_what_it_holds() {
        let l = log(64, 0);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&l.data).unwrap();
        z.flush().unwrap(); // a sync flush: everything out, no trailer
        let cut = z.get_ref().clone();
        assert_eq!(inflate_bounded(&cut, l.data.len()).unwrap(), l.data);
        assert!(inflate_bounded(b"not zlib", 100).is_err());
    }

    #[test]
    fn a_stream_cut_short_gives_the_whole_samples_it_holds() {
        // What fio's server sends: the samples' blocks, the last few bytes
        // (and the zlib trailer) never sent.
        let l = log(64, XMIT_COMPRESSED);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&l.data).unwrap();
        z.flush().unwrap();
        let full = z.get_ref().clone();
        let mut payload = l.header(97).unwrap();
        payload.extend_from_slice(&full[..full.len() - 12]);
        let back = IoLog::parse(97, &payload).unwrap();
        let held = back.held(97);
        assert!(held > 0 && held < 64, "{held} of 64");
        let got = back.samples(97).unwrap();
        assert_eq!(got.len() as u64, held);
        let want = log(64, 0).samples(97).unwrap();
        assert_eq!(
            got[..],
            want[..got.len()],
            "the held samples are the first ones"
        );
        assert_eq!(back.text(97).unwrap().lines().count() as u64, held);
        // Sent as they are, missing samples are corruption.
        let mut plain = log(64, 0);
        plain.data.truncate(plain.data.len() - 40);
        assert_eq!(plain.held(97), 62);
        assert!(plain.samples(97).is_err());
    }

    #[test]
    fn text_is_fios_flush_samples() {
        let s = [
            Sample {
                time_ms: 5,
                value: 120,
                ddir: 1,
                prio: 1 << 13,
                bs: 4096,
                offset: None,
            },
            Sample {
                time_ms: 6,
                value: 7,
                ddir: OFFSET_BIT | PRIO_BIT,
                prio: 0x6001,
                bs: 512,
                offset: Some(8192),
            },
        ];
        let mut l = log(1, 0);
        l.data = encode_samples(97, &s[..1]).unwrap();
        assert_eq!(l.text(97).unwrap(), "5, 120, 1, 4096, 1\n");
        l.data = encode_samples(97, &s[1..]).unwrap();
        assert_eq!(l.text(97).unwrap(), "6, 7, 0, 512, 8192, 0x6001\n");
        l.nr_samples = 2;
        assert!(l.text(97).is_err(), "declares more than it holds");
    }
}
