//! The ring's precomputed tables, packed into one device buffer at `CudaBackend::new`.
//!
//! Layout (u64 words, offsets kept in [`TableLayout`]): per slot `[q, barrett_hi, barrett_lo, bits of 1/q as f64]`;
//! NTT twiddles `[slot][k]` forward, forward Shoup, inverse, inverse Shoup, then the same
//! interleaved as `[slot][k][twiddle, shoup]` pairs (one 16-byte load per twiddle in the
//! register-blocked NTT pass; a slot whose passes run in double precision holds its twiddles as
//! doubles instead, 8 bytes each, the lowest stages' regions compacted (`f64_twiddles`), then
//! the integer twiddles); per slot `[n^-1, shoup, n^-1·ψ^(-n/2), shoup]`; per level the rescale constants, the `mod_down`
//! converter (P -> Q_l) with `P^-1 mod q_i`, and for each digit the `mod_up` converter
//! (digit -> other Q slots and P) with its target slot list; the Gaussian CDT.

use fhe_math::modulus::Modulus;
use fhe_math::ntt::NttTable;
use fhe_math::ring::RingContext;
use fhe_math::rns::BasisConverter;
use std::ops::Range;

/// One basis conversion in the table buffer.
#[derive(Clone, Debug)]
pub(crate) struct ConvLayout {
    /// First source slot (sources are consecutive slots).
    pub from_slot0: usize,
    /// Number of source slots.
    pub from_cnt: usize,
    /// Offset of `q̂_i^-1 mod q_i` (then its Shoup companions at `+ from_cnt`).
    pub qhatinv: usize,
    /// Offset of the `[to][from]` matrix `q̂_i mod p_j`.
    pub h: usize,
    /// Offset of the target slot list (as u64).
    pub to_slots: usize,
    /// Number of targets.
    pub to_cnt: usize,
    /// Offset of the centring offsets added to each source limb.
    pub h_in: usize,
    /// Offset of the centring offsets subtracted from each target limb.
    pub h_out: usize,
    /// Offset of `Q mod p_j` per target when the conversion is exact (mod_down), else `None`.
    pub q_mod_p: Option<usize>,
    /// Offset of the tensor-core conversion's B fragments by target
    /// ([`crate::kernels::mma::mma_fragments`]), for at most 16 sources.
    pub mma_frag: Option<usize>,
    /// mod_down's fragments for the fused rescale: the rows of the targets below the top one
    /// scaled by `P^-1` (the rescale's `z` needs `conv·P^-1`), the top row as it is.
    pub mma_frag_pinv: Option<usize>,
}

/// `mod_up` tables of one digit at one level.
#[derive(Clone, Debug)]
pub(crate) struct ModUpLayout {
    pub digit: Range<usize>,
    pub conv: ConvLayout,
    /// The conversion's target slots, in the order of its rows.
    pub targets: Vec<usize>,
    /// For a digit of 2..=[`CONVERT_MAX_FROM`] primes: the index in
    /// [`TableLayout::convert_rows`] of its first target's row (target `t` at `row0 + t`), so
    /// that the forward NTT can convert the digit as it loads it.
    pub row0: Option<u32>,
}

/// Offsets of one level's [`TableLayout::mod_up_prescale`] tables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prescale {
    /// `[c0, shoup, c2, shoup]` by slot (the inverse NTT's last-stage constants).
    pub consts: usize,
    /// The output offset by slot.
    pub offs: usize,
}

