//! Launch wrapper of `kernels/decode.cu` (decryption's CRT decoding into `Z_t`), the device
//! table of one [`CrtDecoder`], and the host side that folds the per-block summaries into a
//! [`NoiseFraction`](fhe_math::crt_decode::NoiseFraction).

use super::launch;
use crate::error::Result;
use cudarc::driver::{CudaStream, LaunchConfig};
use fhe_math::crt_decode::{CrtDecoder, DecodeMode};
use std::sync::Arc;

/// `DECODE_BLOCK` of decode.cu: coefficients per block.
pub(crate) const DECODE_BLOCK: u32 = 256;
/// `DECODE_ROW` of decode.cu: table words per limb.
const DECODE_ROW: usize = 10;
/// `DECODE_SUMMARY` of decode.cu: words per block summary.
pub(crate) const DECODE_SUMMARY: usize = 3;

/// The identity of a decoder: `t`, then its moduli (everything else derives from them).
pub(crate) fn fingerprint(d: &CrtDecoder) -> Vec<u64> {
    let mut f = vec![d.t().value()];
    f.extend(d.basis().moduli().iter().map(|q| q.value()));
    f
}

/// The host image of a decoder's table: `DECODE_ROW` words per limb (decode.cu's layout), then
/// the quarter bounds `maybe` and `sure` as (low, high) words.
pub(crate) fn build(d: &CrtDecoder) -> Vec<u64> {
    let split = |x: u128| [x as u64, (x >> 64) as u64];
    let mut buf = Vec::with_capacity(d.basis().len() * DECODE_ROW + 4);
    for l in d.limbs() {
        let [tf_lo, tf_hi] = split(l.t_frac);
        let [of_lo, of_hi] = split(l.one_frac);
        buf.extend_from_slice(&[
            l.q,
            l.q_hat_inv.0,
            l.q_hat_inv.1,
            l.t_int,
            tf_lo,
            tf_hi,
            of_lo,
            of_hi,
            l.q_hat_mod_t,
            0,
        ]);
    }
    let (maybe, sure) = d.quarter_bounds();
    buf.extend(split(maybe));
    buf.extend(split(sure));
    buf
}

/// Words of the result buffer for `n` coefficients: `n` results, then the block summaries.
pub(crate) fn result_words(n: usize) -> usize {
    n + n.div_ceil(DECODE_BLOCK as usize) * DECODE_SUMMARY
}

/// `decode_crt_mod_t` over the `limbs` limbs at `x` (`n` coefficients each), with the decoder's
/// table at `table` (from [`build`]); writes [`result_words`] words at `out`.
pub(crate) fn crt_mod_t(
    dev: &crate::Device,
    stream: &Arc<CudaStream>,
    d: &CrtDecoder,
    mode: DecodeMode,
    (x, n, table, out): (u64, u32, u64, u64),
) -> Result<()> {
    let f = dev.function("decode", "decode_crt_mod_t")?;
    let t = d.t();
    let (t_bhi, t_blo) = t.barrett_constant();
    let neg_q = t.neg(d.q_mod_t());
    let (scale, scaled) = match mode {
        DecodeMode::ScaleRound => (1, 1u32),
        DecodeMode::Centred { scale } => (t.reduce(scale), 0),
    };
    let limbs = d.basis().len() as u32;
    let quarter = table + 8 * (limbs as u64 * DECODE_ROW as u64);
    let summary = out + 8 * n as u64;
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(DECODE_BLOCK), 1, 1),
        block_dim: (DECODE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let tv = t.value();
    launch!(
        stream, f, cfg, &x, &n, &limbs, &table, &tv, &t_bhi, &t_blo, &neg_q, &scale, &scaled,
        &quarter, &out, &summary
    )
}

/// Folds the block summaries: `(max |ρ̃|, some |ρ̃| ≥ sure, some |ρ̃| in [maybe, sure))`.
pub(crate) fn fold_summaries(words: &[u64]) -> (u128, bool, bool) {
    words
        .chunks_exact(DECODE_SUMMARY)
        .fold((0, false, false), |(max, sure, maybe), s| {
            let m = (s[1] as u128) << 64 | s[0] as u128;
            (max.max(m), sure || s[2] & 1 != 0, maybe || s[2] & 2 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_math::Modulus;

    #[test]
    fn table_layout_and_summary_fold() {
        let moduli: Vec<Modulus> = fhe_math::primes::ntt_primes(50, 1 << 11, 3, &[])
            .unwrap()
            .into_iter()
            .map(|q| Modulus::new(q).unwrap())
            .collect();
        let d = CrtDecoder::new(&moduli, Modulus::new(65537).unwrap()).unwrap();
        let buf = build(&d);
        assert_eq!(buf.len(), 3 * DECODE_ROW + 4);
        let limbs = d.limbs();
        assert_eq!(buf[DECODE_ROW], limbs[1].q);
        assert_eq!(buf[DECODE_ROW + 5], (limbs[1].t_frac >> 64) as u64);
        let (maybe, sure) = d.quarter_bounds();
        assert_eq!(buf[3 * DECODE_ROW], maybe as u64);
        assert_eq!(buf[3 * DECODE_ROW + 3], (sure >> 64) as u64);
        assert_eq!(fingerprint(&d)[0], 65537);
        assert_eq!(result_words(1000), 1000 + 4 * DECODE_SUMMARY);

        let summaries = [5, 1, 0, 7, 0, 2, 3, 1, 0];
        assert_eq!(fold_summaries(&summaries), ((1u128 << 64) | 5, false, true));
        assert_eq!(fold_summaries(&[0, 0, 1]), (0, true, false));
    }
}
