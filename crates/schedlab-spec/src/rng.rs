//! The run's one seeded PRNG: xoshiro256** seeded through SplitMix64 (Blackman & Vigna,
//! "Scrambled linear pseudorandom number generators", 2018). Written here rather than taken
//! from a crate so that a seed gives the same stream whatever crate versions are resolved.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A counter-based draw: the value of (`seed`, `a`, `b`, `c`), the same wherever and
/// whenever it is asked for — SplitMix64's finaliser over the keys folded in one at a time.
pub fn keyed_u64(seed: u64, a: u64, b: u64, c: u64) -> u64 {
    let mut x = seed;
    let mut h = splitmix64(&mut x);
    for k in [a, b, c] {
        let mut y = h ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03);
        h = splitmix64(&mut y);
    }
    h
}

/// `x`'s top 53 bits as a uniform value in [0, 1).
#[inline]
pub fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        Rng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_seeds_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(8);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        let f = Rng::new(1).next_f64();
        assert!((0.0..1.0).contains(&f));
    }
}
