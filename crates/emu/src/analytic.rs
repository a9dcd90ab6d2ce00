//! The model's ground truth, in closed form.
//!
//! **Write amplification** under uniform random writes, what the FTL is
//! tested against (shared/notes/ssd-models.md; Desnoyers, "Analytic
//! modeling of SSD write performance", SYSTOR 2012). With α = physical
//! pages / logical pages:
//! * FIFO cleaning (eq. 4): `A_fifo(α) = α / (α + W0(−α·e^(−α)))`;
//! * greedy cleaning (eq. 12): `A_greedy(α, Np) = A_fifo(k·α) / k`,
//!   `k = 1 + 1/(2·Np)`, Np pages per erase block.
//!
//! **Fresh writes through the SLC cache** ([`crate::die`]): the dies program
//! program units of `planes × flash_page_bytes`, at `slc_program_ns` each
//! while the cache has room and at the page types' mean (`program_ns`)
//! after; the write buffer takes its size at host speed on top. So a host
//! that can send `h` bytes/s has, after `t` seconds of writing from fresh,
//! `min(h·t, N(t) + B)` bytes taken, with B the buffer and N(t) the bytes
//! programmed: `r_s·t` until the cache's C bytes are in, then `C + r_t·(t −
//! C/r_s)`, where `r_s`, `r_t` are the SLC and TLC program rates capped by
//! `h`. The device's limits ([`limit`]) are built on these,
//! and `tests/nand.rs` checks them against virtual-time runs.

/// The principal branch of the Lambert W function, for x in [−1/e, 0).
pub fn lambert_w0(x: f64) -> f64 {
    // Halley iteration from a series start near the branch point.
    let e = std::f64::consts::E;
    let p = (2.0 * (e * x + 1.0)).max(0.0).sqrt();
    let mut w = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p;
    if x > -0.25 {
        w = x; // near zero W(x) ≈ x
    }
    for _ in 0..100 {
        let ew = w.exp();
        let f = w * ew - x;
        let d = ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0);
        let next = w - f / d;
        if (next - w).abs() < 1e-15 {
            return next;
        }
        w = next;
    }
    w
}

/// FIFO (least-recently-written) cleaning.
pub fn wa_fifo(alpha: f64) -> f64 {
    alpha / (alpha + lambert_w0(-alpha * (-alpha).exp()))
}

/// Greedy cleaning with `np` pages per erase block.
pub fn wa_greedy(alpha: f64, np: f64) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * np);
    wa_fifo(k * alpha) / k
}

pub mod limit;

use crate::config::Params;
use crate::die::NandTiming;

/// Bytes of one program unit (what a die programs at once).
pub fn program_unit_bytes(p: &Params) -> u64 {
    u64::from(NandTiming::of(p).unit) * u64::from(p.page_bytes)
}

/// How fast the dies program fresh host data, bytes/s: into the SLC cache
/// (`slc`) or to TLC at the page types' mean time. None when a program
/// takes no time (no bound).
pub fn program_bytes_per_s(p: &Params, slc: bool) -> Option<f64> {
    let ns = if slc { p.slc_program_ns } else { p.program_ns };
    (ns > 0 && !p.dram).then(|| p.dies() as f64 * program_unit_bytes(p) as f64 / ns as f64 * 1e9)
}

/// The SLC cache the dies hold, bytes: each die's share, in whole program
/// units (a die opens an SLC program unit only when one fits).
pub fn slc_cache_bytes(p: &Params) -> u64 {
    if p.dram {
        return 0;
    }
    let t = NandTiming::of(p);
    let per_die = t.slc_units / u64::from(t.unit) * u64::from(t.unit);
    per_die * u64::from(p.dies()) * u64::from(p.page_bytes)
}

