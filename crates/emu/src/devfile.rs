//! Device files: an emulated drive described in TOML, one parameter a key.
//!
//! `emu:file=PATH.toml[,key=value...]` builds the drive a file describes;
//! `ssdready emu presets --toml NAME` prints a preset as such a file, every
//! parameter written out, to start from. The keys are the emulator's
//! inline keys (`read_ns`, `program_ns`, `planes`, …, as
//! [`Params::parse`] takes them after `emu:`), with the same units and
//! ranges; a value is a TOML integer, float, boolean or string
//! (`program_ns = "190us/386us/996us"`, `gc = "greedy"`, `size = "8g"`).
//! An optional `preset = "NAME"` is the base the other keys change (the
//! default preset without it). Unknown keys, values of the wrong kind and
//! impossible drives are refused with the file, the key and the allowed
//! values, as inline keys are; keys given inline after the file change it
//! once more.

use crate::config::error::{DeviceFileError, ParamError};
use crate::config::params::Params;
use crate::config::presets::preset;
use std::path::Path;

/// The largest device file read: a drive has a few dozen keys.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Read the drive `path` describes; not yet checked ([`Params::check`]).
pub fn load(path: &Path) -> Result<Params, ParamError> {
    let refused = |why| ParamError::DeviceFile {
        path: path.to_path_buf(),
        why,
    };
    let md = std::fs::metadata(path).map_err(|e| refused(DeviceFileError::Io(e)))?;
    if !md.is_file() {
        return Err(refused(DeviceFileError::NotRegular));
    }
    if md.len() > MAX_FILE_BYTES {
        return Err(refused(DeviceFileError::TooLarge));
    }
    // Capped by bytes read, not by the size stat reports (procfs files
    // report 0 and can be endless).
    let bytes = std::fs::File::open(path)
        .and_then(|f| ssdready_io::written::read_capped(f, MAX_FILE_BYTES, "it"))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => refused(DeviceFileError::TooLarge),
            _ => refused(DeviceFileError::Io(e)),
        })?;
    let text = String::from_utf8(bytes).map_err(|_| refused(DeviceFileError::NotUtf8))?;
    from_toml(&text).map_err(|e| refused(DeviceFileError::Content(Box::new(e))))
}

/// The drive TOML text describes.
pub fn from_toml(text: &str) -> Result<Params, ParamError> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ParamError::Toml(one_line(&e.to_string())))?;
    let mut p = match table.get("preset") {
        None => Params::default(),
        Some(toml::Value::String(name)) => {
            preset(name).ok_or_else(|| ParamError::TomlPreset { name: name.clone() })?
        }
        Some(v) => {
            return Err(ParamError::TomlPresetKind {
                value: v.to_string(),
            })
        }
    };
    for (k, v) in table.iter().filter(|(k, _)| *k != "preset") {
        let text = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => u8::from(*b).to_string(),
            other => {
                return Err(ParamError::TomlValueKind {
                    key: k.clone(),
                    kind: other.type_str(),
                })
            }
        };
        p.set_key(k, &text)?;
    }
    Ok(p)
}

/// `p` as a device file, every parameter written out, under a comment
/// naming where it came from.
pub fn to_toml(p: &Params, origin: &str) -> String {
    let mut out = format!(
        "# An ssdready emulated drive: {origin}.\n\
         # Use it as --filename=emu:file=PATH (keys given after it, e.g.\n\
         # emu:file=PATH,size=8g, change it once more). Every key is the\n\
         # emulator's inline key, in its units (ns, bytes, MB/s); times and\n\
         # sizes may also be strings with units (\"55us\", \"16k\").\n"
    );
    out.push_str(&format!("preset = {}\n", quote(&p.preset)));
    for (k, v) in p.settable_pairs() {
        let value = match v.parse::<f64>() {
            Ok(_) if !v.contains(['i', 'I', 'n', 'N']) => v,
            _ if v == "true" || v == "false" => v,
            _ => quote(&v),
        };
        out.push_str(&format!("{k} = {value}\n"));
    }
    out
}

fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// A TOML parse error's text on one line.
fn one_line(e: &str) -> String {
    e.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '|' || c == '^' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_round_trips_through_its_device_file() {
        for (name, _) in crate::config::PRESETS {
            let p = preset(name).unwrap();
            let text = to_toml(&p, &format!("the {name} preset"));
            let back = from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            assert_eq!(back, p, "{name}:\n{text}");
            back.check().unwrap();
        }
    }

    #[test]
    fn a_file_changes_its_preset_with_typed_values() {
        let p = from_toml(
            "preset = \"x25e\"\nsize = \"256m\"\nop = 0.2\nplanes = 2\nprogram_ns = \"200us/300us\"\nnocopy = true\ngc = \"fifo\"\n",
        )
        .unwrap();
        let x = preset("x25e").unwrap();
        assert_eq!(p.size, 256 << 20);
        assert_eq!(p.op, 0.2);
        assert_eq!(p.planes, 2);
        assert_eq!(p.program_types_ns, vec![200_000, 300_000]);
        assert_eq!(p.program_ns, 250_000);
        assert!(p.nocopy);
        assert_eq!(p.read_ns, x.read_ns, "keys not given keep the preset's");
    }

    #[test]
    fn bad_files_are_refused_naming_the_key_and_the_allowed_values() {
        for (text, want) in [
            (
                "read_nss = 5",
                "unknown emulator parameter 'read_nss' (allowed: size",
            ),
            (
                "preset = \"x26e\"",
                "unknown emulator preset 'x26e' in key 'preset' (allowed:",
            ),
            ("preset = 3", "key 'preset': 3 is not a preset name"),
            (
                "planes = [1, 2]",
                "key 'planes': a array (allowed: a number",
            ),
            (
                "planes = -1",
                "emulator parameter 'planes': '-1' is not a whole number",
            ),
            ("gc = \"lru\"", "'gc': 'lru' (allowed: greedy, fifo)"),
            ("read_ns = ", "TOML parse error at line 1"),
        ] {
            let e = from_toml(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
