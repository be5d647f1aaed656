//! Free constants and cheap alignment through the BGV correction factor.
//!
//! A BGV ciphertext with factor `f` decrypts to `m = f^{-1}·[c_0 + c_1·s]_t`. Declaring its
//! factor to be `f·λ^{-1}` instead makes it decrypt to `λ·m` without touching the
//! polynomials: multiplying by a constant costs no noise ([`scale`]).
//!
//! Adding ciphertexts with factors `f_x ≠ f_y` needs one operand multiplied by
//! `f_x·f_y^{-1} mod t`, up to `t/2` (16 bits of noise at `t = 65537`). [`add`] instead finds
//! small `a, b` with `a·f_x ≡ b·f_y (mod t)` (`|a|, |b| ≤ √t`: rational reconstruction by the
//! extended Euclidean algorithm), multiplies `x` by `a` and `y` by `b` and declares both the
//! common factor `a·f_x`: about 8 bits of noise on each side instead of 16 on one (or the
//! one-sided choice when its multiplier happens to be small or its operand quiet).

use crate::digit_poly::inv_mod;
use crate::error::Result;
use bgv::{Ciphertext, Context, Evaluator};
use fhe_math::backend::IntegerBackend;

fn mul_mod(a: u64, b: u64, t: u64) -> u64 {
    (a as u128 * b as u128 % t as u128) as u64
}

/// `x` relabelled to decrypt to `λ·m` (`λ ≢ 0 mod t`): no operation on the polynomials.
pub(crate) fn scale<B: IntegerBackend>(
    ctx: &Context<B>,
    x: Ciphertext<B>,
    lambda: u64,
) -> Result<Ciphertext<B>> {
    let t = ctx.params().t();
    let f = mul_mod(x.factor(), inv_mod(lambda % t, t), t);
    let (inner, _, bits) = x.into_parts();
    Ok(Ciphertext::new(ctx, inner, f, bits)?)
}

/// Small `(a, b)`, `b > 0`, with `a ≡ b·k (mod t)` and `|a|, b ≤ √t` (rational
/// reconstruction: the first remainder of Euclid on `(t, k)` below `√t`).
fn small_ratio(k: u64, t: u64) -> (i64, i64) {
    let bound = (t as f64).sqrt() as i128;
    let (mut r0, mut r1) = (t as i128, k as i128);
    let (mut u0, mut u1) = (0i128, 1i128);
    while r1 > bound {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (u0, u1) = (u1, u0 - q * u1);
    }
    // r1 ≡ u1·k (mod t).
    if u1 < 0 {
        (-r1 as i64, -u1 as i64)
    } else {
        (r1 as i64, u1 as i64)
    }
}

/// `x + y` with the factors aligned at the least noise (module documentation): among `x`
/// times `f_y/f_x`, `y` times `f_x/f_y` (centred) and the small pair `(a, b)`, the choice with
/// the lowest resulting bound; levels are aligned by switching the higher operand down.
pub(crate) fn add<B: IntegerBackend>(
    ev: &Evaluator<B>,
    x: &Ciphertext<B>,
    y: &Ciphertext<B>,
) -> Result<Ciphertext<B>> {
    let ctx = ev.context();
    let level = x.level().min(y.level());
    let x = ev.mod_switch_to(x, level)?;
    let y = ev.mod_switch_to(y, level)?;
    if x.factor() == y.factor() {
        return Ok(ev.add(&x, &y)?);
    }
    let t = ctx.params().t();
    let centred = |v: u64| -> i64 {
        if v > t / 2 {
            v as i64 - t as i64
        } else {
            v as i64
        }
    };
    let bits = |m: i64| (m.unsigned_abs().max(1) as f64).log2();
    // a·f_x ≡ b·f_y  ⇔  a ≡ b·(f_y/f_x).
    let k = mul_mod(y.factor(), inv_mod(x.factor(), t), t);
    let (a0, b0) = small_ratio(k, t);
    let candidates = [(centred(k), 1), (1, centred(inv_mod(k, t))), (a0, b0)];
    let (a, b) = candidates
        .into_iter()
        .min_by(|&(a, b), &(c, d)| {
            let cost = |a: i64, b: i64| (x.noise_bits() + bits(a)).max(y.noise_bits() + bits(b));
            cost(a, b).total_cmp(&cost(c, d))
        })
        .expect("three candidates");
    let common = mul_mod(x.factor(), (a as i128).rem_euclid(t as i128) as u64, t);
    let relabel = |c: Ciphertext<B>, m: i64| -> Result<Ciphertext<B>> {
        let c = if m == 1 { c } else { ev.mul_scalar(&c, m)? };
        let (inner, _, bits) = c.into_parts();
        Ok(Ciphertext::new(ctx, inner, common, bits)?)
    };
    let xs = relabel(x, a)?;
    let ys = relabel(y, b)?;
    Ok(ev.add(&xs, &ys)?)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_ratios_reconstruct() {
        let t = 65537u64;
        for k in [1u64, 2, 3, 12345, 65536, 40000, 257, 32768] {
            let (a, b) = small_ratio(k, t);
            assert!(
                a.unsigned_abs() <= 256 && b > 0 && b <= 256,
                "k {k}: {a} {b}"
            );
            let lhs = (a as i128).rem_euclid(t as i128) as u64;
            assert_eq!(lhs, mul_mod(b as u64, k, t), "k {k}");
        }
    }
}
