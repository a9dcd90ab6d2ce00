//! fio's skewed distributions, computed as fio computes them (lib/zipf.c,
//! lib/gauss.c), so that a job's hot spots have fio's shape: zipf (Gray's
//! fast generator, with ζ(n) summed over at most 10 million terms),
//! pareto (`(n-1)·u^(ln h / ln(1-h))`), and fio's "normal" (the mean of 12
//! uniform draws, widened by a uniform deviation). A draw is a rank; fio
//! then scatters ranks over the range with a hash (for offsets, not for
//! files) and rotates them by a random or given center. Also the zoned
//! distributions' lookup table.

use rand::rngs::SmallRng;
use rand::Rng;
use ssdready_core::spec::{Distribution, FileService, Zone};

/// fio's cap on the terms of ζ(n) (`ZIPF_MAX_GEN`).
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// Terms summed one by one; the rest by Euler–Maclaurin (error < 1e-9).
const ZETA_EXACT: u64 = 100_000;

#[derive(Clone, Debug)]
enum Kind {
    Zipf {
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
    },
    Pareto {
        pow: f64,
    },
    Gauss {
        stddev: u64,
    },
}

/// One skewed generator over `[0, n)`.
#[derive(Clone, Debug)]
pub struct Skewed {
    kind: Kind,
    n: u64,
    /// fio's `rand_off`: where rank 0 lands.
    off: i128,
}

/// Σ_{i=1}^{m} i^-θ.
fn zeta(m: u64, theta: f64) -> f64 {
    let exact = m.min(ZETA_EXACT);
    let mut s: f64 = (1..=exact).map(|i| (i as f64).powf(-theta)).sum();
    if m > exact {
        let (a, b) = (exact as f64, m as f64);
        let f = |x: f64| {
            let p = if (theta - 1.0).abs() < 1e-12 {
                x.ln()
            } else {
                x.powf(1.0 - theta) / (1.0 - theta)
            };
            p + x.powf(-theta) / 2.0 - theta / 12.0 * x.powf(-theta - 1.0)
        };
        s += f(b) - f(a);
    }
    s
}

impl Skewed {
    /// The generator of a skewed offset distribution over `n` ranges;
    /// None for the others.
    pub fn offsets(
        d: &Distribution,
        center: Option<f64>,
        n: u64,
        rng: &mut SmallRng,
    ) -> Option<Skewed> {
        let kind = match d {
            Distribution::Zipf(t) => Self::zipf(*t, n),
            Distribution::Pareto(h) => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            Distribution::Normal(dev) => Self::gauss(*dev, n),
            _ => return None,
        };
        Some(Self::with(kind, n, center, rng))
    }

    /// The generator of a skewed file choice over `n` ranges (fio: files
    /// × 1024); None for the uniform services.
    pub fn files(
        s: FileService,
        center: Option<f64>,
        n: u64,
        rng: &mut SmallRng,
    ) -> Option<Skewed> {
        let kind = match s {
            FileService::Zipf(t) => Self::zipf(t, n),
            FileService::Pareto(h) => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            FileService::Normal(dev) => Self::gauss(dev, n),
            _ => return None,
        };
        Some(Self::with(kind, n, center, rng))
    }

    fn zipf(theta: f64, n: u64) -> Kind {
        let nf = n.max(1) as f64;
        let zetan = zeta(n.clamp(1, ZIPF_MAX_GEN), theta);
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        Kind::Zipf {
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    fn gauss(dev: f64, n: u64) -> Kind {
        let stddev = if dev == 0.0 {
            0
        } else {
            ((n as f64 * dev / 100.0).ceil() as u64).min(n / 2)
        };
        Kind::Gauss { stddev }
    }

    fn with(kind: Kind, n: u64, center: Option<f64>, rng: &mut SmallRng) -> Skewed {
        let n = n.max(1);
        let off = match (&kind, center) {
            (Kind::Gauss { .. }, Some(c)) => (n as f64 * (c - 0.5)) as i128,
            (Kind::Gauss { .. }, None) => 0,
            (_, Some(c)) => (n as f64 * c) as i128,
            (_, None) => i128::from(rng.random::<u32>()),
        };
        Skewed { kind, n, off }
    }

    /// A rank in `[0, n)`, before scattering: 0 is the most popular for
    /// zipf and pareto, the middle for gauss.
    pub fn rank(&self, rng: &mut SmallRng) -> u64 {
        let n = self.n;
        let r = match &self.kind {
            Kind::Zipf {
                theta,
                zetan,
                alpha,
                eta,
            } => {
                let u: f64 = rng.random();
                let z = u * zetan;
                let v = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(*alpha)) as u64
                };
                v - 1
            }
            Kind::Pareto { pow } => {
                let u: f64 = rng.random();
                ((n - 1) as f64 * u.powf(*pow)) as u64
            }
            Kind::Gauss { stddev } => {
                let mut sum: u64 = (0..12).map(|_| rng.random_range(0..=n)).sum();
                sum = sum.div_ceil(12);
                if *stddev > 0 {
                    let mut dev = rng.random_range(0..*stddev) as i64 - (*stddev / 2) as i64;
                    while dev + sum as i64 >= n as i64 {
                        dev /= 2;
                    }
                    sum = (sum as i64 + dev).max(0) as u64;
                }
                sum
            }
        };
        r.min(n - 1)
    }

