//! Exact integers as limbs mod `t`: a value `v = Σ_k l_k·2^{w·k}` is kept as the ciphertexts
//! of its limbs `l_k`, each known to lie in an integer range `[lo_k, hi_k]` of fewer than `t`
//! values, so that the client lifts `l_k mod t` back to the integer and recombines exactly.
//!
//! Columns are 32-bit integers in `⌈32/w⌉` limbs of `w` bits (a signed column's limbs are
//! those of `|v|` carrying `v`'s sign, each in `[−(2^w − 1), 2^w − 1]`); `+`, `−` act limb by
//! limb, `·` is the convolution `(a·b)_k = Σ_{i+j=k} a_i·b_j`; a sum over `R` rows multiplies
//! every range by `R`. [`LimbRanges`] follows these rules on the ranges alone, so the planner
//! refuses an expression before any ciphertext is touched when a limb could wrap mod `t`.

use crate::error::{Error, Result};

/// Bits of a column value.
pub const VALUE_BITS: u32 = 32;

/// The integer range of every limb of a value in limb form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimbRanges {
    /// Limb width `w` in bits.
    pub bits: u32,
    /// `[lo, hi]` of limb `k` (weight `2^{w·k}`).
    pub ranges: Vec<(i128, i128)>,
}

/// The limb width for a table of `rows` rows at plaintext modulus `t`: the largest `w ≤ 16`
/// with `rows·(2^w − 1) < t` (a column sum stays below `t` limb by limb) and
/// `⌈32/w⌉·(2^w − 1)² < t` (so does a product of two columns; at `t = 65537`, `w ≤ 6`).
pub fn limb_bits_for(rows: usize, t: u64) -> Result<u32> {
    limb_bits(rows, t, false)
}

/// [`limb_bits_for`], for a table with a signed column when `signed`: its limbs span
/// `2·(2^w − 1) + 1` values, so `2·rows·(2^w − 1) < t` and `2·⌈32/w⌉·(2^w − 1)² < t`
/// (`w = 5` for 1,024 rows at `t = 65537`).
pub fn limb_bits(rows: usize, t: u64, signed: bool) -> Result<u32> {
    let rows = rows.max(1) as u128;
    let f = if signed { 2 } else { 1 };
    (1..=16u32)
        .rev()
        .find(|&w| {
            let top = (1u128 << w) - 1;
            f * rows * top < t as u128 && f * VALUE_BITS.div_ceil(w) as u128 * top * top < t as u128
        })
        .ok_or_else(|| {
            Error::Table(format!(
                "{rows} rows: even 1-bit limbs would overflow t = {t} in a column sum"
            ))
        })
}

/// `v` split into `⌈32/w⌉` limbs of `w` bits (least significant first).
pub fn split(v: u64, bits: u32) -> Vec<u64> {
    let n = VALUE_BITS.div_ceil(bits);
    (0..n)
        .map(|k| (v >> (bits * k)) & ((1 << bits) - 1))
        .collect()
}

/// `v` (`|v| ≤ 2^32 − 1`) as the limbs of `|v|` with `v`'s sign: `Σ l_k·2^{w·k} = v`.
pub fn split_signed(v: i64, bits: u32) -> Vec<i64> {
    let sign = if v < 0 { -1 } else { 1 };
    split(v.unsigned_abs(), bits)
        .into_iter()
        .map(|l| sign * l as i64)
        .collect()
}

impl LimbRanges {
    /// A column: `⌈32/w⌉` limbs in `[0, 2^w − 1]`.
    pub fn column(bits: u32) -> Self {
        LimbRanges {
            bits,
            ranges: vec![(0, (1i128 << bits) - 1); VALUE_BITS.div_ceil(bits) as usize],
        }
    }

    /// A column of `signed` values or not: limbs in `[−(2^w − 1), 2^w − 1]` or
    /// `[0, 2^w − 1]`.
    pub fn typed_column(bits: u32, signed: bool) -> Self {
        let mut r = Self::column(bits);
        if signed {
            for x in &mut r.ranges {
                x.0 = -x.1;
            }
        }
        r
    }

    fn zip(&self, other: &Self, f: impl Fn((i128, i128), (i128, i128)) -> (i128, i128)) -> Self {
        let n = self.ranges.len().max(other.ranges.len());
        let get = |r: &Self, k: usize| r.ranges.get(k).copied().unwrap_or((0, 0));
        LimbRanges {
            bits: self.bits,
            ranges: (0..n).map(|k| f(get(self, k), get(other, k))).collect(),
        }
    }

    /// The ranges of `a + b`.
    pub fn add(&self, other: &Self) -> Self {
        self.zip(other, |a, b| (a.0 + b.0, a.1 + b.1))
    }

    /// The ranges of `a − b`.
    pub fn sub(&self, other: &Self) -> Self {
        self.zip(other, |a, b| (a.0 - b.1, a.1 - b.0))
    }

    /// The ranges of the convolution `a·b`.
    pub fn mul(&self, other: &Self) -> Self {
        let n = self.ranges.len() + other.ranges.len() - 1;
        let mut ranges = vec![(0i128, 0i128); n];
        for (i, a) in self.ranges.iter().enumerate() {
            for (j, b) in other.ranges.iter().enumerate() {
                let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
                let r = &mut ranges[i + j];
                r.0 += p.iter().min().expect("four products");
                r.1 += p.iter().max().expect("four products");
            }
        }
        LimbRanges {
            bits: self.bits,
            ranges,
        }
    }

