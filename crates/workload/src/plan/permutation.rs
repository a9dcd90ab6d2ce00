//! A keyed pseudo-random permutation of `[0, n)`: a keyed bijection on
//! `[0, 2^k)` restricted to `[0, n)` by cycle walking. It gives random
//! offsets that visit every block once per pass in O(1) memory, and
//! scatters the ranks of skewed distributions (fio hashes them).

/// A keyed pseudo-random permutation of `[0, n)`.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    mask: u64,
    half: u32,
    keys: [u64; 3],
    mults: [u64; 3],
}

pub(crate) fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Permutation {
    /// A permutation of `[0, n)` chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let n = n.max(1);
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut s = seed;
        let keys = [splitmix(&mut s), splitmix(&mut s), splitmix(&mut s)];
        let mults = [
            splitmix(&mut s) | 1,
            splitmix(&mut s) | 1,
            splitmix(&mut s) | 1,
        ];
        Permutation {
            n,
            mask,
            half: (bits / 2).max(1),
            keys,
            mults,
        }
    }

    /// Three rounds of a keyed xor, an odd multiplication and an
    /// xorshift, modulo `2^bits`: each is a bijection of `[0, 2^bits)`.
    /// (The key's bits above `bits` need no mask: the product's low bits
    /// depend only on the factors' low bits.)
    #[inline(always)]
    fn round(&self, mut x: u64) -> u64 {
        for r in 0..3 {
            x = (x ^ self.keys[r]).wrapping_mul(self.mults[r]) & self.mask;
            x ^= x >> self.half;
        }
        x
    }

    /// The image of `i` (which must be < n).
    #[inline(always)]
    pub fn map(&self, i: u64) -> u64 {
        let y = self.round(i);
        if y < self.n {
            y
        } else {
            self.walk(y)
        }
    }

    /// Cycle walking: the rounds again until the image is in `[0, n)`
    /// (out of line, so that the inlined first round keeps no keys in
    /// registers for it).
    #[inline(never)]
    fn walk(&self, mut y: u64) -> u64 {
        while y >= self.n {
            y = self.round(y);
        }
        y
    }

    /// The size of the permuted set.
    pub fn len(&self) -> u64 {
        self.n
    }
    /// Always false: a permutation has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [
            1u64, 2, 3, 4, 5, 7, 8, 100, 1000, 1024, 4097, 65_536, 100_003,
        ] {
            for seed in [0, 42, u64::MAX] {
                let p = Permutation::new(n, seed);
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    let y = p.map(i) as usize;
                    assert!(!seen[y], "n={n} seed={seed} repeated {y}");
                    seen[y] = true;
                }
            }
        }
    }

    #[test]
    fn the_seed_decides_the_order() {
        let order = |seed| {
            let p = Permutation::new(10_000, seed);
            (0..10_000).map(|i| p.map(i)).collect::<Vec<_>>()
        };
        assert_eq!(order(7), order(7), "the same seed, the same order");
        assert_ne!(order(7), order(8), "another seed, another order");
    }

    /// The first 50,000 offsets of a pass look uniform and independent:
    /// a chi-square over 64 equal ranges (63 degrees of freedom; 120 is
    /// far in the tail) and the correlation of each offset with the next.
    #[test]
    fn offsets_early_in_a_pass_look_uniform_and_uncorrelated() {
        for n in [1u64 << 20, 1_000_003] {
            for seed in [0, 1, 42, 12_345] {
                let p = Permutation::new(n, seed);
                let xs: Vec<f64> = (0..50_000).map(|i| p.map(i) as f64).collect();
                let mut counts = [0u32; 64];
                for &x in &xs {
                    counts[(x * 64.0 / n as f64) as usize] += 1;
                }
                let e = xs.len() as f64 / 64.0;
                let chi: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
                assert!(chi < 120.0, "n={n} seed={seed}: chi-square {chi}");
                let (a, b) = (&xs[..xs.len() - 1], &xs[1..]);
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                let (ma, mb) = (mean(a), mean(b));
                let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
                let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
                let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
                let r = cov / (va * vb).sqrt();
                // Independent draws: r has a standard deviation of 0.0045.
                assert!(r.abs() < 0.03, "n={n} seed={seed}: lag-1 correlation {r}");
            }
        }
    }
}
