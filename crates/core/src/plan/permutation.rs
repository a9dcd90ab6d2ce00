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

    #[inline(always)]
    fn round(&self, mut x: u64) -> u64 {
        for r in 0..3 {
            x = (x ^ self.keys[r]) & self.mask;
            x = x.wrapping_mul(self.mults[r]) & self.mask;
            x ^= x >> self.half;
        }
        x
    }

    /// The image of `i` (which must be < n).
    #[inline(always)]
    pub fn map(&self, i: u64) -> u64 {
        let mut y = self.round(i);
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
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let y = p.map(i) as usize;
                assert!(!seen[y], "n={n} repeated {y}");
                seen[y] = true;
            }
        }
    }
}
