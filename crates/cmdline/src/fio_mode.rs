//! ssdready called as `fio` (a link named `fio` to the binary): a drop-in
//! fio. The command line is fio's (`fio [options] [job files]`, no
//! subcommand), with fio's defaults: a job that names no target and no
//! engine uses fio's files (`jobname.N.M` in the current directory or
//! `directory=`) with psync, not the built-in emulator. ssdready's notes and
//! cross-check warnings stay in the outputs (the normal text, a JSON
//! `warnings` key) unless `--stderr-notes` is given, so that a script that
//! treats anything on stderr as a failure sees what it would see with fio.
//! Besides the switches `run` reads, fio mode answers `--version`,
//! `--help`, `--inflate-log=FILE` and `--server`/`--daemonize` (mapped
//! onto `ssdready server`).

use std::io::Read as _;
use std::path::Path;

/// The fio release whose command line, options and output ssdready follows.
pub const FIO_VERSION: &str = "3.33";

/// Whether the binary was started under the name `fio`.
pub fn invoked_as_fio() -> bool {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == "fio"))
        .unwrap_or(false)
}

/// `fio --version`: fio's layout, naming ssdready (its version `ssdready`).
pub fn version_line(ssdready: &str) -> String {
    format!("fio-{FIO_VERSION} (ssdready {ssdready})")
}

pub const USAGE: &str = "usage: fio [options] [job options] <job file(s)>
  --version             Print version info and exit
  --help                Print this page
  --output=FILE         Write the output to FILE
  --output-format=X     normal, terse, json, json+ or native (several comma-separated)
  --minimal             Terse output
  --max-jobs=N          The most jobs (clones counted) a run may start
  --debug=LIST          Debug classes (parse prints each option; see --debug=?)
  --readonly            Refuse any job that writes or trims
  --aux-path=DIR        Where verify-state files go
  --eta=when            When progress is shown: always, never or auto
  --eta-newline=T       Progress as a new line every T
  --status-interval=T   Cumulative figures every T
  --section=NAME        Run only section NAME of the job files
  --warnings-fatal      A run with warnings exits 1
  --parse-only          Check the jobs and print them; run nothing
  --inflate-log=FILE    Print a compressed log (NAME.log.fz) as text
  --server=[IP][,PORT]  Serve fio clients (ssdready server)
  --client=HOSTS        Run the jobs on fio servers
  --stderr-notes        ssdready's notes and cross-checks on stderr too
This is ssdready answering as fio; `ssdready options` lists every job option.";

/// The most a compressed log may hold, read or inflated: past it the log
/// is refused (a log this large is not one fio wrote in one run).
pub const MAX_LOG: u64 = 256 << 20;

/// The bytes of the regular file `path`, at most [`MAX_LOG`]: opened
/// without waiting (a FIFO or a device is refused, never read).
pub fn read_log(path: &Path) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| e.to_string())?;
    let md = f.metadata().map_err(|e| e.to_string())?;
    if !md.is_file() {
        return Err("not a regular file (allowed: a NAME.log.fz log)".into());
    }
    if md.len() > MAX_LOG {
        return Err(format!(
            "{} bytes, more than a log holds (allowed: at most {MAX_LOG} bytes)",
            md.len()
        ));
    }
    let mut bytes = Vec::new();
    f.take(MAX_LOG)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// fio's bits in a sample's ddir field.
const LOG_OFFSET_SAMPLE_BIT: u32 = 0x8000_0000;
const LOG_PRIO_SAMPLE_BIT: u32 = 0x4000_0000;

/// The text of a compressed log: its zlib streams one after another, each
/// holding whole samples.
pub fn inflate(bytes: &[u8]) -> Result<String, String> {
    inflate_at_most(bytes, MAX_LOG)
}