/// `CONVERT_MAX_FROM` of ntt.cu: the most primes of a digit that the forward NTT converts as it
/// loads it (each raised word then reads that many source words).
pub(crate) const CONVERT_MAX_FROM: usize = 4;
/// `CONVERT_ROW` of ntt.cu: words per conversion row, `[head, h_out, h_0, .., h_{from-1}]`
/// padded to `2 + CONVERT_MAX_FROM`, then `Q mod p` of an exact row's target (0 otherwise).
/// The head holds the source count in its low byte, the flags below, and for an exact row its
/// first source slot from bit [`CONVERT_SOURCE_SHIFT`].
pub(crate) const CONVERT_ROW: usize = 3 + CONVERT_MAX_FROM;
/// `CONVERT_EXACT` of ntt.cu: the row's conversion removes the overflow `α·Q` as
/// `BasisConverter::convert_exact` does (mod_down's rows), with `α` from the Barrett constants of
/// the source slots.
pub(crate) const CONVERT_EXACT: u64 = 0x400;
/// `CONVERT_SOURCE_SHIFT` of ntt.cu: where an exact row's head holds its first source slot.
pub(crate) const CONVERT_SOURCE_SHIFT: u32 = 32;
/// Rows a limb's slot word can address (`CONVERT_ROW_MASK` of ntt.cu plus one).
pub(crate) const CONVERT_MAX_ROWS: usize = 1 << 15;
/// `CONVERT_F64_SOURCES` of ntt.cu: set in a row's first word (beside the source count in its low
/// byte) when every source prime is below 2^[`CONVERT_F64_SOURCE_BITS`], so that a target on the
/// FP64 path may form the row's sum in doubles.
pub(crate) const CONVERT_F64_SOURCES: u64 = 0x100;
/// `F64_FACTOR_BITS` of common.cuh: `f64_mul_mod` is exact for factors below 2^46.
pub(crate) const CONVERT_F64_SOURCE_BITS: u32 = 46;
/// `CONVERT_F64_WIDE_SOURCES` of ntt.cu: set when every source prime is below
/// 2^[`CONVERT_F64_WIDE_SOURCE_BITS`], so that a target on the wide FP64 path (below
/// 2^[`NTT_F64_WIDE_BITS`](crate::kernels::ntt::NTT_F64_WIDE_BITS)) may form the sum in doubles.
pub(crate) const CONVERT_F64_WIDE_SOURCES: u64 = 0x200;
/// Sources below 2^50 keep each wide term `f64_mul_mod(v_i, h_i)` below 0.75q (ntt.cu).
pub(crate) const CONVERT_F64_WIDE_SOURCE_BITS: u32 = 50;

/// The FP64 flags of a conversion row whose digit's primes are `sources`: which FP64 paths of
/// the target may form the row's sum in doubles.
fn convert_f64_flags(sources: impl Iterator<Item = u64>) -> u64 {
    let largest = sources.max().unwrap_or(0);
    let flag = |bits: u32, flag: u64| if largest < 1 << bits { flag } else { 0 };
    flag(CONVERT_F64_SOURCE_BITS, CONVERT_F64_SOURCES)
        | flag(CONVERT_F64_WIDE_SOURCE_BITS, CONVERT_F64_WIDE_SOURCES)
}

/// Offsets of every table in the buffer.
#[derive(Clone, Debug)]
pub(crate) struct TableLayout {
    /// Slot rows and NTT tables.
    pub ntt: NttOffsets,
    /// `[level]`: offset of (value, shoup) pairs indexed by slot `i < level`.
    pub rescale: Vec<usize>,
    /// `[level]`: the P -> Q_l converter.
    pub mod_down: Vec<ConvLayout>,
    /// `[level]`: offset of (value, shoup) pairs of `P^-1 mod q_i` indexed by slot.
    pub p_inv: Vec<usize>,
    /// `[level][digit]`.
    pub mod_up: Vec<Vec<ModUpLayout>>,
    /// `[level]`: mod_up's inverse NTT constants when the digits of `row0` are converted on
    /// load: per slot `[n^-1·q̂^-1, shoup, n^-1·ψ^(-n/2)·q̂^-1, shoup]` (the plain constants for
    /// the other slots), then per slot the offset `h_in·q̂^-1` added to the output, so that the
    /// inverse NTT writes the conversion's `v = (x + h_in)·q̂^-1 mod q` directly.
    pub mod_up_prescale: Vec<Prescale>,
    /// The conversion rows of the digits with a `row0` (`CONVERT_ROW` words each).
    pub convert_rows: usize,
    /// mod_down's exact conversion from `P` (of 2..=[`CONVERT_MAX_FROM`] primes) as rows of
    /// [`TableLayout::convert_rows`]: target slot `s` (a `Q` slot) at `row0 + s`, for the
    /// forward NTT to convert as it loads (its inverse NTT with [`mod_down_prescale`]'s
    /// constants).
    pub mod_down_row0: Option<u32>,
    pub cdt: usize,
}

