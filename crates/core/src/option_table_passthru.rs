//! The option table of fio's passthrough engines (`sg`, `io_uring_cmd`,
//! `mtd`): each option parsed as fio parses it into the job's
//! [`PassthruSpec`].

use crate::option_def::{Arity, OptionDef};
use crate::spec_passthru::*;
use crate::units::{parse_bool, parse_fio_size as parse_size};

/// An integer in decimal or `0x` hexadecimal, at most `max`.
fn int_upto(v: &str, max: u64) -> Result<u64, String> {
    let t = v.trim();
    let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| format!("'{v}' is not a whole number"))?;
    if n > max {
        return Err(format!("{n} is more than {max}"));
    }
    Ok(n)
}

macro_rules! flag {
    ($name:literal, $help:literal, $field:ident) => {
        OptionDef {
            name: $name,
            aliases: &[],
            arity: Arity::Flag,
            allowed: "0 or 1",
            help: $help,
            set: |s, v| {
                s.passthru.$field = parse_bool(v)?;
                Ok(())
            },
        }
    };
}

/// The table. Keep it sorted by name.
pub static PASSTHRU_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "apptag",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0 to 0xffff",
        help: "io_uring_cmd: application tag of protection information",
        set: |s, v| {
            s.passthru.apptag = int_upto(v, 0xffff)? as u16;
            Ok(())
        },
    },
    OptionDef {
        name: "apptag_mask",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0 to 0xffff",
        help: "io_uring_cmd: which application-tag bits are checked",
        set: |s, v| {
            s.passthru.apptag_mask = int_upto(v, 0xffff)? as u16;
            Ok(())
        },
    },
    OptionDef {
        name: "cmd_type",
        aliases: &[],
        arity: Arity::Value,
        allowed: "nvme or bsg",
        help: "io_uring_cmd: the command set (NVMe, or SCSI through /dev/bsg)",
        set: |s, v| {
            s.passthru.cmd_type = match v {
                "nvme" => CmdType::Nvme,
                "bsg" => CmdType::Bsg,
                _ => return Err(format!("'{v}' is not nvme or bsg")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "dataplacement",
        aliases: &["data_placement"],
        arity: Arity::Value,
        allowed: "none, fdp or streams",
        help: "io_uring_cmd: data placement (NVMe FDP or streams)",
        set: |s, v| {
            s.passthru.data_placement = match v {
                "none" => None,
                "fdp" | "streams" => Some(v.to_string()),
                _ => return Err(format!("'{v}' is not none, fdp or streams")),
            };
            Ok(())
        },
    },
    flag!("deac", "io_uring_cmd: write_mode=zeroes also deallocates (DEAC)", deac),
    OptionDef {
        name: "fdp",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring_cmd: NVMe flexible data placement (dataplacement=fdp)",
        set: |s, v| {
            s.passthru.data_placement = parse_bool(v)?.then(|| "fdp".to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "md_per_io_size",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size (bytes of separate metadata per I/O)",
        help: "io_uring_cmd: metadata buffer per I/O (protection information)",
        set: |s, v| {
            s.passthru.md_per_io_size = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "nonvectored",
        aliases: &[],
        arity: Arity::Value,
        allowed: "-1, 0 or 1",
        help: "io_uring_cmd: 0 issues vectored commands (NVME_URING_CMD_IO_VEC)",
        set: |s, v| {
            s.passthru.nonvectored = match v.trim() {
                "-1" => -1,
                "0" => 0,
                "1" => 1,
                _ => return Err(format!("'{v}' is not -1, 0 or 1")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "num_range",
        aliases: &[],
        arity: Arity::Value,
        allowed: "1 to 256",
        help: "ranges one trim command carries",
        set: |s, v| {
            let n = int_upto(v, u64::from(MAX_TRIM_RANGE))? as u32;
            if n == 0 {
                return Err("0 is not allowed (at least 1)".into());
            }
            s.passthru.num_range = n;
            Ok(())
        },
    },
    flag!("pi_act", "io_uring_cmd: the controller inserts and strips protection information (PRACT)", pi_act),
    OptionDef {
        name: "pi_chk",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a comma-separated list of GUARD, APPTAG, REFTAG",
        help: "io_uring_cmd: protection-information fields the device checks",
        set: |s, v| {
            s.passthru.pi_chk = Some(parse_pi_chk(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "plid_select",
        aliases: &["fdp_pli_select"],
        arity: Arity::Value,
        allowed: "random, roundrobin or scheme",
        help: "io_uring_cmd: how a write's placement ID is chosen",
        set: |s, v| {
            if !matches!(v, "random" | "roundrobin" | "scheme") {
                return Err(format!("'{v}' is not random, roundrobin or scheme"));
            }
            s.passthru.plid_select = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "plids",
        aliases: &["fdp_pli"],
        arity: Arity::Value,
        allowed: "placement ID indices: a list of numbers and ranges (0,1,4-6)",
        help: "io_uring_cmd: the placement IDs writes use",
        set: |s, v| {
            for part in v.split(',').map(str::trim) {
                let (a, b) = part.split_once('-').unwrap_or((part, part));
                let (a, b) = (int_upto(a, 0xffff)?, int_upto(b, 0xffff)?);
                if a > b {
                    return Err(format!("'{part}': the range runs backwards"));
                }
            }
            s.passthru.plids = Some(v.to_string());
            Ok(())
        },
    },
    flag!("readfua", "sg, io_uring_cmd: reads with Force Unit Access", readfua),
    OptionDef {
        name: "sg_write_mode",
        aliases: &[],
        arity: Arity::Value,
        allowed: "write, write_and_verify (verify), write_same (same), write_same_ndob, write_stream, verify_bytchk_00, verify_bytchk_01 or verify_bytchk_11",
        help: "sg: the SCSI command a write issues",
        set: |s, v| {
            s.passthru.sg_write_mode = SgWriteMode::parse(v)?;
            Ok(())
        },
    },
    flag!("skip_bad", "mtd: skip erase blocks marked bad", skip_bad),
    OptionDef {
        name: "stream_id",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0 to 65535 (0: open a stream)",
        help: "sg: the stream WRITE STREAM(16) writes to",
        set: |s, v| {
            s.passthru.stream_id = int_upto(v, 0xffff)? as u16;
            Ok(())
        },
    },
    OptionDef {
        name: "write_mode",
        aliases: &[],
        arity: Arity::Value,
        allowed: "write, uncor, zeroes, verify, zone_append, or a mix mode/pct:mode/pct",
        help: "io_uring_cmd: the NVMe command a write issues",
        set: |s, v| {
            s.passthru.write_mode = parse_write_mode(v)?;
            Ok(())
        },
    },
    flag!("writefua", "sg, io_uring_cmd: writes with Force Unit Access", writefua),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted() {
        let names: Vec<_> = PASSTHRU_OPTIONS.iter().map(|o| o.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }
}
