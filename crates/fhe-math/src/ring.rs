//! [`RingContext`]: the RNS ring `Z_{QP}[X]/(X^N + 1)` with every precomputed table a backend
//! needs: NTT tables per prime, the digit partition of hybrid key switching, basis converters for
//! `mod_up` / `mod_down`, and the constants of rescaling.
//!
//! Limb *slots* index the primes: `0..=L` are the ciphertext primes `q_0..q_L`, `L+1..L+1+K` the
//! special primes `p_0..p_{K-1}`. A polynomial at level `l` uses slots `0..=l`; an extended one
//! also uses the special slots.

use crate::error::{Error, Result};
use crate::galois;
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::poly::{RnsPoly, Shape};
use crate::rns::BasisConverter;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// A value `w` with its Shoup companion `floor(w·2^64/q)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShoupConst {
    /// The value.
    pub value: u64,
    /// Its Shoup companion for the slot's modulus.
    pub shoup: u64,
}

impl ShoupConst {
    fn new(m: &Modulus, value: u64) -> Self {
        ShoupConst {
            value,
            shoup: m.shoup(value),
        }
    }
}

/// `((Π primes) - 1) / 2 mod m`: the offset that centres a value of the product's range.
fn half_product_mod(primes: &[Modulus], m: &Modulus) -> Result<u64> {
    let prod = primes
        .iter()
        .fold(1 % m.value(), |acc, p| m.mul(acc, m.reduce(p.value())));
    Ok(m.mul(m.sub(prod, 1 % m.value()), m.inv(2)?))
}

/// Tables of `mod_up` for one digit at one level.
///
/// The digit `x` (an integer mod `Q_D`, the digit's primes) is raised in its centred form: the
/// conversion is applied to `x + h_D` and `h_D = (Q_D - 1)/2` is subtracted in the target
/// primes, so the raised digit lies in `[-Q_D/2, Q_D/2)` (plus the `α·Q_D` overflow). Centred
/// digits make the key-switching noise `Σ d_j·e_j` about half as large.
#[derive(Clone, Debug)]
pub struct ModUpTable {
    /// `h_D mod` each digit prime.
    pub half_mod_digit: Vec<u64>,
    /// `h_D mod` each target prime.
    pub half_mod_target: Vec<u64>,
    /// Slots of the digit (a sub-range of `0..=level`).
    pub digit_slots: Range<usize>,
    /// Slots that receive converted values: the other active `Q` slots, then the special slots.
    pub target_slots: Vec<usize>,
    /// Fast basis conversion from the digit's primes to the target primes.
    pub converter: BasisConverter,
}

/// Tables of `mod_down` at one level: `P -> Q_l` conversion, `P^-1 mod q_i`, and the
/// rounding offset `h = (P - 1) / 2` reduced modulo every prime.
///
/// `mod_down` computes `⌊(x + h) / P⌋` per coefficient (rounding, not flooring: a floor would
/// leave a bias of about 1/2 per coefficient which, multiplied by `s`, concentrates in the slots
/// near `ζ = 1` and costs about 2 bits of CKKS precision).
#[derive(Clone, Debug)]
pub struct ModDownTable {
    /// Fast basis conversion from `P` to `q_0..q_l`.
    pub converter: BasisConverter,
    /// `P^-1 mod q_i` for `i` in `0..=l`.
    pub p_inv: Vec<ShoupConst>,
    /// `h mod p_k` for every special prime.
    pub half_p_mod_p: Vec<u64>,
    /// `h mod q_i` for `i` in `0..=l`.
    pub half_p_mod_q: Vec<u64>,
}

/// The RNS ring with its precomputed tables.
#[derive(Debug)]
pub struct RingContext {
    n: usize,
    q_count: usize,
    p_count: usize,
    moduli: Vec<Modulus>,
    ntt: Vec<NttTable>,
    digits: Vec<Range<usize>>,
    /// `[level][digit]` (only the digits active at that level).
    mod_up: Vec<Vec<ModUpTable>>,
    /// `[level]`.
    mod_down: Vec<ModDownTable>,
    /// `[level][i]`: `q_level^-1 mod q_i` for `i < level` (rescale).
    q_last_inv: Vec<Vec<ShoupConst>>,
    galois_maps: Mutex<HashMap<u64, Arc<Vec<u32>>>>,
}

