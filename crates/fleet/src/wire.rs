//! fio's network framing: a 24-byte little-endian header per fragment.
//!
//! | bytes | field |
//! |---|---|
//! | 0–1 | protocol version (`FIO_SERVER_VER`) |
//! | 2–3 | opcode |
//! | 4–7 | flags (bit 0: more fragments follow) |
//! | 8–15 | tag (echoed on replies) |
//! | 16–19 | payload length of this fragment |
//! | 20–21 | CRC-16 of bytes 0–19 |
//! | 22–23 | CRC-16 of this fragment's payload |
//!
//! The CRC is CRC-16/ARC (polynomial 0x8005 reflected, initial value 0), as
//! the kernel's and fio's `crc16`. A fragment carries at most 1024 bytes of
//! payload (fio refuses longer ones); a message longer than that is split,
//! every fragment but the last flagged "more". Reading checks both CRCs,
//! the version, the fragment length and the total length
//! ([`MAX_MESSAGE`]), and gives up on the stop flag within a read timeout
//! ([`POLL`]).

use crate::Error;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Size of the header.
pub const HEADER: usize = 24;
/// Largest payload of one fragment (fio's `FIO_SERVER_MAX_FRAGMENT_PDU`).
pub const MAX_FRAGMENT: usize = 1024;
/// Largest reassembled message accepted: a `thread_stat` is about 180 KiB,
/// a job file at most a few; 64 MiB leaves room and bounds the memory a
/// peer can make us take.
pub const MAX_MESSAGE: usize = 64 << 20;
/// How long a blocked read waits before looking at the stop flag.
pub const POLL: Duration = Duration::from_millis(100);
/// Flag: more fragments follow.
pub const F_MORE: u32 = 1;

/// fio's opcodes (`FIO_NET_CMD_*`).
pub mod op {
    pub const QUIT: u16 = 1;
    pub const EXIT: u16 = 2;
    pub const JOB: u16 = 3;
    pub const JOBLINE: u16 = 4;
    pub const TEXT: u16 = 5;
    pub const TS: u16 = 6;
    pub const GS: u16 = 7;
    pub const SEND_ETA: u16 = 8;
    pub const ETA: u16 = 9;
    pub const PROBE: u16 = 10;
    pub const START: u16 = 11;
    pub const STOP: u16 = 12;
    pub const DU: u16 = 13;
    pub const SERVER_START: u16 = 14;
    pub const ADD_JOB: u16 = 15;
    pub const RUN: u16 = 16;
    pub const IOLOG: u16 = 17;
    pub const UPDATE_JOB: u16 = 18;
    pub const LOAD_FILE: u16 = 19;
    pub const VTRIGGER: u16 = 20;
    pub const SENDFILE: u16 = 21;
    pub const JOB_OPT: u16 = 22;

    /// The opcode's name, as fio prints it.
    pub fn name(op: u16) -> &'static str {
        const NAMES: [&str; 23] = [
            "BAD",
            "QUIT",
            "EXIT",
            "JOB",
            "JOBLINE",
            "TEXT",
            "TS",
            "GS",
            "SEND_ETA",
            "ETA",
            "PROBE",
            "START",
            "STOP",
            "DISK_UTIL",
            "SERVER_START",
            "ADD_JOB",
            "RUN",
            "IOLOG",
            "UPDATE_JOB",
            "LOAD_FILE",
            "VTRIGGER",
            "SENDFILE",
            "JOB_OPT",
        ];
        NAMES.get(op as usize).copied().unwrap_or("unknown")
    }
}

/// CRC-16/ARC, bitwise (messages are small; no table needed).
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in bytes {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xA001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// One reassembled message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub version: u16,
    pub opcode: u16,
    pub tag: u64,
    pub payload: Vec<u8>,
}

/// The header of one fragment.
fn header(version: u16, opcode: u16, flags: u32, tag: u64, pdu: &[u8]) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0..2].copy_from_slice(&version.to_le_bytes());
    h[2..4].copy_from_slice(&opcode.to_le_bytes());
    h[4..8].copy_from_slice(&flags.to_le_bytes());
    h[8..16].copy_from_slice(&tag.to_le_bytes());
    h[16..20].copy_from_slice(&(pdu.len() as u32).to_le_bytes());
    let c = crc16(&h[..20]);
    h[20..22].copy_from_slice(&c.to_le_bytes());
    h[22..24].copy_from_slice(&crc16(pdu).to_le_bytes());
    h
}

/// A message as bytes on the wire: fragments of at most [`MAX_FRAGMENT`].
pub fn encode(version: u16, opcode: u16, tag: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + HEADER * (1 + payload.len() / MAX_FRAGMENT));
    let mut chunks = payload.chunks(MAX_FRAGMENT).peekable();
    if payload.is_empty() {
        out.extend_from_slice(&header(version, opcode, 0, tag, &[]));
    }
    while let Some(c) = chunks.next() {
        let flags = if chunks.peek().is_some() { F_MORE } else { 0 };
        out.extend_from_slice(&header(version, opcode, flags, tag, c));
        out.extend_from_slice(c);
    }
    out
}

