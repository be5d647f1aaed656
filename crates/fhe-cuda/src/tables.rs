//! The ring's precomputed tables, packed into one device buffer at `CudaBackend::new`.
//!
//! Layout (u64 words, offsets kept in [`TableLayout`]): per slot `[q, barrett_hi, barrett_lo, bits of 1/q as f64]`;
//! NTT twiddles `[slot][k]` forward, forward Shoup, inverse, inverse Shoup, then the same
//! interleaved as `[slot][k][twiddle, shoup]` pairs (one 16-byte load per twiddle in the
//! register-blocked NTT pass); per slot `[n^-1, shoup, n^-1·ψ^(-n/2), shoup]`; per level the rescale constants, the `mod_down`
//! converter (P -> Q_l) with `P^-1 mod q_i`, and for each digit the `mod_up` converter
//! (digit -> other Q slots and P) with its target slot list; the Gaussian CDT.

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
}

/// `mod_up` tables of one digit at one level.
#[derive(Clone, Debug)]
pub(crate) struct ModUpLayout {
    pub digit: Range<usize>,
    pub conv: ConvLayout,
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
    /// `[slot][k][2]`: forward twiddle and Shoup companion, interleaved (16-byte aligned).
    pub fwd_pair: usize,
    /// `[slot][k][2]`: inverse twiddle and Shoup companion, interleaved (16-byte aligned).
    pub inv_pair: usize,
    pub ntt_consts: usize,
    /// By slot: whether its NTT passes run in double precision (modulus below
    /// 2^[`NTT_F64_BITS`](crate::kernels::ntt::NTT_F64_BITS)); the launches pick their block
    /// shape by it.
    pub f64_slots: Vec<bool>,
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
    let pairs = |w: &[u64], ws: &[u64]| -> Vec<u64> {
        w.iter().zip(ws).flat_map(|(&a, &b)| [a, b]).collect()
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
        pairs(t.forward_twiddles(), t.forward_twiddles_shoup())
    });
    let inv_pair = push_all(buf, &|t| {
        pairs(t.inverse_twiddles(), t.inverse_twiddles_shoup())
    });
    let ntt_consts = push_all(buf, &|t| {
        vec![
            t.n_inv(),
            t.n_inv_shoup(),
            t.inverse_final_twiddle(),
            t.inverse_final_twiddle_shoup(),
        ]
    });
    let f64_slots = ntts
        .iter()
        .map(|t| t.modulus().value() < 1 << crate::kernels::ntt::NTT_F64_BITS)
        .collect();
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
    ConvLayout {
        q_mod_p,
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
    for level in 0..ring.q_count() {
        rescale.push(buf.len());
        for k in ring.rescale_constants(level) {
            buf.extend_from_slice(&[k.value, k.shoup]);
        }
        if let Some(t) = ring.mod_down_table(level) {
            let to: Vec<usize> = (0..=level).collect();
            mod_down.push(push_conv(
                &mut buf,
                &t.converter,
                ring.q_count(),
                &to,
                &t.half_p_mod_p,
                &t.half_p_mod_q,
                true,
            ));
            p_inv.push(buf.len());
            for k in &t.p_inv {
                buf.extend_from_slice(&[k.value, k.shoup]);
            }
        }
        let mut ups = Vec::new();
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
            ups.push(ModUpLayout {
                digit: t.digit_slots.clone(),
                conv,
            });
        }
        mod_up.push(ups);
    }
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
            cdt,
        },
    )
}
