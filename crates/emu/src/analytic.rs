//! Analytic write amplification under uniform random writes, the ground truth
//! the FTL is tested against (shared/notes/ssd-models.md; Desnoyers,
//! "Analytic modeling of SSD write performance", SYSTOR 2012).
//!
//! With α = physical pages / logical pages:
//! * FIFO cleaning (eq. 4): `A_fifo(α) = α / (α + W0(−α·e^(−α)))`;
//! * greedy cleaning (eq. 12): `A_greedy(α, Np) = A_fifo(k·α) / k`,
//!   `k = 1 + 1/(2·Np)`, Np pages per erase block.

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
}