/// A message whose parts each start a fragment of their own (fio's
/// server sends an IOLOG's header, then its samples, so): every part in
/// fragments of at most [`MAX_FRAGMENT`], all but the last flagged "more".
/// Empty parts are left out (an all-empty message is one empty fragment).
pub fn encode_parts(version: u16, opcode: u16, tag: u64, parts: &[&[u8]]) -> Vec<u8> {
    let chunks: Vec<&[u8]> = parts.iter().flat_map(|p| p.chunks(MAX_FRAGMENT)).collect();
    if chunks.is_empty() {
        return encode(version, opcode, tag, &[]);
    }
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        let flags = if i + 1 < chunks.len() { F_MORE } else { 0 };
        out.extend_from_slice(&header(version, opcode, flags, tag, c));
        out.extend_from_slice(c);
    }
    out
}

/// A connection messages travel on: TCP, or a Unix socket (fio's
/// `sock:PATH`).
pub trait Conn: Read + Write + Send {
    /// How long a read may block.
    fn set_read_timeout(&self, d: Option<Duration>) -> std::io::Result<()>;
    /// No more writes: the peer reads the end of the stream.
    fn shutdown_write(&self);
}

impl Conn for TcpStream {
    fn set_read_timeout(&self, d: Option<Duration>) -> std::io::Result<()> {
        TcpStream::set_read_timeout(self, d)
    }
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Conn for UnixStream {
    fn set_read_timeout(&self, d: Option<Duration>) -> std::io::Result<()> {
        UnixStream::set_read_timeout(self, d)
    }
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

/// Send one message.
pub fn send<S: Conn + ?Sized>(
    s: &mut S,
    version: u16,
    opcode: u16,
    tag: u64,
    payload: &[u8],
) -> Result<(), Error> {
    s.write_all(&encode(version, opcode, tag, payload))
        .map_err(|e| Error::Io(format!("sending {}: {e}", op::name(opcode))))
}

/// What bounds a read: the stop flag, and an optional deadline.
pub struct Wait<'a> {
    pub stop: &'a AtomicBool,
    pub deadline: Option<Instant>,
}

/// How long the rest of a message may take once its first byte came.
pub const MID_MESSAGE: Duration = Duration::from_secs(10);

/// Fill `buf`, waiting in [`POLL`] steps. `Ok(false)`: the peer closed the
/// connection before the first byte. The caller's deadline applies only
/// before the first byte of a message (`started` false): once a message
/// has begun, giving up would lose its bytes and the stream's framing, so
/// the rest gets [`MID_MESSAGE`].
fn read_full<S: Conn + ?Sized>(
    s: &mut S,
    buf: &mut [u8],
    w: &Wait<'_>,
    started: bool,
) -> Result<bool, Error> {
    s.set_read_timeout(Some(POLL))
        .map_err(|e| Error::Io(e.to_string()))?;
    let mut got = 0;
    let mut mid_deadline = started.then(|| Instant::now() + MID_MESSAGE);
    while got < buf.len() {
        if w.stop.load(Relaxed) {
            return Err(Error::Stopped);
        }
        if got > 0 && mid_deadline.is_none() {
            mid_deadline = Some(Instant::now() + MID_MESSAGE);
        }
        if let Some(d) = mid_deadline {
            if Instant::now() >= d {
                return Err(Error::Io(format!(
                    "a message stalled for {} s",
                    MID_MESSAGE.as_secs()
                )));
            }
        } else if w.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Error::Timeout);
        }
        match s.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(Error::Io(
                    "connection closed in the middle of a message".into(),
                ))
            }
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(Error::Io(e.to_string())),
        }
    }
    Ok(true)
}

/// Read one message, reassembling its fragments. `Ok(None)`: the peer
/// closed the connection between messages. `versions` are the protocol
/// versions accepted.
pub fn recv<S: Conn + ?Sized>(
    s: &mut S,
    versions: &[u16],
    w: &Wait<'_>,
) -> Result<Option<Message>, Error> {
    recv_at_most(s, versions, w, MAX_MESSAGE)
}