impl RingContext {
    /// Builds the ring of degree `n` over ciphertext primes `q` (`q_0..q_L`) and special primes
    /// `p`, with the `Q` primes split into the given consecutive digits for key switching.
    pub fn new(n: usize, q: &[u64], p: &[u64], digits: Vec<Range<usize>>) -> Result<Arc<Self>> {
        if q.is_empty() {
            return Err(Error::InvalidLevel {
                level: 0,
                reason: "at least one ciphertext prime is needed",
            });
        }
        let mut expected = 0;
        for d in &digits {
            if d.start != expected || d.end <= d.start {
                return Err(Error::ShapeMismatch {
                    what: format!("digits must partition 0..{} in order", q.len()),
                });
            }
            expected = d.end;
        }
        if expected != q.len() {
            return Err(Error::ShapeMismatch {
                what: format!("digits must partition 0..{} in order", q.len()),
            });
        }
        let moduli: Vec<Modulus> = q
            .iter()
            .chain(p)
            .map(|&v| Modulus::new(v))
            .collect::<Result<_>>()?;
        for (i, a) in moduli.iter().enumerate() {
            if moduli[..i].iter().any(|b| b == a) {
                return Err(Error::InvalidModulus {
                    modulus: a.value(),
                    reason: "primes must be distinct",
                });
            }
        }
        let ntt = moduli
            .iter()
            .map(|&m| NttTable::new(m, n))
            .collect::<Result<Vec<_>>>()?;
        let (q_count, p_count) = (q.len(), p.len());
        let q_mod = &moduli[..q_count];
        let p_mod = &moduli[q_count..];
        let p_slots: Vec<usize> = (q_count..q_count + p_count).collect();

        let mut mod_up = Vec::with_capacity(q_count);
        let mut mod_down = Vec::with_capacity(q_count);
        let mut q_last_inv = Vec::with_capacity(q_count);
        for level in 0..q_count {
            let mut tables = Vec::new();
            for d in digits.iter().filter(|d| d.start <= level) {
                let digit_slots = d.start..d.end.min(level + 1);
                let target_slots: Vec<usize> = (0..=level)
                    .filter(|s| !digit_slots.contains(s))
                    .chain(p_slots.iter().copied())
                    .collect();
                let from: Vec<Modulus> = digit_slots.clone().map(|s| moduli[s]).collect();
                let to: Vec<Modulus> = target_slots.iter().map(|&s| moduli[s]).collect();
                let converter = BasisConverter::new(&from, &to)?;
                let half_mod_digit = from
                    .iter()
                    .map(|m| half_product_mod(&from, m))
                    .collect::<Result<_>>()?;
                let half_mod_target = to
                    .iter()
                    .map(|m| half_product_mod(&from, m))
                    .collect::<Result<_>>()?;
                tables.push(ModUpTable {
                    half_mod_digit,
                    half_mod_target,
                    digit_slots,
                    target_slots,
                    converter,
                });
            }
            mod_up.push(tables);

            if p_count > 0 {
                let converter = BasisConverter::new(p_mod, &q_mod[..=level])?;
                let p_inv = q_mod[..=level]
                    .iter()
                    .map(|qi| {
                        let p_mod_qi = p_mod
                            .iter()
                            .fold(1u64, |acc, pj| qi.mul(acc, qi.reduce(pj.value())));
                        Ok(ShoupConst::new(qi, qi.inv(p_mod_qi)?))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let half_p_mod_p = p_mod
                    .iter()
                    .map(|m| half_product_mod(p_mod, m))
                    .collect::<Result<Vec<_>>>()?;
                let half_p_mod_q = q_mod[..=level]
                    .iter()
                    .map(|m| half_product_mod(p_mod, m))
                    .collect::<Result<Vec<_>>>()?;
                mod_down.push(ModDownTable {
                    converter,
                    p_inv,
                    half_p_mod_p,
                    half_p_mod_q,
                });
            }

            let ql = q_mod[level].value();
            q_last_inv.push(
                q_mod[..level]
                    .iter()
                    .map(|qi| Ok(ShoupConst::new(qi, qi.inv(qi.reduce(ql))?)))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        Ok(Arc::new(RingContext {
            n,
            q_count,
            p_count,
            moduli,
            ntt,
            digits,
            mod_up,
            mod_down,
            q_last_inv,
            galois_maps: Mutex::new(HashMap::new()),
        }))
    }

    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Top level `L` (there are `L + 1` ciphertext primes).
    pub fn max_level(&self) -> usize {
        self.q_count - 1
    }

    /// Number of ciphertext primes `L + 1`.
    pub fn q_count(&self) -> usize {
        self.q_count
    }

    /// Number of special primes `K`.
    pub fn p_count(&self) -> usize {
        self.p_count
    }

    /// Modulus of slot `s`.
    pub fn modulus(&self, slot: usize) -> &Modulus {
        &self.moduli[slot]
    }

    /// All moduli by slot (`Q` then `P`).
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// NTT table of slot `s`.
    pub fn ntt(&self, slot: usize) -> &NttTable {
        &self.ntt[slot]
    }

    /// The digit partition of the `Q` slots.
    pub fn digits(&self) -> &[Range<usize>] {
        &self.digits
    }

    /// Number of digits active at `level` (those starting at or below it).
    pub fn digits_at(&self, level: usize) -> usize {
        self.mod_up[level].len()
    }

    /// `mod_up` tables at `level`, one per active digit.
    pub fn mod_up_tables(&self, level: usize) -> &[ModUpTable] {
        &self.mod_up[level]
    }

    /// `mod_down` table at `level` (`None` without special primes).
    pub fn mod_down_table(&self, level: usize) -> Option<&ModDownTable> {
        self.mod_down.get(level)
    }

    /// `q_level^-1 mod q_i` for `i < level`, the rescale constants.
    pub fn rescale_constants(&self, level: usize) -> &[ShoupConst] {
        &self.q_last_inv[level]
    }

    /// The NTT-form index map of `X -> X^g` (cached).
    pub fn galois_map(&self, g: u64) -> Arc<Vec<u32>> {
        let mut maps = self.galois_maps.lock().unwrap_or_else(|e| e.into_inner());
        maps.entry(g)
            .or_insert_with(|| Arc::new(galois::automorphism_ntt_map(self.n, g)))
            .clone()
    }

    /// A zero host buffer of the given shape in this ring.
    pub fn zeros(&self, shape: Shape) -> Result<RnsPoly> {
        if shape.extended && self.p_count == 0 {
            return Err(Error::ShapeMismatch {
                what: "no special primes for an extended buffer".into(),
            });
        }
        RnsPoly::zeros(self.n, shape, self.q_count, self.p_count)
    }

    /// Checks that a buffer belongs to this ring (degree and capacities).
    pub fn check(&self, p: &RnsPoly) -> Result<()> {
        if p.n() != self.n
            || p.q_capacity() != self.q_count
            || (p.shape().extended && p.p_count() != self.p_count)
        {
            return Err(Error::ShapeMismatch {
                what: "buffer does not belong to this ring".into(),
            });
        }
        Ok(())
    }
}
