//! A reader for the kernel's BTF (`/sys/kernel/btf/vmlinux`): just enough to
//! find a named type's id and a struct member's byte offset.
//!
//! BTF is the kernel's own description of its types, exported since 5.x. It
//! is what lets `--decompose` attach `tp_btf` programs (the loader must name
//! the tracepoint's `btf_trace_<name>` typedef by type id) and read fields of
//! `struct request` (the sector, the device) at offsets that are right for
//! the running kernel, with no headers and no compiler.
//!
//! The format (Documentation/bpf/btf.rst): a header, then a type section of
//! variable-length records (type ids count from 1 in order), then a string
//! section that names point into.

use std::collections::HashMap;

/// Why BTF could not be read.
#[derive(Debug)]
pub struct BtfError(pub String);

impl std::fmt::Display for BtfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

const MAGIC: u16 = 0xeb9f;

const KIND_INT: u32 = 1;
const KIND_PTR: u32 = 2;
const KIND_ARRAY: u32 = 3;
const KIND_STRUCT: u32 = 4;
const KIND_UNION: u32 = 5;
const KIND_ENUM: u32 = 6;
const KIND_TYPEDEF: u32 = 8;
const KIND_VOLATILE: u32 = 9;
const KIND_CONST: u32 = 10;
const KIND_RESTRICT: u32 = 11;
const KIND_FUNC_PROTO: u32 = 13;
const KIND_VAR: u32 = 14;
const KIND_DATASEC: u32 = 15;
const KIND_DECL_TAG: u32 = 17;
const KIND_TYPE_TAG: u32 = 18;
const KIND_ENUM64: u32 = 19;

/// One type record.
#[derive(Clone, Debug)]
struct Type {
    name: u32,
    kind: u32,
    kind_flag: bool,
    /// Size (int, struct, union, enum) or referenced type id (ptr, typedef, …).
    size_or_type: u32,
    /// Byte range of the kind-specific data that follows the record.
    extra: (usize, usize),
}

/// A struct member: name, type id, and offset in bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub type_id: u32,
    pub bit_offset: u32,
}

/// Parsed BTF.
pub struct Btf {
    data: Vec<u8>,
    str_base: usize,
    str_len: usize,
    /// Index 0 is the implicit `void`.
    types: Vec<Type>,
    by_name: HashMap<String, Vec<u32>>,
}

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

impl Btf {
    /// The running kernel's BTF.
    pub fn vmlinux() -> Result<Btf, BtfError> {
        let path = "/sys/kernel/btf/vmlinux";
        let data = std::fs::read(path).map_err(|e| {
            BtfError(format!(
                "{path}: {e} (the kernel was built without CONFIG_DEBUG_INFO_BTF)"
            ))
        })?;
        Btf::parse(data).map_err(|e| BtfError(format!("{path}: {e}")))
    }

