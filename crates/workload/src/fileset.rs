//! A clone's files, named and sized as fio names and sizes them
//! (init.c's `add_job`/`make_filename`, filesetup.c's `setup_files`).
//!
//! * **Names**: the `filename` list when given (shared by every clone);
//!   else every regular file below `opendir`; else `nrfiles` names from
//!   `filename_format` (`$jobname.$jobnum.$filenum` by default, `$jobnum`
//!   being the clone's number), in `directory` — with several
//!   directories (`a:b`), clone N uses the N-th (wrapping). A job named
//!   after an existing device or directory with one file uses that name.
//! * **Sizes**: `size` is split evenly over the files (the first ones one
//!   smallest block larger when it does not divide); `filesize` gives each
//!   file its size, or a size drawn from its range, for files whose
//!   present size is outside it; without either, a file's present size.
//!   `size=N%` takes that share of each file. Each region starts at
//!   `offset` (or `offset=N%` of the file, aligned up to `offset_align` or
//!   the smallest block) plus the clone's number × `offset_increment`.
//!
//! The caller supplies the file system: what exists and how big it is.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use ssdready_core::spec::{Amount, JobSpec, SpecError};

/// One file of a clone: its path and the region the clone covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneFile {
    /// The path as fio would open it.
    pub path: String,
    /// First byte of the region.
    pub offset: u64,
    /// Bytes of the region.
    pub len: u64,
}

/// fio's default `filename_format`.
pub const DEFAULT_FORMAT: &str = "$jobname.$jobnum.$filenum";

/// A generated file name (fio's `make_filename`; keywords are matched
/// without regard to case).
pub fn make_filename(format: &str, job: &str, jobnum: u32, filenum: u32) -> String {
    let mut out = String::with_capacity(format.len() + job.len());
    let lower = format.to_ascii_lowercase();
    let mut i = 0;
    while i < format.len() {
        let rest = &lower[i..];
        let (word, value) = if rest.starts_with("$jobname") {
            ("$jobname", job.to_string())
        } else if rest.starts_with("$jobnum") {
            ("$jobnum", jobnum.to_string())
        } else if rest.starts_with("$filenum") {
            ("$filenum", filenum.to_string())
        } else {
            let c = format[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        out.push_str(&value);
        i += word.len();
    }
    out
}

/// What the caller knows about a path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathInfo {
    /// Whether it exists.
    pub exists: bool,
    /// Whether it is a regular file.
    pub regular: bool,
    /// Its size in bytes (a device's capacity; 0 when missing).
    pub size: u64,
}

/// The names of clone `clone`'s files. `info` describes a path; `list`
/// returns the regular files below a directory, recursively.
pub fn names(
    spec: &JobSpec,
    clone: u32,
    info: &dyn Fn(&str) -> PathInfo,
    list: &dyn Fn(&str) -> Result<Vec<String>, String>,
) -> Result<Vec<String>, SpecError> {
    if !spec.filename.is_empty() {
        return Ok(spec.filename.clone());
    }
    let err = |opt: &str, m: String| SpecError::new(opt, m).in_job(&spec.name);
    if let Some(dir) = &spec.opendir {
        let mut v = list(dir).map_err(|e| err("opendir", format!("{dir}: {e}")))?;
        v.sort();
        if v.is_empty() {
            return Err(err(
                "opendir",
                format!("{dir} holds no regular file (allowed: a directory with files to use)"),
            ));
        }
        return Ok(v);
    }
    if spec.nrfiles == 1 && spec.filename_format.is_none() {
        let i = info(&spec.name);
        if i.exists && !i.regular {
            return Ok(vec![spec.name.clone()]);
        }
    }
    let dirs = spec
        .directory
        .as_deref()
        .map(ssdready_core::option_values::split_names)
        .unwrap_or_default();
    let dir = (!dirs.is_empty()).then(|| &dirs[clone as usize % dirs.len()]);
    let format = spec.filename_format.as_deref().unwrap_or(DEFAULT_FORMAT);
    Ok((0..spec.nrfiles.max(1))
        .map(|i| {
            let name = make_filename(format, &spec.name, clone, i);
            match dir {
                Some(d) => format!("{}/{name}", d.trim_end_matches('/')),
                None => name,
            }
        })
        .collect())
}

/// The regions of clone `clone` on files whose present sizes are
/// `sizes` (0 for a file still to be made), as fio's `setup_files`
/// computes them.
pub fn regions(spec: &JobSpec, clone: u32, sizes: &[u64]) -> Result<Vec<(u64, u64)>, SpecError> {
    let err = |opt: &str, m: String| SpecError::new(opt, m).in_job(&spec.name);
    let n = sizes.len().max(1) as u64;
    let min_bs = u64::from(spec.bs.min()).max(1);
    let total: u64 = sizes.iter().sum();
    if total == 0 && spec.size.is_none() && spec.filesize.is_none() {
        return Err(err(
            "size",
            "the job's files do not exist or are empty, and no size was given to make them (set size, e.g. size=1g, or filesize)"
                .into(),
        ));
    }
    let (share, mut extra) = match spec.size {
        Some(s) if spec.filesize.is_none() => (s / n, (s - s / n * n) / min_bs),
        _ => (0, 0),
    };
    // fio's file_size_state: seeded from the job's seed, so sizes repeat.
    let mut rng = SmallRng::seed_from_u64(spec.randseed ^ 0xf11e_517e ^ u64::from(clone));
    let mut out = Vec::with_capacity(sizes.len());
    for &real in sizes {
        let offset = start_offset(spec, clone, real, min_bs);
        let mut len = match spec.filesize {
            None if share > 0 => {
                let extra_bs = if extra > 0 {
                    extra -= 1;
                    min_bs
                } else {
                    0
                };
                share + extra_bs
            }
            None => real.checked_sub(offset).ok_or_else(|| {
                err(
                    "offset",
                    format!("{offset} is beyond the end of a file of {real} bytes"),
                )
            })?,
            Some((lo, hi)) if real < lo || real > hi => {
                let size = if lo == hi {
                    lo
                } else {
                    let s = lo + (((hi - lo) as f64) * rng.random::<f64>()) as u64;
                    s - s % min_bs
                };
                size.checked_sub(offset).ok_or_else(|| {
                    err("offset", format!("{offset} is beyond the file size {size}"))
                })?
            }
            Some(_) => real.saturating_sub(offset),
        };
        if let Some(p) = spec.size_percent.filter(|&p| p != 100) {
            let file = len + offset;
            len = (file * u64::from(p) / 100).min(file - offset);
            len -= len % min_bs;
        }
        out.push((offset, len));
    }
    Ok(out)
}

/// fio's `get_start_offset` (`file_append`: the file's end; the caller
/// turns it off for devices, where fio ignores it).
fn start_offset(spec: &JobSpec, clone: u32, real: u64, min_bs: u64) -> u64 {
    if spec.access.file_append {
        return real;
    }
    let align_bs = if spec.offset_align > 0 {
        spec.offset_align
    } else {
        min_bs
    };
    let increment = match spec.offset_increment {
        Amount::Percent(p) => (u128::from(p) * u128::from(real) / 100) as u64,
        Amount::Bytes(b) => b,
    };
    let step = increment.saturating_mul(u64::from(clone));
    let (offset, align) = match spec.offset_percent {
        Some(p) => (
            ((u128::from(real) * u128::from(p) / 100) as u64).saturating_add(step),
            true,
        ),
        None => (
            spec.offset.saturating_add(step),
            matches!(spec.offset_increment, Amount::Percent(_)),
        ),
    };
    if align {
        offset.div_ceil(align_bs).saturating_mul(align_bs)
    } else {
        offset
    }
}

/// Why a job's region does not fit on an emulated device.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    #[error("option 'offset': {offset} is beyond the emulated device's {capacity} bytes")]
    OffsetBeyond { offset: u64, capacity: u64 },
    #[error(
        "option 'size': offset + size = {end} exceeds the emulated device's {capacity} bytes (raise the device's size=)"
    )]
    EndBeyond { end: u64, capacity: u64 },
}

