//! The options of fio's passthrough engines, which talk to a device in its
//! own command set rather than through the block layer's read and write:
//!
//! * `ioengine=sg`: SCSI commands (CDBs) through the Linux SG_IO interface,
//!   on `/dev/sgN` or a SCSI disk's block device (`sg_write_mode`,
//!   `readfua`, `writefua`, `stream_id`; `hipri` is the common option);
//! * `ioengine=io_uring_cmd`: NVMe I/O commands through io_uring's
//!   `IORING_OP_URING_CMD` on an NVMe generic character device
//!   (`/dev/ngXnY`): `cmd_type`, `write_mode`, `readfua`/`writefua`,
//!   `deac`, the protection-information options (`pi_act`, `pi_chk`,
//!   `apptag`, `apptag_mask`, `md_per_io_size`), and fio's data-placement
//!   options (`fdp`, `dataplacement`, `plids`, `plid_select`) and
//!   `num_range` (ranges per trim);
//! * `ioengine=mtd`: raw flash through the MTD character device (`skip_bad`).
//!
//! Everything here parses as fio parses it; what a device must be asked
//! (its block size, capacity, format) is learned when the job runs, and
//! what ssdready does not implement is refused then, naming it.

use serde::{Deserialize, Serialize};

/// fio's `sg_write_mode`: which SCSI command a write becomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SgWriteMode {
    /// WRITE(10/16).
    #[default]
    Write,
    /// WRITE AND VERIFY(10/16), BYTCHK 0 (`write_and_verify`, `verify`).
    WriteAndVerify,
    /// WRITE SAME(10/16) with one block of data (`write_same`, `same`).
    WriteSame,
    /// WRITE SAME(16) with NDOB (no data-out buffer: zeroes).
    WriteSameNdob,
    /// WRITE STREAM(16), in the stream `stream_id` (or one opened for it).
    WriteStream,
    /// VERIFY(10/16) BYTCHK 00: the medium only, no data sent.
    VerifyBytchk00,
    /// VERIFY(10/16) BYTCHK 01: compare with the data sent.
    VerifyBytchk01,
    /// VERIFY(10/16) BYTCHK 11: compare every block with one block sent.
    VerifyBytchk11,
}

/// Why a passthrough option's value (`sg_write_mode`, `write_mode`,
/// `pi_chk`) could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PassthruError {
    #[error("'{0}' is not an sg write mode")]
    NotSgWriteMode(String),
    #[error("'{0}' is not a write mode (write, uncor, zeroes, verify or zone_append)")]
    NotWriteMode(String),
    #[error("'{0}' is given twice")]
    Twice(String),
    #[error("'{0}' is not a percentage from 0 to 100")]
    NotAPercentage(String),
    #[error("the percentages add to {0}, not 100")]
    Not100(u32),
    #[error("'{0}' is not GUARD, APPTAG or REFTAG")]
    NotAField(String),
}

impl From<PassthruError> for String {
    fn from(e: PassthruError) -> String {
        e.to_string()
    }
}

impl SgWriteMode {
    /// The mode a value of `sg_write_mode` names (fio's spellings,
    /// deprecated ones included).
    pub fn parse(v: &str) -> Result<Self, PassthruError> {
        Ok(match v {
            "write" => Self::Write,
            "write_and_verify" | "verify" => Self::WriteAndVerify,
            "write_same" | "same" => Self::WriteSame,
            "write_same_ndob" => Self::WriteSameNdob,
            "write_stream" => Self::WriteStream,
            "verify_bytchk_00" => Self::VerifyBytchk00,
            "verify_bytchk_01" => Self::VerifyBytchk01,
            "verify_bytchk_11" => Self::VerifyBytchk11,
            _ => return Err(PassthruError::NotSgWriteMode(v.to_string())),
        })
    }
}

/// `cmd_type` of io_uring_cmd.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmdType {
    /// NVMe I/O commands (`NVME_URING_CMD_IO`).
    #[default]
    Nvme,
    /// SCSI commands through the block SCSI generic driver (`/dev/bsg/…`).
    Bsg,
}

/// What one write of io_uring_cmd becomes (`write_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NvmeWriteMode {
    /// Write (opcode 01h).
    Write,
    /// Write Uncorrectable (04h): no data.
    Uncor,
    /// Write Zeroes (08h): no data.
    Zeroes,
    /// Verify (0Ch): no data.
    Verify,
    /// Zone Append (7Dh), zoned namespaces.
    ZoneAppend,
}

impl NvmeWriteMode {
    fn parse(v: &str) -> Result<Self, PassthruError> {
        Ok(match v {
            "write" => Self::Write,
            "uncor" => Self::Uncor,
            "zeroes" => Self::Zeroes,
            "verify" => Self::Verify,
            "zone_append" => Self::ZoneAppend,
            _ => return Err(PassthruError::NotWriteMode(v.to_string())),
        })
    }
}