    /// Parse a raw BTF blob (little-endian, as on x86-64 and arm64).
    pub fn parse(data: Vec<u8>) -> Result<Btf, BtfError> {
        let bad = |what: &str| BtfError(format!("malformed BTF: {what}"));
        if u16_at(&data, 0) != Some(MAGIC) {
            return Err(bad("no magic 0xeb9f (big-endian BTF is not supported)"));
        }
        let hdr_len = u32_at(&data, 4).ok_or_else(|| bad("short header"))? as usize;
        let field = |i: usize| u32_at(&data, 8 + 4 * i).map(|v| v as usize);
        let (type_off, type_len, str_off, str_len) = (
            field(0).ok_or_else(|| bad("short header"))?,
            field(1).ok_or_else(|| bad("short header"))?,
            field(2).ok_or_else(|| bad("short header"))?,
            field(3).ok_or_else(|| bad("short header"))?,
        );
        let types_at = hdr_len + type_off;
        let str_base = hdr_len + str_off;
        if types_at + type_len > data.len() || str_base + str_len > data.len() {
            return Err(bad("sections run past the end"));
        }
        let mut types = vec![Type {
            name: 0,
            kind: 0,
            kind_flag: false,
            size_or_type: 0,
            extra: (0, 0),
        }];
        let mut at = types_at;
        let end = types_at + type_len;
        while at < end {
            let name = u32_at(&data, at).ok_or_else(|| bad("truncated type"))?;
            let info = u32_at(&data, at + 4).ok_or_else(|| bad("truncated type"))?;
            let size_or_type = u32_at(&data, at + 8).ok_or_else(|| bad("truncated type"))?;
            let kind = (info >> 24) & 0x1f;
            let vlen = (info & 0xffff) as usize;
            let extra_len = match kind {
                KIND_INT | KIND_VAR | KIND_DECL_TAG => 4,
                KIND_ARRAY => 12,
                KIND_STRUCT | KIND_UNION | KIND_DATASEC | KIND_ENUM64 => 12 * vlen,
                KIND_ENUM | KIND_FUNC_PROTO => 8 * vlen,
                0..=19 => 0,
                k => return Err(bad(&format!("unknown kind {k}"))),
            };
            let extra = (at + 12, at + 12 + extra_len);
            if extra.1 > end {
                return Err(bad("truncated type data"));
            }
            types.push(Type {
                name,
                kind,
                kind_flag: info >> 31 == 1,
                size_or_type,
                extra,
            });
            at = extra.1;
        }
        let mut btf = Btf {
            data,
            str_base,
            str_len,
            types,
            by_name: HashMap::new(),
        };
        for id in 1..btf.types.len() {
            let n = btf.types[id].name;
            if n != 0 {
                let s = btf.str(n).to_string();
                btf.by_name.entry(s).or_default().push(id as u32);
            }
        }
        Ok(btf)
    }

    fn str(&self, off: u32) -> &str {
        let off = off as usize;
        if off >= self.str_len {
            return "";
        }
        let s = &self.data[self.str_base + off..self.str_base + self.str_len];
        let n = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        std::str::from_utf8(&s[..n]).unwrap_or("")
    }

    /// Number of types (the implicit `void` included).
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether there are no types besides `void`.
    pub fn is_empty(&self) -> bool {
        self.types.len() <= 1
    }

    /// The id of the typedef named `name` (e.g. `btf_trace_block_rq_issue`).
    pub fn typedef_id(&self, name: &str) -> Option<u32> {
        self.find(name, KIND_TYPEDEF)
    }

    fn find(&self, name: &str, kind: u32) -> Option<u32> {
        self.by_name
            .get(name)?
            .iter()
            .copied()
            .find(|&id| self.types[id as usize].kind == kind)
    }

    /// The members of the struct named `name`.
    pub fn struct_members(&self, name: &str) -> Option<Vec<Member>> {
        let id = self.find(name, KIND_STRUCT)?;
        Some(self.members(id))
    }

    fn members(&self, id: u32) -> Vec<Member> {
        let t = &self.types[id as usize];
        if t.kind != KIND_STRUCT && t.kind != KIND_UNION {
            return Vec::new();
        }
        (t.extra.0..t.extra.1)
            .step_by(12)
            .map(|at| {
                let off = u32_at(&self.data, at + 8).unwrap_or(0);
                Member {
                    name: self.str(u32_at(&self.data, at).unwrap_or(0)).to_string(),
                    type_id: u32_at(&self.data, at + 4).unwrap_or(0),
                    // With kind_flag set the top 8 bits are a bitfield's size.
                    bit_offset: if t.kind_flag { off & 0xff_ffff } else { off },
                }
            })
            .collect()
    }

    /// Byte offset and size of member `field` of `struct name`, looking
    /// through anonymous structs and unions. None for bitfields.
    pub fn field(&self, name: &str, field: &str) -> Option<(u32, u32)> {
        let id = self.find(name, KIND_STRUCT)?;
        self.field_in(id, field, 0)
    }