/// The region of clone `clone` on one target of `capacity` bytes (the
/// emulator): `offset`/`size` resolved, percentages included.
pub fn region_on(spec: &JobSpec, clone: u32, capacity: u64) -> Result<(u64, u64), RegionError> {
    let min_bs = u64::from(spec.bs.min()).max(1);
    let offset = start_offset(spec, clone, capacity, min_bs);
    if offset >= capacity {
        return Err(RegionError::OffsetBeyond { offset, capacity });
    }
    let mut len = spec.size.unwrap_or(capacity - offset);
    if let Some(p) = spec.size_percent.filter(|&p| p != 100) {
        len = (capacity * u64::from(p) / 100).min(capacity - offset);
        len -= len % min_bs;
    }
    if offset + len > capacity {
        return Err(RegionError::EndBeyond {
            end: offset + len,
            capacity,
        });
    }
    Ok((offset, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::spec::BlockSizes;

    fn none(_: &str) -> PathInfo {
        PathInfo::default()
    }
    fn no_dir(_: &str) -> Result<Vec<String>, String> {
        Err("no such directory".into())
    }

    #[test]
    fn generated_names_follow_fio() {
        let spec = JobSpec {
            name: "file1".into(),
            nrfiles: 3,
            directory: Some("a:b/".into()),
            ..JobSpec::default()
        };
        assert_eq!(
            names(&spec, 0, &none, &no_dir).unwrap(),
            ["a/file1.0.0", "a/file1.0.1", "a/file1.0.2"]
        );
        assert_eq!(names(&spec, 1, &none, &no_dir).unwrap()[2], "b/file1.1.2");
        assert_eq!(names(&spec, 2, &none, &no_dir).unwrap()[0], "a/file1.2.0");
        let spec = JobSpec {
            name: "j".into(),
            filename_format: Some("shared.$FILENUM".into()),
            nrfiles: 2,
            ..JobSpec::default()
        };
        assert_eq!(
            names(&spec, 5, &none, &no_dir).unwrap(),
            ["shared.0", "shared.1"]
        );
        assert_eq!(make_filename("x/$jobname-$jobnum", "job", 7, 0), "x/job-7");
    }

    #[test]
    fn a_job_named_after_a_device_uses_it() {
        let spec = JobSpec {
            name: "/dev/sdz".into(),
            ..JobSpec::default()
        };
        let dev = |p: &str| PathInfo {
            exists: p == "/dev/sdz",
            regular: false,
            size: 1 << 30,
        };
        assert_eq!(names(&spec, 0, &dev, &no_dir).unwrap(), ["/dev/sdz"]);
    }

    #[test]
    fn opendir_lists_its_files_sorted() {
        let spec = JobSpec {
            opendir: Some("d".into()),
            ..JobSpec::default()
        };
        let list = |_: &str| Ok(vec!["d/b".to_string(), "d/a".to_string()]);
        assert_eq!(names(&spec, 0, &none, &list).unwrap(), ["d/a", "d/b"]);
        let empty = |_: &str| Ok(Vec::new());
        assert!(names(&spec, 0, &none, &empty).is_err());
    }

    #[test]
    fn size_is_split_as_fio_splits_it() {
        let spec = JobSpec {
            size: Some(12 * 4096),
            ..JobSpec::default()
        };
        // fio: size / files each; the remainder goes to the first files
        // only in whole smallest blocks (here it is 2 bytes: dropped).
        let r = regions(&spec, 0, &[0; 5]).unwrap();
        assert_eq!(r, [(0, 9830); 5]);
        let spec = JobSpec {
            size: Some(1000 * 1000 + 1536),
            bs: BlockSizes::Fixed(512),
            ..JobSpec::default()
        };
        let r = regions(&spec, 0, &[0; 1000]).unwrap();
        assert_eq!(
            (r[0].1, r[1].1),
            (1001 + 512, 1001),
            "536 bytes left: one block extra"
        );
    }

    #[test]
    fn filesize_ranges_are_drawn_and_aligned() {
        let spec = JobSpec {
            filesize: Some((1 << 20, 4 << 20)),
            bs: BlockSizes::Fixed(4096),
            ..JobSpec::default()
        };
        let r = regions(&spec, 0, &[0; 50]).unwrap();
        assert!(r
            .iter()
            .all(|x| (1 << 20..=4 << 20).contains(&x.1) && x.1 % 4096 == 0));
        assert!(r.iter().any(|x| x.1 != r[0].1), "sizes vary");
        let kept = regions(&spec, 0, &[2 << 20]).unwrap();
        assert_eq!(
            kept,
            [(0, 2 << 20)],
            "a file already in range keeps its size"
        );
        let fixed = JobSpec {
            filesize: Some((1 << 20, 1 << 20)),
            ..JobSpec::default()
        };
        assert_eq!(regions(&fixed, 0, &[0, 0]).unwrap(), [(0, 1 << 20); 2]);
    }

    #[test]
    fn percentages_and_increments() {
        let spec = JobSpec {
            size_percent: Some(50),
            offset_increment: Amount::Percent(25),
            ..JobSpec::default()
        };
        let gib = 1u64 << 30;
        assert_eq!(regions(&spec, 0, &[gib]).unwrap(), [(0, gib / 2)]);
        assert_eq!(regions(&spec, 2, &[gib]).unwrap()[0].0, gib / 2);
        let spec = JobSpec {
            offset_percent: Some(10),
            size: Some(4096),
            offset_align: 1 << 20,
            ..JobSpec::default()
        };
        assert_eq!(
            regions(&spec, 0, &[gib]).unwrap()[0].0,
            103 << 20,
            "aligned up"
        );
        assert!(
            regions(&JobSpec::default(), 0, &[0]).is_err(),
            "no size, no file"
        );
        assert_eq!(region_on(&spec, 0, gib).unwrap(), (103 << 20, 4096));
    }

    #[test]
    fn a_region_past_the_emulated_device_is_refused_naming_its_bytes() {
        let at = |offset, size| JobSpec {
            offset,
            size,
            ..JobSpec::default()
        };
        assert_eq!(
            region_on(&at(8192, None), 0, 4096).unwrap_err().to_string(),
            "option 'offset': 8192 is beyond the emulated device's 4096 bytes"
        );
        assert_eq!(
            region_on(&at(0, Some(8192)), 0, 4096)
                .unwrap_err()
                .to_string(),
            "option 'size': offset + size = 8192 exceeds the emulated device's 4096 bytes \
             (raise the device's size=)"
        );
    }
}