/// Bytes a fresh device has taken after `t` seconds of writing by a host
/// that can send `host` bytes/s (None: no host limit): the module docs'
/// `min(h·t, N(t) + B)`.
pub fn fresh_write_bytes(p: &Params, host: Option<f64>, t: f64) -> f64 {
    let cap = |r: Option<f64>| match (r, host) {
        (Some(r), Some(h)) => r.min(h),
        (Some(r), None) => r,
        (None, Some(h)) => h,
        (None, None) => f64::INFINITY,
    };
    let cache = slc_cache_bytes(p) as f64;
    let (rs, rt) = (
        cap(program_bytes_per_s(p, true)),
        cap(program_bytes_per_s(p, false)),
    );
    let in_cache = if cache > 0.0 { cache / rs } else { 0.0 };
    let nand = if t <= in_cache {
        rs * t
    } else {
        cache + rt * (t - in_cache)
    };
    let taken = nand + p.write_buffer as f64;
    host.map_or(taken, |h| taken.min(h * t))
}

/// Seconds a fresh device needs to take `bytes` from a host that can send
/// `host` bytes/s: the inverse of [`fresh_write_bytes`].
pub fn fresh_write_seconds(p: &Params, host: Option<f64>, bytes: f64) -> f64 {
    let cap = |r: Option<f64>| match (r, host) {
        (Some(r), Some(h)) => r.min(h),
        (Some(r), None) => r,
        (None, Some(h)) => h,
        (None, None) => f64::INFINITY,
    };
    let by_host = host.map_or(0.0, |h| bytes / h);
    let nand = (bytes - p.write_buffer as f64).max(0.0);
    let cache = slc_cache_bytes(p) as f64;
    let (rs, rt) = (
        cap(program_bytes_per_s(p, true)),
        cap(program_bytes_per_s(p, false)),
    );
    let by_nand = if nand <= cache {
        nand / rs
    } else {
        cache / rs + (nand - cache) / rt
    };
    by_host.max(by_nand)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of shared/notes/ssd-models.md.
    #[test]
    fn formulas_reproduce_the_notes_table() {
        let rows = [
            (0.07, 7.82, 7.00, 7.60, 7.76),
            (0.10, 5.68, 5.24, 5.56, 5.65),
            (0.20, 3.19, 3.05, 3.15, 3.18),
            (0.28, 2.48, 2.40, 2.46, 2.48),
            (0.30, 2.36, 2.29, 2.35, 2.36),
            (1.00, 1.25, 1.24, 1.25, 1.25),
        ];
        for (rho, fifo, g64, g256, g1024) in rows {
            let a = 1.0 + rho;
            assert!(
                (wa_fifo(a) - fifo).abs() < 0.01,
                "fifo {rho}: {}",
                wa_fifo(a)
            );
            assert!(
                (wa_greedy(a, 64.0) - g64).abs() < 0.015,
                "g64 {rho}: {}",
                wa_greedy(a, 64.0)
            );
            assert!((wa_greedy(a, 256.0) - g256).abs() < 0.015);
            assert!((wa_greedy(a, 1024.0) - g1024).abs() < 0.015);
        }
    }

    #[test]
    fn lambert_w_inverts() {
        for x in [-0.36, -0.3, -0.1, -0.01] {
            let w = lambert_w0(x);
            assert!((w * w.exp() - x).abs() < 1e-12, "{x}");
        }
    }

    #[test]
    fn fresh_writes_take_the_buffer_then_the_cache_then_tlc() {
        let p = crate::config::preset("nvme-tlc").unwrap();
        let (rs, rt) = (
            program_bytes_per_s(&p, true).unwrap(),
            program_bytes_per_s(&p, false).unwrap(),
        );
        // 16 dies × 64 KiB per 190 µs and per 524 µs.
        assert!((rs - 5.519e9).abs() < 0.01e9, "{rs}");
        assert!((rt - 2.001e9).abs() < 0.01e9, "{rt}");
        let c = slc_cache_bytes(&p) as f64;
        let b = p.write_buffer as f64;
        let t_c = c / rs;
        assert!((fresh_write_bytes(&p, None, t_c) - (c + b)).abs() < 1.0);
        let later = fresh_write_bytes(&p, None, t_c + 1.0);
        assert!((later - (c + b + rt)).abs() < 1.0);
        for bytes in [1e6, b + 1e6, c + b + 1e9] {
            let t = fresh_write_seconds(&p, Some(7e9), bytes);
            assert!(
                (fresh_write_bytes(&p, Some(7e9), t) - bytes).abs() < 1e3,
                "{bytes}"
            );
        }
    }
}