/// Offsets of the per-slot constants and NTT tables (the first part of a table buffer).
#[derive(Clone, Debug)]
pub(crate) struct NttOffsets {
    pub slots: usize,
    pub fwd: usize,
    pub fwd_shoup: usize,
    pub inv: usize,
    pub inv_shoup: usize,
    /// `[slot][k][2]`: forward twiddle and Shoup companion, interleaved (16-byte aligned); on
    /// the slots of `f64_slots` `[slot][k]` the twiddles' bits as doubles (the lowest stages'
    /// regions compacted, [`f64_twiddles`]), then `[k]` the twiddles (2n words a slot either
    /// way).
    pub fwd_pair: usize,
    /// `[slot][k][2]`: inverse twiddle and Shoup companion (or the doubles, then the
    /// twiddles), as `fwd_pair`.
    pub inv_pair: usize,
    pub ntt_consts: usize,
    /// By slot: whether its NTT passes run in double precision (modulus below
    /// 2^[`NTT_F64_WIDE_BITS`](crate::kernels::ntt::NTT_F64_WIDE_BITS)); the launches pick
    /// their block shape by it.
    pub f64_slots: Vec<bool>,
}

/// The n words of a double-precision slot's twiddle table, forward or `inverse`: `w[k]` as a
/// double at `k`, except in the regions `[2^m, 2^(m+1))` of the three lowest stages (m = log n -
/// 1 - b, b < 3) that [`compaction`](crate::kernels::ntt::compaction) compacts by 2^c: there
/// `w[2^m + 2^c·i]` at `2^m + i` and zeros after (the pass forms the others as
/// `w[2^m + 2^c·i]·w[j]`, `twiddle_group` of ntt.cu).
fn f64_twiddles(w: &[u64], inverse: bool) -> Vec<u64> {
    let n = w.len();
    let log_n = n.trailing_zeros();
    let mut out: Vec<u64> = w.iter().map(|&a| (a as f64).to_bits()).collect();
    let c = crate::kernels::ntt::compaction(log_n, inverse);
    for (b, &cb) in c.iter().enumerate() {
        let Some(m) = (log_n as usize).checked_sub(1 + b) else {
            continue;
        };
        if cb == 0 {
            continue;
        }
        let (start, f) = (1usize << m, 1usize << cb);
        for i in 0..start {
            out[start + i] = if i < start / f {
                (w[start + f * i] as f64).to_bits()
            } else {
                0
            };
        }
    }
    out
}

/// Whether the register-blocked NTT passes of `t`'s modulus run in double precision (below
/// 2^[`NTT_F64_WIDE_BITS`](crate::kernels::ntt::NTT_F64_WIDE_BITS), `TABLE_F64_BITS` of ntt.cu).
fn runs_in_f64(t: &NttTable) -> bool {
    t.modulus().value() < 1 << crate::kernels::ntt::NTT_F64_WIDE_BITS
}

/// Appends the slot rows `[q, barrett_hi, barrett_lo, f64 bits of 1/q]` and the NTT tables of `ntts` (one
/// per slot, in slot order) to `buf`.
pub(crate) fn push_slots_and_ntt(buf: &mut Vec<u64>, ntts: &[&NttTable]) -> NttOffsets {
    let slots = buf.len();
    for t in ntts {
        let (hi, lo) = t.modulus().barrett_constant();
        let q = t.modulus().value();
        // 1/q rounded to a double: the quotient estimate of the FP64 NTT butterflies (ntt.cu).
        buf.extend_from_slice(&[q, hi, lo, (1.0 / q as f64).to_bits()]);
    }
    let push_all = |buf: &mut Vec<u64>, f: &dyn Fn(&NttTable) -> Vec<u64>| {
        let off = buf.len();
        for t in ntts {
            buf.extend(f(t));
        }
        off
    };
    // (twiddle, Shoup companion) pairs; on a double-precision slot the twiddles' bits as
    // doubles (exact: w < q < 2^50), which `F64ArithT` of ntt.cu reads without a conversion,
    // then the integer twiddles (`IntArithT<true>`, A/B builds).
    let pairs = |t: &NttTable, w: &[u64], ws: &[u64], inverse: bool| -> Vec<u64> {
        if runs_in_f64(t) {
            f64_twiddles(w, inverse)
                .into_iter()
                .chain(w.iter().copied())
                .collect()
        } else {
            w.iter().zip(ws).flat_map(|(&a, &b)| [a, b]).collect()
        }
    };
    let fwd = push_all(buf, &|t| t.forward_twiddles().to_vec());
    let fwd_shoup = push_all(buf, &|t| t.forward_twiddles_shoup().to_vec());
    let inv = push_all(buf, &|t| t.inverse_twiddles().to_vec());
    let inv_shoup = push_all(buf, &|t| t.inverse_twiddles_shoup().to_vec());
    // The buffer is allocated 256-byte aligned: an even word offset is 16-byte aligned.
    if buf.len() % 2 == 1 {
        buf.push(0);
    }
    let fwd_pair = push_all(buf, &|t| {
        pairs(t, t.forward_twiddles(), t.forward_twiddles_shoup(), false)
    });
    let inv_pair = push_all(buf, &|t| {
        pairs(t, t.inverse_twiddles(), t.inverse_twiddles_shoup(), true)
    });
    let ntt_consts = push_all(buf, &|t| {
        vec![
            t.n_inv(),
            t.n_inv_shoup(),
            t.inverse_final_twiddle(),
            t.inverse_final_twiddle_shoup(),
        ]
    });
    let f64_slots = ntts.iter().map(|t| runs_in_f64(t)).collect();
    NttOffsets {
        slots,
        f64_slots,
        fwd,
        fwd_shoup,
        inv,
        inv_shoup,
        fwd_pair,
        inv_pair,
        ntt_consts,
    }
}

