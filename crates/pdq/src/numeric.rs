//! Column types and literals: unsigned 32-bit integers, signed 32-bit integers and decimals
//! as fixed point.
//!
//! A value `x` of a column of scale `k` is stored as the integer `v = x·10^k` (exact: the
//! column's text has at most `k` decimal places). Unsigned columns hold `v ∈ [0, 2^32 − 1]`;
//! signed columns (any column with a negative or a decimal value) hold `v ∈ [−2^31, 2^31 − 1]`,
//! compared as the unsigned word `v + 2^31` (order preserving) and split into limbs of `|v|`
//! carrying `v`'s sign. A constant compared with a column is scaled to the column's scale by
//! the client; one that does not fit it exactly is refused.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Most decimal places of a column or a constant.
pub const MAX_SCALE: u32 = 9;

/// The offset of a signed column's comparison word: `word = v + 2^31`.
pub const SIGN_OFFSET: i64 = 1 << 31;

/// The type of a column (public, like its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ColumnType {
    /// Whether values may be negative (`v ∈ [−2^31, 2^31 − 1]`; else `[0, 2^32 − 1]`).
    pub signed: bool,
    /// Decimal places `k`: the stored integer is `x·10^k`.
    pub scale: u32,
}

impl ColumnType {
    /// Unsigned 32-bit integers.
    pub const UNSIGNED: ColumnType = ColumnType {
        signed: false,
        scale: 0,
    };

    /// Signed 32-bit integers.
    pub const SIGNED: ColumnType = ColumnType {
        signed: true,
        scale: 0,
    };

    /// A decimal column of `scale` places (signed).
    pub fn decimal(scale: u32) -> Self {
        ColumnType {
            signed: true,
            scale,
        }
    }

    /// A declared type: `u` (unsigned), `i` (signed) or `dK` (decimal of `K` places).
    pub fn declared(text: &str) -> Option<Self> {
        match text.trim() {
            "u" => Some(Self::UNSIGNED),
            "i" => Some(Self::SIGNED),
            t => t
                .strip_prefix('d')?
                .parse()
                .ok()
                .filter(|&k| k <= MAX_SCALE)
                .map(Self::decimal),
        }
    }

    /// The range `[lo, hi]` of the stored integers.
    pub fn range(self) -> (i64, i64) {
        if self.signed {
            (-SIGN_OFFSET, SIGN_OFFSET - 1)
        } else {
            (0, u32::MAX as i64)
        }
    }

    /// Whether `v` is a stored integer of this type.
    pub fn holds(self, v: i64) -> bool {
        let (lo, hi) = self.range();
        (lo..=hi).contains(&v)
    }

    /// The comparison word of a stored integer: `v`, or `v + 2^31` when signed.
    pub fn word(self, v: i64) -> u64 {
        if self.signed {
            (v + SIGN_OFFSET) as u64
        } else {
            v as u64
        }
    }

    /// `lit` as a stored integer of this type (`lit·10^k`); refused when it has more places
    /// than the column or falls outside its range.
    pub fn scaled(self, lit: &Literal, column: &str) -> Result<i64> {
        let refuse = || Error::Value {
            value: lit.to_string(),
            place: format!("a constant compared with column `{column}`, {self}"),
        };
        if lit.scale > self.scale {
            return Err(refuse());
        }
        let v = lit
            .mantissa
            .checked_mul(10i128.pow(self.scale - lit.scale))
            .ok_or_else(refuse)?;
        i64::try_from(v)
            .ok()
            .filter(|&v| self.holds(v))
            .ok_or_else(refuse)
    }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.signed, self.scale) {
            (false, _) => f.write_str("unsigned 32-bit integers only: 0..=4294967295"),
            (true, 0) => f.write_str("signed 32-bit integers: -2147483648..=2147483647"),
            (true, k) => write!(
                f,
                "decimals of {k} places: x·10^{k} in -2147483648..=2147483647"
            ),
        }
    }
}

/// A decimal literal `mantissa / 10^scale` (a CSV cell or a SQL constant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Literal {
    /// The digits, signed.
    pub mantissa: i128,
    /// Decimal places.
    pub scale: u32,
}