/// [`recv`] with a smaller bound on the message's length (a server takes
/// little from a client it has not yet accepted).
pub fn recv_at_most<S: Conn + ?Sized>(
    s: &mut S,
    versions: &[u16],
    w: &Wait<'_>,
    max: usize,
) -> Result<Option<Message>, Error> {
    let max = max.min(MAX_MESSAGE);
    let mut msg: Option<Message> = None;
    loop {
        let mut h = [0u8; HEADER];
        if !read_full(s, &mut h, w, msg.is_some())? {
            return match msg {
                None => Ok(None),
                Some(_) => Err(Error::Io("connection closed between fragments".into())),
            };
        }
        let f = parse_header(&h, versions)?;
        let mut pdu = vec![0u8; f.len];
        if f.len > 0 && !read_full(s, &mut pdu, w, true)? {
            return Err(Error::Io(
                "connection closed in the middle of a message".into(),
            ));
        }
        if crc16(&pdu) != f.pdu_crc {
            return Err(Error::Garbage(format!(
                "payload CRC mismatch in a {} fragment",
                op::name(f.opcode)
            )));
        }
        let m = msg.get_or_insert_with(|| Message {
            version: f.version,
            opcode: f.opcode,
            tag: f.tag,
            payload: Vec::new(),
        });
        if m.opcode != f.opcode {
            return Err(Error::Garbage(format!(
                "fragment of {} inside a {} message",
                op::name(f.opcode),
                op::name(m.opcode)
            )));
        }
        if m.payload.len() + pdu.len() > max {
            let limit = if max >= 1 << 20 {
                format!("{} MiB", max >> 20)
            } else {
                format!("{} KiB", max >> 10)
            };
            return Err(Error::Garbage(format!(
                "a {} message longer than {limit}",
                op::name(m.opcode)
            )));
        }
        m.payload.extend_from_slice(&pdu);
        if f.flags & F_MORE == 0 {
            return Ok(msg);
        }
    }
}

/// A fragment's header, checked.
#[derive(Debug)]
pub struct Fragment {
    pub version: u16,
    pub opcode: u16,
    pub flags: u32,
    pub tag: u64,
    pub len: usize,
    pub pdu_crc: u16,
}

/// Check and decode a fragment header: its CRC, version and length.
pub fn parse_header(h: &[u8; HEADER], versions: &[u16]) -> Result<Fragment, Error> {
    let u16_at = |o: usize| u16::from_le_bytes([h[o], h[o + 1]]);
    let crc = u16_at(20);
    if crc16(&h[..20]) != crc {
        return Err(Error::Garbage(
            "header CRC mismatch (not fio's protocol?)".into(),
        ));
    }
    let version = u16_at(0);
    if !versions.contains(&version) {
        return Err(Error::Version {
            got: version,
            spoken: versions.to_vec(),
        });
    }
    let len = u32::from_le_bytes(h[16..20].try_into().expect("4 bytes")) as usize;
    if len > MAX_FRAGMENT {
        return Err(Error::Garbage(format!(
            "fragment of {len} bytes (fio's limit is {MAX_FRAGMENT})"
        )));
    }
    Ok(Fragment {
        version,
        opcode: u16_at(2),
        flags: u32::from_le_bytes(h[4..8].try_into().expect("4 bytes")),
        tag: u64::from_le_bytes(h[8..16].try_into().expect("8 bytes")),
        len,
        pdu_crc: u16_at(22),
    })
}

/// Split a captured byte stream into messages (for tests and tools):
/// every CRC and limit checked as on a socket.
pub fn split(mut bytes: &[u8], versions: &[u16]) -> Result<Vec<Message>, Error> {
    let mut out = Vec::new();
    let mut cur: Option<Message> = None;
    while !bytes.is_empty() {
        let h: &[u8; HEADER] = bytes
            .get(..HEADER)
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| Error::Garbage("truncated header".into()))?;
        let f = parse_header(h, versions)?;
        let pdu = bytes
            .get(HEADER..HEADER + f.len)
            .ok_or_else(|| Error::Garbage("truncated payload".into()))?;
        if crc16(pdu) != f.pdu_crc {
            return Err(Error::Garbage("payload CRC mismatch".into()));
        }
        let m = cur.get_or_insert_with(|| Message {
            version: f.version,
            opcode: f.opcode,
            tag: f.tag,
            payload: Vec::new(),
        });
        m.payload.extend_from_slice(pdu);
        bytes = &bytes[HEADER + f.len..];
        if f.flags & F_MORE == 0 {
            out.extend(cur.take());
        }
    }
    if cur.is_some() {
        return Err(Error::Garbage(
            "stream ends inside a fragmented message".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_is_arc() {
        // The check value of CRC-16/ARC.
        assert_eq!(crc16(b"123456789"), 0xBB3D);
    }

    #[test]
    fn long_messages_split_into_flagged_fragments_and_back() {
        let payload: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let bytes = encode(97, op::TS, 7, &payload);
        assert_eq!(bytes.len(), payload.len() + 3 * HEADER);
        let msgs = split(&bytes, &[97]).unwrap();
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].payload, payload);
        assert_eq!(msgs[0].tag, 7);
    }

    #[test]
    fn a_flipped_bit_is_refused() {
        let mut bytes = encode(97, op::TEXT, 0, b"hello");
        bytes[HEADER + 1] ^= 4;
        assert!(matches!(split(&bytes, &[97]), Err(Error::Garbage(_))));
        let mut bytes = encode(97, op::TEXT, 0, b"hello");
        bytes[3] ^= 1;
        assert!(matches!(split(&bytes, &[97]), Err(Error::Garbage(_))));
    }

    #[test]
    fn another_version_is_named() {
        let bytes = encode(96, op::PROBE, 0, b"");
        match split(&bytes, &[97, 120]) {
            Err(Error::Version { got: 96, spoken }) => assert_eq!(spoken, vec![97, 120]),
            other => panic!("{other:?}"),
        }
    }
}
