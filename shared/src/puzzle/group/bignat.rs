//! Non-negative integers of any size: just enough arithmetic for group orders
//! and word counts that overflow `u128` (8×8 Loopover has 64! ≈ 1.3·10⁸⁹
//! states). Hand-rolled so the workspace needs no big-number dependency.

use std::cmp::Ordering;
use std::fmt;

/// An arbitrary-size natural number, little-endian base-2⁶⁴ limbs with no
/// trailing zero limb (so zero is the empty vector and equality is structural).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BigNat {
    limbs: Vec<u64>,
}

impl BigNat {
    /// Zero.
    pub fn zero() -> BigNat {
        BigNat::default()
    }

    /// One.
    pub fn one() -> BigNat {
        BigNat::from(1u64)
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }

    /// The value as `u128`, when it fits.
    pub fn to_u128(&self) -> Option<u128> {
        match self.limbs.as_slice() {
            [] => Some(0),
            [lo] => Some(*lo as u128),
            [lo, hi] => Some((*hi as u128) << 64 | *lo as u128),
            _ => None,
        }
    }

    /// `n!`.
    pub fn factorial(n: u64) -> BigNat {
        (2..=n).fold(BigNat::one(), |acc, k| acc.times(k))
    }

    /// `self · m`.
    pub fn times(&self, m: u64) -> BigNat {
        let mut out = BigNat::zero();
        out.add_product(self, m);
        out
    }

    /// `self += other · m`, the one operation the transfer-matrix counts need.
    pub fn add_product(&mut self, other: &BigNat, m: u64) {
        if m == 0 || other.is_zero() {
            return;
        }
        if self.limbs.len() < other.limbs.len() + 1 {
            self.limbs.resize(other.limbs.len() + 1, 0);
        }
        let mut carry: u128 = 0;
        for i in 0..self.limbs.len() {
            let product = other.limbs.get(i).map_or(0, |&l| l as u128 * m as u128);
            let sum = self.limbs[i] as u128 + product + carry;
            self.limbs[i] = sum as u64;
            carry = sum >> 64;
            if carry == 0 && i >= other.limbs.len() {
                break;
            }
        }
        if carry > 0 {
            self.limbs.push(carry as u64);
        }
        self.trim();
    }

    /// `self · other`.
    pub fn product(&self, other: &BigNat) -> BigNat {
        let mut out = BigNat::zero();
        for (i, &limb) in other.limbs.iter().enumerate() {
            let mut shifted = self.times(limb);
            if !shifted.is_zero() {
                shifted.limbs.splice(0..0, std::iter::repeat_n(0, i));
            }
            out += &shifted;
        }
        out
    }

    /// `self / d` when `d` divides `self` exactly (`d > 0`).
    pub fn divided_exactly(&self, d: u64) -> Option<BigNat> {
        let mut q = self.clone();
        (q.div_rem_small(d) == 0).then_some(q)
    }

    /// Divides in place by a small divisor and returns the remainder.
    fn div_rem_small(&mut self, d: u64) -> u64 {
        let mut rem: u128 = 0;
        for limb in self.limbs.iter_mut().rev() {
            let cur = rem << 64 | *limb as u128;
            *limb = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        self.trim();
        rem as u64
    }

    fn trim(&mut self) {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
    }
}

impl From<u64> for BigNat {
    fn from(v: u64) -> BigNat {
        BigNat::from(v as u128)
    }
}

impl From<u128> for BigNat {
    fn from(v: u128) -> BigNat {
        let mut n = BigNat {
            limbs: vec![v as u64, (v >> 64) as u64],
        };
        n.trim();
        n
    }
}

impl std::ops::AddAssign<&BigNat> for BigNat {
    fn add_assign(&mut self, other: &BigNat) {
        self.add_product(other, 1);
    }
}

impl Ord for BigNat {
    fn cmp(&self, other: &BigNat) -> Ordering {
        self.limbs
            .len()
            .cmp(&other.limbs.len())
            .then_with(|| self.limbs.iter().rev().cmp(other.limbs.iter().rev()))
    }
}

impl PartialOrd for BigNat {
    fn partial_cmp(&self, other: &BigNat) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Decimal digits.
impl fmt::Display for BigNat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const CHUNK: u64 = 10_000_000_000_000_000_000; // 10^19, the largest power of ten in a u64
        if self.is_zero() {
            return f.pad("0");
        }
        let mut rest = self.clone();
        let mut chunks = Vec::new();
        while !rest.is_zero() {
            chunks.push(rest.div_rem_small(CHUNK));
        }
        let mut text = chunks.pop().expect("non-zero has a chunk").to_string();
        for c in chunks.iter().rev() {
            text.push_str(&format!("{:019}", c));
        }
        f.pad(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factorials_print_exactly() {
        assert_eq!(BigNat::factorial(0).to_string(), "1");
        assert_eq!(BigNat::factorial(20).to_string(), "2432902008176640000");
        assert_eq!(BigNat::factorial(30).to_string(), "265252859812191058636308480000000");
        // 64!, the number of 8×8 Loopover states.
        assert_eq!(
            BigNat::factorial(64).to_string(),
            "126886932185884164103433389335161480802865516174545192198801894375214704230400000000000000"
        );
        assert_eq!(BigNat::factorial(34).to_u128(), Some((1..=34u128).product()));
        assert_eq!(BigNat::factorial(35).to_u128(), None);
    }

    #[test]
    fn addition_and_order() {
        let mut a = BigNat::from(u128::MAX);
        a += &BigNat::one();
        assert_eq!(a.to_string(), "340282366920938463463374607431768211456");
        assert!(a > BigNat::from(u128::MAX));
        assert!(BigNat::zero() < BigNat::one());
        let mut b = BigNat::zero();
        b.add_product(&a, 3);
        assert_eq!(b.to_string(), "1020847100762815390390123822295304634368");
        assert_eq!(format!("{:>5}", BigNat::from(42u64)), "   42");
    }

    #[test]
    fn products_and_exact_division() {
        // 64! = 30! · (31 · … · 64), across several limbs.
        let tail = (31..=64).fold(BigNat::one(), |acc, k| acc.times(k));
        assert_eq!(BigNat::factorial(30).product(&tail), BigNat::factorial(64));
        assert_eq!(BigNat::factorial(64).divided_exactly(64), Some(BigNat::factorial(63)));
        assert_eq!(BigNat::factorial(10).divided_exactly(11), None);
        assert!(BigNat::zero().product(&tail).is_zero());
    }
}