/// [`inflate`], refusing a log whose samples inflate past `max` bytes
/// (nothing past the bound is inflated).
pub fn inflate_at_most(bytes: &[u8], max: u64) -> Result<String, String> {
    let mut raw = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let room = max - raw.len() as u64;
        let mut z = flate2::read::ZlibDecoder::new(&bytes[pos..]);
        (&mut z)
            .take(room + 1)
            .read_to_end(&mut raw)
            .map_err(|e| format!("not a compressed fio log at byte {pos}: {e}"))?;
        if raw.len() as u64 > max {
            return Err(format!(
                "inflates to more than {max} bytes (allowed: at most {max} bytes of samples)"
            ));
        }
        let used = z.total_in() as usize;
        if used == 0 {
            break;
        }
        pos += used;
    }
    let mut out = String::new();
    let mut at = 0;
    while at + 32 <= raw.len() {
        let u64_at = |i: usize| u64::from_le_bytes(raw[i..i + 8].try_into().expect("8 bytes"));
        let (t, val) = (u64_at(at), u64_at(at + 8));
        let ddir = u32::from_le_bytes(raw[at + 16..at + 20].try_into().expect("4 bytes"));
        let prio = u16::from_le_bytes(raw[at + 20..at + 22].try_into().expect("2 bytes"));
        let bs = u64_at(at + 24);
        let d = ddir & !(LOG_OFFSET_SAMPLE_BIT | LOG_PRIO_SAMPLE_BIT);
        let prio = match ddir & LOG_PRIO_SAMPLE_BIT {
            0 => u8::from(prio >> 13 == 1).to_string(),
            _ => format!("0x{prio:04x}"),
        };
        if ddir & LOG_OFFSET_SAMPLE_BIT != 0 {
            if at + 40 > raw.len() {
                return Err("the last sample is cut short".into());
            }
            let off = u64_at(at + 32);
            out.push_str(&format!("{t}, {val}, {d}, {bs}, {off}, {prio}\n"));
            at += 40;
        } else {
            out.push_str(&format!("{t}, {val}, {d}, {bs}, {prio}\n"));
            at += 32;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn sample(t: u64, v: u64, ddir: u32, bs: u64, off: Option<u64>) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(t.to_le_bytes());
        b.extend(v.to_le_bytes());
        let flag = if off.is_some() {
            LOG_OFFSET_SAMPLE_BIT
        } else {
            0
        };
        b.extend((ddir | flag).to_le_bytes());
        b.extend([0u8; 4]);
        b.extend(bs.to_le_bytes());
        if let Some(o) = off {
            b.extend(o.to_le_bytes());
        }
        b
    }

    fn zlib(b: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(b).unwrap();
        z.finish().unwrap()
    }

    #[test]
    fn a_log_that_inflates_past_its_bound_is_refused_before_it_is_held() {
        // 4 MiB of zeros compress to a few KiB.
        let bomb = zlib(&vec![0u8; 4 << 20]);
        assert!(bomb.len() < 64 << 10);
        let e = inflate_at_most(&bomb, 1 << 20).unwrap_err();
        assert!(e.contains("inflates to more than 1048576 bytes"), "{e}");
        assert!(inflate_at_most(&bomb, 4 << 20).is_ok());
    }

    #[test]
    fn a_fifo_or_a_device_given_as_a_log_is_refused_without_waiting() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("log.fz");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let e = read_log(&fifo).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_log(Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let file = d.path().join("ok.fz");
        std::fs::write(&file, zlib(&sample(1, 2, 0, 512, None))).unwrap();
        assert_eq!(
            inflate(&read_log(&file).unwrap()).unwrap(),
            "1, 2, 0, 512, 0\n"
        );
    }

    #[test]
    fn inflate_reads_every_stream_of_a_log() {
        let mut file = zlib(&sample(1, 100, 1, 4096, Some(0)));
        file.extend(zlib(&sample(2, 200, 1, 4096, Some(4096))));
        assert_eq!(
            inflate(&file).unwrap(),
            "1, 100, 1, 4096, 0, 0\n2, 200, 1, 4096, 4096, 0\n"
        );
        assert_eq!(
            inflate(&zlib(&sample(5, 7, 0, 512, None))).unwrap(),
            "5, 7, 0, 512, 0\n"
        );
        assert!(inflate(b"not zlib").is_err());
    }

    #[test]
    fn the_version_names_fio_and_ssdready() {
        let v = version_line("0.1.0-test");
        assert!(v.starts_with("fio-3."), "{v}");
        assert!(v.contains("(ssdready "), "{v}");
    }
}