    /// Where a (possibly scattered) rank lands: rotated by fio's offset.
    pub fn place(&self, scattered: u64) -> u64 {
        (i128::from(scattered) + self.off).rem_euclid(i128::from(self.n)) as u64
    }
}

/// One direction's zones as fio's lookup table: for each of the 100
/// access percent points, the zone's (start, end), in percent of the
/// region (zoned) or bytes (zoned_abs).
pub fn zone_table(zones: &[Zone]) -> Option<Vec<(u64, u64)>> {
    if zones.is_empty() {
        return None;
    }
    let mut table = Vec::with_capacity(100);
    let mut start = 0u64;
    for z in zones {
        let end = start + z.span;
        for _ in 0..z.access_pct {
            table.push((start, end));
        }
        start = end;
    }
    // Shares add up to 100 (checked when parsed).
    table.truncate(100);
    let last = *table.last()?;
    table.resize(100, last);
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn counts(s: &Skewed, draws: usize) -> Vec<u32> {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut c = vec![0u32; s.n as usize];
        for _ in 0..draws {
            c[s.rank(&mut rng) as usize] += 1;
        }
        c
    }

    #[test]
    fn zipf_ranks_follow_fios_generator() {
        let mut rng = SmallRng::seed_from_u64(1);
        let s = Skewed::offsets(&Distribution::Zipf(1.2), None, 1000, &mut rng).unwrap();
        let c = counts(&s, 200_000);
        // Rank 1 has probability 1/ζ(1000) ≈ 0.19 for θ = 1.2.
        let p0 = f64::from(c[0]) / 200_000.0;
        let z = zeta(1000, 1.2);
        assert!((p0 - 1.0 / z).abs() < 0.01, "{p0} vs {}", 1.0 / z);
        assert!(c[0] > c[1] && c[1] > c[10] && c[10] > c[500]);
    }

    #[test]
    fn zeta_tail_matches_the_exact_sum() {
        let exact: f64 = (1..=300_000u64).map(|i| (i as f64).powf(-1.1)).sum();
        assert!((zeta(300_000, 1.1) - exact).abs() < 1e-6);
    }

    #[test]
    fn gauss_is_fios_mean_of_twelve() {
        let mut rng = SmallRng::seed_from_u64(1);
        let s = Skewed::offsets(&Distribution::Normal(0.0), None, 1200, &mut rng).unwrap();
        let c = counts(&s, 100_000);
        let mid: u32 = c[500..700].iter().sum();
        let edge: u32 = c[..200].iter().sum();
        // σ of the mean of 12 uniforms over 1200 is 100: ±100 around the
        // middle holds about 68 %.
        assert!(mid > 60_000, "{mid}");
        assert!(edge < 100, "{edge}");
        assert_eq!(s.place(600), 600, "no center: no rotation");
        let s = Skewed::offsets(&Distribution::Normal(0.0), Some(0.25), 1200, &mut rng).unwrap();
        assert_eq!(s.place(600), 300, "center 0.25 moves the middle there");
    }

    #[test]
    fn pareto_concentrates_on_low_ranks() {
        let mut rng = SmallRng::seed_from_u64(1);
        let s = Skewed::offsets(&Distribution::Pareto(0.2), Some(0.0), 1000, &mut rng).unwrap();
        let c = counts(&s, 100_000);
        let low: u32 = c[..200].iter().sum();
        // pareto:0.2 — about 80 % of draws on the first 20 %.
        assert!((75_000..85_000).contains(&low), "{low}");
    }

    #[test]
    fn zone_tables_map_access_points_to_zones() {
        let t = zone_table(&[
            Zone {
                access_pct: 50,
                span: 5,
            },
            Zone {
                access_pct: 30,
                span: 15,
            },
            Zone {
                access_pct: 20,
                span: 80,
            },
        ])
        .unwrap();
        assert_eq!(t.len(), 100);
        assert_eq!(t[0], (0, 5));
        assert_eq!(t[49], (0, 5));
        assert_eq!(t[50], (5, 20));
        assert_eq!(t[99], (20, 100));
        assert!(zone_table(&[]).is_none());
    }
}