impl TableLayout {
    /// The layout of a buffer holding only slots and NTT tables (the other tables empty).
    pub(crate) fn ntt_only(ntt: NttOffsets) -> Self {
        TableLayout {
            ntt,
            rescale: Vec::new(),
            mod_down: Vec::new(),
            p_inv: Vec::new(),
            mod_up: Vec::new(),
            mod_up_prescale: Vec::new(),
            convert_rows: 0,
            mod_down_row0: None,
            cdt: 0,
        }
    }
}

/// The host image and layout of a table buffer with the NTT tables of `ntts` only (one slot
/// each, in order).
pub(crate) fn build_ntt_only(ntts: &[&NttTable]) -> (Vec<u64>, TableLayout) {
    let mut buf = Vec::new();
    let o = push_slots_and_ntt(&mut buf, ntts);
    (buf, TableLayout::ntt_only(o))
}

/// The tensor-core conversion's B fragments of the `[to][from]` matrix `h`
/// ([`crate::kernels::mma::mma_fragments`]), for a conversion with enough sources to run
/// on the tensor cores ([`crate::Tuning::convert_mma_min_from`] of [`crate::Tuning::MEASURED`],
/// the table every device takes).
fn mma_fragments_for(h: &[u64], to: &[Modulus]) -> Option<Vec<u64>> {
    let from = h.len().checked_div(to.len()).unwrap_or(0);
    (from >= crate::Tuning::MEASURED.convert_mma_min_from.max(1))
        .then(|| crate::kernels::mma::mma_fragments(h, to))
        .flatten()
}

/// Appends one basis conversion's tables (`q̂^-1` and Shoup companions, the `[to][from]` matrix,
/// the target slot list, the centring offsets, and `Q mod p_j` when `exact`) to `buf`.
pub(crate) fn push_conv(
    buf: &mut Vec<u64>,
    conv: &BasisConverter,
    from_slot0: usize,
    to_slots: &[usize],
    h_in: &[u64],
    h_out: &[u64],
    exact: bool,
) -> ConvLayout {
    let qhatinv = buf.len();
    buf.extend_from_slice(conv.q_hat_inv());
    buf.extend_from_slice(conv.q_hat_inv_shoup());
    let h = buf.len();
    buf.extend_from_slice(conv.q_hat_mod_p());
    let ts = buf.len();
    buf.extend(to_slots.iter().map(|&s| s as u64));
    let hi = buf.len();
    buf.extend_from_slice(h_in);
    let ho = buf.len();
    buf.extend_from_slice(h_out);
    let q_mod_p = exact.then(|| {
        let o = buf.len();
        buf.extend_from_slice(conv.q_mod_p());
        o
    });
    let mma_frag = mma_fragments_for(conv.q_hat_mod_p(), conv.to()).map(|f| {
        let o = buf.len();
        buf.extend_from_slice(&f);
        o
    });
    ConvLayout {
        q_mod_p,
        mma_frag,
        mma_frag_pinv: None,
        h_in: hi,
        h_out: ho,
        from_slot0,
        from_cnt: conv.from().len(),
        qhatinv,
        h,
        to_slots: ts,
        to_cnt: to_slots.len(),
    }
}

/// Offset of `P mod q_i` indexed by Q slot: the `Q mod p_j` words of the top level's mod_down
/// conversion (whose sources are the special primes and whose targets the Q slots in order);
/// `None` without special primes.
pub(crate) fn p_mod_q(layout: &TableLayout) -> Option<usize> {
    layout.mod_down.last().and_then(|c| c.q_mod_p)
}