impl Literal {
    /// An integer literal.
    pub fn int(v: i128) -> Self {
        Literal {
            mantissa: v,
            scale: 0,
        }
    }

    /// Parses `[-]digits[.digits]` (at most [`MAX_SCALE`] places and 30 digits; no
    /// exponent); trailing zeros after the point are dropped (`2.50` has scale 1).
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        let (neg, t) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let (int, frac) = match t.split_once('.') {
            Some((i, f)) => (i, f.trim_end_matches('0')),
            None => (t, ""),
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() && frac.is_empty() && !t.contains('0')
            || !digits(int)
            || !digits(frac)
            || t.is_empty()
            || int.len() + frac.len() > 30
            || frac.len() > MAX_SCALE as usize
        {
            return None;
        }
        let all = format!("{int}{frac}");
        let m: i128 = if all.is_empty() { 0 } else { all.parse().ok()? };
        Some(Literal {
            mantissa: if neg { -m } else { m },
            scale: frac.len() as u32,
        })
    }

    /// The value as `f64`.
    pub fn to_f64(self) -> f64 {
        self.mantissa as f64 / 10f64.powi(self.scale as i32)
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale == 0 {
            return write!(f, "{}", self.mantissa);
        }
        let p = 10i128.pow(self.scale);
        let a = self.mantissa.unsigned_abs();
        let sign = if self.mantissa < 0 { "-" } else { "" };
        write!(
            f,
            "{sign}{}.{:0w$}",
            a / p as u128,
            a % p as u128,
            w = self.scale as usize
        )
    }
}

/// The type that holds every cell of a column (`literals`): unsigned when all are
/// non-negative integers, else signed with the most decimal places of any cell.
pub fn infer(literals: &[Literal]) -> ColumnType {
    let scale = literals.iter().map(|l| l.scale).max().unwrap_or(0);
    if scale == 0 && literals.iter().all(|l| l.mantissa >= 0) {
        ColumnType::UNSIGNED
    } else {
        ColumnType::decimal(scale)
    }
}

/// `v / 10^scale` as `f64` (one rounding of the exact quotient for `|v| < 2^53`).
pub fn unscale(v: i128, scale: u32) -> f64 {
    if scale == 0 {
        v as f64
    } else {
        v as f64 / 10f64.powi(scale as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_parse_and_print() {
        let l = |s: &str| Literal::parse(s);
        assert_eq!(
            l("12.340"),
            Some(Literal {
                mantissa: 1234,
                scale: 2
            })
        );
        assert_eq!(
            l("-0.5"),
            Some(Literal {
                mantissa: -5,
                scale: 1
            })
        );
        assert_eq!(l("7"), Some(Literal::int(7)));
        assert_eq!(l("0"), Some(Literal::int(0)));
        assert_eq!(l("-3.").unwrap(), Literal::int(-3));
        for bad in ["", "-", "1e5", "1.2.3", "a", "0.0000000001", "--1", "."] {
            assert_eq!(l(bad), None, "{bad}");
        }
        assert_eq!(l("-12.05").unwrap().to_string(), "-12.05");
    }

    #[test]
    fn types_scale_constants_exactly_or_refuse() {
        let d2 = ColumnType::decimal(2);
        let lit = |s: &str| Literal::parse(s).unwrap();
        assert_eq!(d2.scaled(&lit("-1.5"), "p").unwrap(), -150);
        assert!(d2.scaled(&lit("1.234"), "p").is_err());
        assert!(ColumnType::UNSIGNED.scaled(&lit("-1"), "a").is_err());
        assert!(
            ColumnType::UNSIGNED
                .scaled(&lit("4294967296"), "a")
                .unwrap_err()
                .to_string()
                .contains("unsigned 32-bit integers only")
        );
        assert_eq!(ColumnType::SIGNED.word(-(1 << 31)), 0);
        assert_eq!(ColumnType::SIGNED.word(-1) + 1, ColumnType::SIGNED.word(0));
        assert_eq!(infer(&[lit("1"), lit("2")]), ColumnType::UNSIGNED);
        assert_eq!(infer(&[lit("1"), lit("-2")]), ColumnType::SIGNED);
        assert_eq!(infer(&[lit("1.25"), lit("2")]), ColumnType::decimal(2));
    }
}