    fn field_in(&self, id: u32, field: &str, base_bits: u32) -> Option<(u32, u32)> {
        for m in self.members(id) {
            let bits = base_bits + m.bit_offset;
            if m.name == field {
                if !bits.is_multiple_of(8) {
                    return None;
                }
                return Some((bits / 8, self.size_of(m.type_id)?));
            }
            if m.name.is_empty() {
                let inner = self.resolve(m.type_id);
                if let Some(found) = self.field_in(inner, field, bits) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// Follow typedefs and qualifiers.
    fn resolve(&self, mut id: u32) -> u32 {
        for _ in 0..32 {
            let t = &self.types[id as usize];
            match t.kind {
                KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT | KIND_TYPE_TAG => {
                    id = t.size_or_type
                }
                _ => return id,
            }
        }
        id
    }

    /// Size in bytes of a type.
    pub fn size_of(&self, id: u32) -> Option<u32> {
        let id = self.resolve(id);
        let t = self.types.get(id as usize)?;
        match t.kind {
            KIND_INT | KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_ENUM64 => Some(t.size_or_type),
            KIND_PTR => Some(8),
            KIND_ARRAY => {
                let elem = u32_at(&self.data, t.extra.0)?;
                let n = u32_at(&self.data, t.extra.0 + 8)?;
                Some(self.size_of(elem)? * n)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made blob: int (4 bytes), struct s { int a; union { int b; }; int c; },
    /// typedef t -> s.
    fn blob() -> Vec<u8> {
        let strings = b"\0int\0s\0a\0b\0c\0t\0".to_vec();
        let off = |name: &str| -> u32 {
            let pat = format!("\0{name}\0");
            strings
                .windows(pat.len())
                .position(|w| w == pat.as_bytes())
                .unwrap() as u32
                + 1
        };
        let mut t: Vec<u32> = Vec::new();
        // 1: int, size 4, 32 bits
        t.extend([off("int"), KIND_INT << 24, 4, 32]);
        // 2: anonymous union { int b; } size 4
        t.extend([0, KIND_UNION << 24 | 1, 4, off("b"), 1, 0]);
        // 3: struct s { a @0, <anon> @32, c @64 } size 12
        t.extend([off("s"), KIND_STRUCT << 24 | 3, 12]);
        t.extend([off("a"), 1, 0, 0, 2, 32, off("c"), 1, 64]);
        // 4: typedef t -> 3
        t.extend([off("t"), KIND_TYPEDEF << 24, 3]);
        let types: Vec<u8> = t.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut d = Vec::new();
        d.extend(MAGIC.to_le_bytes());
        d.extend([1u8, 0]);
        d.extend(24u32.to_le_bytes());
        d.extend(0u32.to_le_bytes());
        d.extend((types.len() as u32).to_le_bytes());
        d.extend((types.len() as u32).to_le_bytes());
        d.extend((strings.len() as u32).to_le_bytes());
        d.extend(types);
        d.extend(strings);
        d
    }

    #[test]
    fn finds_members_through_anonymous_unions() {
        let b = Btf::parse(blob()).unwrap();
        assert_eq!(b.len(), 5);
        assert_eq!(b.field("s", "a"), Some((0, 4)));
        assert_eq!(b.field("s", "b"), Some((4, 4)));
        assert_eq!(b.field("s", "c"), Some((8, 4)));
        assert_eq!(b.field("s", "zz"), None);
        assert_eq!(b.typedef_id("t"), Some(4));
        assert_eq!(b.typedef_id("s"), None);
    }

    #[test]
    fn refuses_garbage() {
        assert!(Btf::parse(vec![0; 40]).is_err());
        let mut d = blob();
        d.truncate(30);
        assert!(Btf::parse(d).is_err());
    }

    #[test]
    fn reads_the_running_kernels_request_layout() {
        let Ok(b) = Btf::vmlinux() else {
            eprintln!("skipped: no /sys/kernel/btf/vmlinux");
            return;
        };
        let (_, size) = b.field("request", "__sector").expect("request.__sector");
        assert_eq!(size, 8);
        assert_eq!(b.field("block_device", "bd_dev").map(|f| f.1), Some(4));
        assert!(b.typedef_id("btf_trace_block_rq_issue").is_some());
    }
}