/// Builds the host image of the table buffer and its layout.
pub(crate) fn build(ring: &RingContext) -> (Vec<u64>, TableLayout) {
    let s_count = ring.q_count() + ring.p_count();
    let mut buf: Vec<u64> = Vec::new();
    let ntts: Vec<&NttTable> = (0..s_count).map(|s| ring.ntt(s)).collect();
    let offsets = push_slots_and_ntt(&mut buf, &ntts);

    let mut rescale = Vec::new();
    let mut mod_down = Vec::new();
    let mut p_inv = Vec::new();
    let mut mod_up = Vec::new();
    let mut mod_up_prescale = Vec::new();
    let mut rows: Vec<u64> = Vec::new();
    for level in 0..ring.q_count() {
        rescale.push(buf.len());
        for k in ring.rescale_constants(level) {
            buf.extend_from_slice(&[k.value, k.shoup]);
        }
        if let Some(t) = ring.mod_down_table(level) {
            let to: Vec<usize> = (0..=level).collect();
            let mut conv = push_conv(
                &mut buf,
                &t.converter,
                ring.q_count(),
                &to,
                &t.half_p_mod_p,
                &t.half_p_mod_q,
                true,
            );
            // Targets are the slots 0..=level in order: row `t` scaled by P^-1 mod q_t below
            // the top.
            let (h, moduli) = (t.converter.q_hat_mod_p(), t.converter.to());
            let from = t.converter.from().len();
            let scaled: Vec<u64> = h
                .chunks(from)
                .enumerate()
                .flat_map(|(row, hs)| {
                    let (m, pinv) = (&moduli[row], t.p_inv[row].value);
                    hs.iter()
                        .map(move |&x| if row < level { m.mul(x, pinv) } else { x })
                })
                .collect();
            conv.mma_frag_pinv = mma_fragments_for(&scaled, moduli).map(|f| {
                let o = buf.len();
                buf.extend_from_slice(&f);
                o
            });
            mod_down.push(conv);
            p_inv.push(buf.len());
            for k in &t.p_inv {
                buf.extend_from_slice(&[k.value, k.shoup]);
            }
        }
        let mut ups = Vec::new();
        let mut prescale = plain_inverse_constants(ring, s_count);
        for t in ring.mod_up_tables(level) {
            let conv = push_conv(
                &mut buf,
                &t.converter,
                t.digit_slots.start,
                &t.target_slots,
                &t.half_mod_digit,
                &t.half_mod_target,
                false,
            );
            let row0 = push_convert_rows(&mut rows, t, &mut prescale, ring);
            ups.push(ModUpLayout {
                digit: t.digit_slots.clone(),
                conv,
                targets: t.target_slots.clone(),
                row0,
            });
        }
        mod_up_prescale.push(Prescale {
            consts: buf.len(),
            offs: buf.len() + 4 * s_count,
        });
        buf.extend(prescale);
        mod_up.push(ups);
    }
    let mod_down_row0 = push_mod_down_rows(&mut rows, ring);
    let convert_rows = buf.len();
    buf.extend(rows);
    let cdt = buf.len();
    buf.extend_from_slice(fhe_math::sampler::gaussian_cdt());
    (
        buf,
        TableLayout {
            ntt: offsets,
            rescale,
            mod_down,
            p_inv,
            mod_up,
            mod_up_prescale,
            convert_rows,
            mod_down_row0,
            cdt,
        },
    )
}

/// The inverse NTT constants of every slot (`[n^-1, shoup, n^-1·ψ^(-n/2), shoup]` each) followed
/// by a zero output offset per slot: [`TableLayout::mod_up_prescale`] before any digit scales
/// its slots.
fn plain_inverse_constants(ring: &RingContext, s_count: usize) -> Vec<u64> {
    let mut v: Vec<u64> = (0..s_count)
        .flat_map(|s| {
            let t = ring.ntt(s);
            [
                t.n_inv(),
                t.n_inv_shoup(),
                t.inverse_final_twiddle(),
                t.inverse_final_twiddle_shoup(),
            ]
        })
        .collect();
    v.resize(5 * s_count, 0);
    v
}