/// `write_mode=`: one mode, or fio's mix `mode/pct:mode/pct:…` where a
/// blank percentage splits what is left evenly. Percentages add to 100.
pub fn parse_write_mode(v: &str) -> Result<Vec<(NvmeWriteMode, u32)>, PassthruError> {
    if !v.contains('/') && !v.contains(':') {
        return Ok(vec![(NvmeWriteMode::parse(v.trim())?, 100)]);
    }
    let mut out: Vec<(NvmeWriteMode, Option<u32>)> = Vec::new();
    for part in v.split(':').filter(|p| !p.trim().is_empty()) {
        let (m, pct) = part.split_once('/').unwrap_or((part, ""));
        let mode = NvmeWriteMode::parse(m.trim())?;
        if out.iter().any(|(x, _)| *x == mode) {
            return Err(PassthruError::Twice(m.trim().to_string()));
        }
        let pct = match pct.trim() {
            "" => None,
            p => Some(
                p.parse::<u32>()
                    .ok()
                    .filter(|n| *n <= 100)
                    .ok_or_else(|| PassthruError::NotAPercentage(p.to_string()))?,
            ),
        };
        out.push((mode, pct));
    }
    let given: u32 = out.iter().filter_map(|x| x.1).sum();
    let blanks = out.iter().filter(|x| x.1.is_none()).count() as u32;
    if given > 100 || (blanks == 0 && given != 100) {
        return Err(PassthruError::Not100(given));
    }
    let (share, mut extra) = match blanks {
        0 => (0, 0),
        b => ((100 - given) / b, (100 - given) % b),
    };
    Ok(out
        .into_iter()
        .map(|(m, p)| {
            let p = p.unwrap_or_else(|| {
                let e = u32::from(extra > 0);
                extra = extra.saturating_sub(1);
                share + e
            });
            (m, p)
        })
        .collect())
}

/// `pi_chk`: which protection-information fields the device checks.
pub fn parse_pi_chk(v: &str) -> Result<u8, PassthruError> {
    let mut bits = 0;
    for f in v.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        bits |= match f.to_ascii_uppercase().as_str() {
            "GUARD" => 4,
            "APPTAG" => 2,
            "REFTAG" => 1,
            _ => return Err(PassthruError::NotAField(f.to_string())),
        };
    }
    Ok(bits)
}

/// The passthrough engines' options; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassthruSpec {
    /// sg: `sg_write_mode`.
    pub sg_write_mode: SgWriteMode,
    /// sg: `stream_id` for WRITE STREAM (0: open one).
    pub stream_id: u16,
    /// FUA on reads (`readfua`).
    pub readfua: bool,
    /// FUA on writes (`writefua`).
    pub writefua: bool,
    /// io_uring_cmd: `cmd_type`.
    pub cmd_type: CmdType,
    /// io_uring_cmd: `write_mode`, as (mode, percent of writes).
    pub write_mode: Vec<(NvmeWriteMode, u32)>,
    /// io_uring_cmd: `deac` (Write Zeroes deallocates).
    pub deac: bool,
    /// io_uring_cmd: `nonvectored` (-1: fio's default, 0: vectored, 1: not).
    pub nonvectored: i32,
    /// `pi_act` (fio's default 1).
    pub pi_act: bool,
    /// `pi_chk` as PRCHK bits (guard 4, apptag 2, reftag 1); None: not set.
    pub pi_chk: Option<u8>,
    /// `apptag`.
    pub apptag: u16,
    /// `apptag_mask`.
    pub apptag_mask: u16,
    /// `md_per_io_size` in bytes.
    pub md_per_io_size: u64,
    /// `fdp=1`, or `dataplacement` other than none.
    pub data_placement: Option<String>,
    /// `plids`/`fdp_pli` as written.
    pub plids: Option<String>,
    /// `plid_select`/`fdp_pli_select` as written.
    pub plid_select: Option<String>,
    /// `num_range`: ranges per trim command (1..=256).
    pub num_range: u32,
    /// mtd: `skip_bad`.
    pub skip_bad: bool,
}

impl Default for PassthruSpec {
    fn default() -> Self {
        PassthruSpec {
            sg_write_mode: SgWriteMode::Write,
            stream_id: 0,
            readfua: false,
            writefua: false,
            cmd_type: CmdType::Nvme,
            write_mode: vec![(NvmeWriteMode::Write, 100)],
            deac: false,
            nonvectored: -1,
            pi_act: true,
            pi_chk: None,
            apptag: 0x1234,
            apptag_mask: 0xffff,
            md_per_io_size: 0,
            data_placement: None,
            plids: None,
            plid_select: None,
            num_range: 1,
            skip_bad: false,
        }
    }
}

/// fio's most ranges in one trim (`MAX_TRIM_RANGE`).
pub const MAX_TRIM_RANGE: u32 = 256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_mode_mix_splits_blank_percentages_evenly() {
        use NvmeWriteMode::*;
        assert_eq!(parse_write_mode("zeroes").unwrap(), vec![(Zeroes, 100)]);
        assert_eq!(
            parse_write_mode("write/40:zeroes/30:uncor/20:verify/10").unwrap(),
            vec![(Write, 40), (Zeroes, 30), (Uncor, 20), (Verify, 10)]
        );
        assert_eq!(
            parse_write_mode("write/50:zeroes/:uncor/").unwrap(),
            vec![(Write, 50), (Zeroes, 25), (Uncor, 25)]
        );
        assert_eq!(
            parse_write_mode("write/:zeroes/:uncor/").unwrap(),
            vec![(Write, 34), (Zeroes, 33), (Uncor, 33)]
        );
        for bad in [
            "write/60:zeroes/60",
            "write/50:zeroes/40",
            "write/50:write/50",
            "trim",
        ] {
            assert!(parse_write_mode(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pi_chk_names_become_prchk_bits() {
        assert_eq!(parse_pi_chk("GUARD,APPTAG,REFTAG").unwrap(), 7);
        assert_eq!(parse_pi_chk("reftag").unwrap(), 1);
        assert!(parse_pi_chk("GUARD,CRC").is_err());
    }

    #[test]
    fn sg_write_modes_take_fios_deprecated_spellings() {
        assert_eq!(
            SgWriteMode::parse("verify").unwrap(),
            SgWriteMode::WriteAndVerify
        );
        assert_eq!(SgWriteMode::parse("same").unwrap(), SgWriteMode::WriteSame);
        assert!(SgWriteMode::parse("erase").is_err());
    }
}
