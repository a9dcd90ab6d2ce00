//! Function names for addresses in ssdready's own binary, so that the
//! profile's user-mode samples of this process name the function they hit
//! (the kernel's side comes from /proc/kallsyms).
//!
//! The symbol table is read from `/proc/self/exe` (the `object` crate) and
//! shifted by the load bias from `/proc/self/maps` (the binary is position
//! independent). Names are demangled without their hash. Only leaf
//! functions are named: user call chains are not collected (the release
//! build keeps no frame pointers to walk them by).

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

/// Sorted (start, end, name) of the text symbols, at run-time addresses.
pub struct ExeSymbols {
    ranges: Vec<(u64, u64, String)>,
    /// Other executable mappings (shared libraries, the vDSO), as
    /// (start, end, "[name]"), for addresses outside the binary.
    others: Vec<(u64, u64, String)>,
}

/// One line of /proc/self/maps that names a file or a special region.
struct Mapping<'a> {
    start: u64,
    end: u64,
    exec: bool,
    offset: u64,
    path: &'a str,
}

impl<'a> Mapping<'a> {
    /// `start-end perms offset dev inode path`
    fn parse(line: &'a str) -> Option<Mapping<'a>> {
        let mut it = line.split_whitespace();
        let (a, b) = it.next()?.split_once('-')?;
        let perms = it.next()?;
        let offset = u64::from_str_radix(it.next()?, 16).ok()?;
        Some(Mapping {
            start: u64::from_str_radix(a, 16).ok()?,
            end: u64::from_str_radix(b, 16).ok()?,
            exec: perms.contains('x'),
            offset,
            path: it.nth(2)?,
        })
    }
}

impl ExeSymbols {
    /// This process's binary; None when it cannot be read or has no symbols.
    pub fn load() -> Option<ExeSymbols> {
        let exe = std::fs::read_link("/proc/self/exe").ok()?;
        let data = std::fs::read(&exe).ok()?;
        let file = object::File::parse(&*data).ok()?;
        let lowest = file.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff;
        let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
        let exe_s = exe.to_string_lossy();
        let mappings: Vec<Mapping> = maps.lines().filter_map(Mapping::parse).collect();
        let base = mappings
            .iter()
            .find(|m| m.offset == 0 && m.path == exe_s)?
            .start;
        let bias = base.wrapping_sub(lowest);
        let mut ranges: Vec<(u64, u64, String)> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
            .filter_map(|s| {
                let name = s.name().ok()?;
                let start = s.address().wrapping_add(bias);
                Some((
                    start,
                    start + s.size(),
                    format!("{:#}", rustc_demangle::demangle(name)),
                ))
            })
            .collect();
        if ranges.is_empty() {
            return None;
        }
        ranges.sort_unstable_by_key(|r| r.0);
        let others = mappings
            .iter()
            .filter(|m| m.exec && m.path != exe_s)
            .map(|m| {
                let name = m.path.rsplit('/').next().unwrap_or(m.path);
                let name = name.trim_start_matches('[').trim_end_matches(']');
                (m.start, m.end, format!("[{name}]"))
            })
            .collect();
        Some(ExeSymbols { ranges, others })
    }

    /// The function containing `addr`, or for an address in a shared
    /// library or the vDSO, its name in brackets (`[libc.so.6]`).
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        if let Some(r) = i.checked_sub(1).and_then(|i| self.ranges.get(i)) {
            if addr < r.1 {
                return Some(r.2.as_str());
            }
        }
        self.others
            .iter()
            .find(|o| o.0 <= addr && addr < o.1)
            .map(|o| o.2.as_str())
    }

    /// Number of functions known.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether no function is known.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_function_to_find() -> u64 {
        std::hint::black_box(42)
    }

    /// The test binary names its own functions at their run-time addresses.
    #[test]
    fn names_a_function_of_this_binary() {
        let Some(s) = ExeSymbols::load() else {
            eprintln!("skipped: this binary has no symbol table");
            return;
        };
        assert!(s.len() > 100);
        let addr = a_function_to_find as *const () as u64;
        let name = s.lookup(addr).expect("found");
        assert!(name.ends_with("a_function_to_find"), "{name}");
        assert_eq!(a_function_to_find(), 42);
        // A libc function is named by its library.
        let strlen = libc_strlen_addr();
        if let Some(n) = s.lookup(strlen) {
            assert!(n.starts_with("[libc"), "{n}");
        }
    }

    fn libc_strlen_addr() -> u64 {
        nix::libc::strlen as *const () as u64
    }
}