    /// The ranges of `k·v` for an integer `k`.
    pub fn times(&self, k: i128) -> Self {
        LimbRanges {
            bits: self.bits,
            ranges: self
                .ranges
                .iter()
                .map(|&(lo, hi)| ((lo * k).min(hi * k), (lo * k).max(hi * k)))
                .collect(),
        }
    }

    /// The ranges of `m·v` for a mask `m ∈ {0, 1}`.
    pub fn masked(&self) -> Self {
        LimbRanges {
            bits: self.bits,
            ranges: self
                .ranges
                .iter()
                .map(|&(lo, hi)| (lo.min(0), hi.max(0)))
                .collect(),
        }
    }

    /// The ranges of a sum of `rows` values with these ranges.
    pub fn summed(&self, rows: usize) -> Self {
        let r = rows as i128;
        LimbRanges {
            bits: self.bits,
            ranges: self
                .ranges
                .iter()
                .map(|&(lo, hi)| (lo * r, hi * r))
                .collect(),
        }
    }

    /// The widest range's number of values.
    pub fn widest(&self) -> u128 {
        self.ranges
            .iter()
            .map(|&(lo, hi)| (hi - lo + 1) as u128)
            .max()
            .unwrap_or(1)
    }

    /// An [`Error::Overflow`] naming `expr` when some limb range has `t` values or more.
    pub fn check(&self, t: u64, expr: &dyn std::fmt::Display) -> Result<()> {
        let range = self.widest();
        if range > t as u128 {
            return Err(Error::Overflow {
                expr: expr.to_string(),
                range,
                t,
            });
        }
        Ok(())
    }

    /// The integer whose limbs are `residues` (each `l_k mod t`, lifted into its range).
    pub fn recombine(&self, residues: &[u64], t: u64) -> i128 {
        let t = t as i128;
        self.ranges
            .iter()
            .zip(residues)
            .enumerate()
            .map(|(k, (&(lo, _), &v))| {
                let lifted = lo + (v as i128 - lo).rem_euclid(t);
                lifted << (self.bits as usize * k)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 65537;

    fn residues(limbs: &[i128]) -> Vec<u64> {
        limbs
            .iter()
            .map(|&l| l.rem_euclid(T as i128) as u64)
            .collect()
    }

    fn conv(a: &[i128], b: &[i128]) -> Vec<i128> {
        let mut out = vec![0; a.len() + b.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                out[i + j] += x * y;
            }
        }
        out
    }

    #[test]
    fn limb_width_keeps_a_column_sum_below_t() {
        assert_eq!(limb_bits_for(1024, T).unwrap(), 6);
        assert_eq!(limb_bits_for(1, T).unwrap(), 6);
        assert_eq!(limb_bits_for(32768, T).unwrap(), 1);
        assert!(limb_bits_for(65537, T).is_err());
    }

    #[test]
    fn signed_limbs_recombine_and_narrow_the_width() {
        assert_eq!(limb_bits(1024, T, true).unwrap(), 5);
        assert_eq!(limb_bits(40, T, true).unwrap(), 6);
        let w = 5;
        let col = LimbRanges::typed_column(w, true);
        for (a, b) in [(-(1i64 << 31), 7i64), (-12345, -987654), (2147483647, -1)] {
            let la: Vec<i128> = split_signed(a, w).iter().map(|&x| x as i128).collect();
            let lb: Vec<i128> = split_signed(b, w).iter().map(|&x| x as i128).collect();
            assert_eq!(col.recombine(&residues(&la), T), a as i128);
            let prod = col.mul(&col);
            prod.check(T, &"a*b").unwrap();
            assert_eq!(
                prod.recombine(&residues(&conv(&la, &lb)), T),
                a as i128 * b as i128
            );
            let sum = col.masked().summed(1024);
            sum.check(T, &"SUM(a)").unwrap();
            let s: Vec<i128> = la.iter().map(|&x| x * 1024).collect();
            assert_eq!(sum.recombine(&residues(&s), T), a as i128 * 1024);
        }
    }

    #[test]
    fn products_differences_and_sums_recombine_exactly() {
        let w = 6;
        let col = LimbRanges::column(w);
        let (a, b) = (u32::MAX as u64, 123_456_789u64);
        let la: Vec<i128> = split(a, w).iter().map(|&x| x as i128).collect();
        let lb: Vec<i128> = split(b, w).iter().map(|&x| x as i128).collect();
        let prod = col.mul(&col);
        prod.check(T, &"a*b").unwrap();
        assert_eq!(
            prod.recombine(&residues(&conv(&la, &lb)), T),
            a as i128 * b as i128
        );
        let diff = col.sub(&col);
        let d: Vec<i128> = lb.iter().zip(&la).map(|(x, y)| x - y).collect();
        assert_eq!(diff.recombine(&residues(&d), T), b as i128 - a as i128);
        let sum = col.masked().summed(1024);
        sum.check(T, &"SUM(a)").unwrap();
        let s: Vec<i128> = la.iter().map(|&x| x * 1024).collect();
        assert_eq!(sum.recombine(&residues(&s), T), a as i128 * 1024);
        let too_big = prod.mul(&col);
        assert!(
            too_big
                .check(T, &"a*b*c")
                .unwrap_err()
                .to_string()
                .contains("a*b*c")
        );
    }
}