/// For a digit of 2..=[`CONVERT_MAX_FROM`] primes (while rows remain addressable): appends one
/// conversion row per target to `rows` and scales the digit's slots in `prescale` (the layout of
/// [`TableLayout::mod_up_prescale`]); returns the first row's index.
fn push_convert_rows(
    rows: &mut Vec<u64>,
    t: &fhe_math::ring::ModUpTable,
    prescale: &mut [u64],
    ring: &RingContext,
) -> Option<u32> {
    let from = t.digit_slots.len();
    let row0 = rows.len() / CONVERT_ROW;
    if !(2..=CONVERT_MAX_FROM).contains(&from) || row0 + t.target_slots.len() > CONVERT_MAX_ROWS {
        return None;
    }
    let h = t.converter.q_hat_mod_p();
    let flags = convert_f64_flags(t.digit_slots.clone().map(|s| ring.modulus(s).value()));
    let head = from as u64 | flags;
    for (k, &h_out) in t.half_mod_target.iter().enumerate() {
        let mut row = vec![head, h_out];
        row.extend_from_slice(&h[k * from..(k + 1) * from]);
        row.resize(CONVERT_ROW, 0);
        rows.extend(row);
    }
    let s_count = prescale.len() / 5;
    for (i, s) in t.digit_slots.clone().enumerate() {
        let nt = ring.ntt(s);
        let m = nt.modulus();
        let qhi = t.converter.q_hat_inv()[i];
        let (c0, c2) = (
            m.mul(nt.n_inv(), qhi),
            m.mul(nt.inverse_final_twiddle(), qhi),
        );
        prescale[4 * s..4 * s + 4].copy_from_slice(&[c0, m.shoup(c0), c2, m.shoup(c2)]);
        prescale[4 * s_count + s] = m.mul(t.half_mod_digit[i], qhi);
    }
    Some(row0 as u32)
}

/// mod_down's exact conversion rows (see [`TableLayout::mod_down_row0`]): one per `Q` slot,
/// from the top level's table (the lower levels convert to a prefix of its targets with the same
/// words). `None` without 2..=[`CONVERT_MAX_FROM`] special primes or room for the rows.
fn push_mod_down_rows(rows: &mut Vec<u64>, ring: &RingContext) -> Option<u32> {
    let from = ring.p_count();
    let t = ring.mod_down_table(ring.q_count().checked_sub(1)?)?;
    let row0 = rows.len() / CONVERT_ROW;
    if !(2..=CONVERT_MAX_FROM).contains(&from) || row0 + ring.q_count() > CONVERT_MAX_ROWS {
        return None;
    }
    let h = t.converter.q_hat_mod_p();
    // No FP64 flags: the overflow correction is on the integer path only.
    let head = from as u64 | CONVERT_EXACT | (ring.q_count() as u64) << CONVERT_SOURCE_SHIFT;
    for (k, (&h_out, &q_mod_p)) in t.half_p_mod_q.iter().zip(t.converter.q_mod_p()).enumerate() {
        let mut row = vec![head, h_out];
        row.extend_from_slice(&h[k * from..(k + 1) * from]);
        row.resize(CONVERT_ROW - 1, 0);
        row.push(q_mod_p);
        rows.extend(row);
    }
    Some(row0 as u32)
}

/// The inverse NTT constants for mod_down's converted loads ([`TableLayout::mod_down_row0`]),
/// in the layout of [`TableLayout::mod_up_prescale`] (per slot `[c0, shoup, c2, shoup]`, then
/// an offset per slot): on the special slots the plain constants times `t^-1·p̂_i^-1` and the
/// offset `h_in·p̂_i^-1`, so the inverse NTT of `acc_P` writes the conversion's
/// `v_i = (t^-1·x_i + h_in)·p̂_i^-1 mod p_i` (BGV's `t^-1`; `t = 1` for CKKS). `None` where the
/// ring has no rows or `t` is not invertible modulo a special prime.
pub(crate) fn mod_down_prescale(ring: &RingContext, t: u64) -> Option<Vec<u64>> {
    let table = ring.mod_down_table(ring.q_count().checked_sub(1)?)?;
    if !(2..=CONVERT_MAX_FROM).contains(&ring.p_count()) {
        return None;
    }
    let s_count = ring.q_count() + ring.p_count();
    let mut v = plain_inverse_constants(ring, s_count);
    for i in 0..ring.p_count() {
        let s = ring.q_count() + i;
        let nt = ring.ntt(s);
        let m = nt.modulus();
        let phi = table.converter.q_hat_inv()[i];
        let k = m.mul(phi, m.inv(m.reduce(t)).ok()?);
        let (c0, c2) = (m.mul(nt.n_inv(), k), m.mul(nt.inverse_final_twiddle(), k));
        v[4 * s..4 * s + 4].copy_from_slice(&[c0, m.shoup(c0), c2, m.shoup(c2)]);
        v[4 * s_count + s] = m.mul(table.half_p_mod_p[i], phi);
    }
    Some(v)
}

#[cfg(test)]
mod tests;
