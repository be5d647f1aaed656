//! Plaintext encodings modulo `t`, independent of the scheme (shared with a later `bfv`).
//!
//! A plaintext is a polynomial `m ∈ Z_t[X]/(X^N + 1)`, held as its `N` coefficients in
//! `[0, t)`. Two encodings map user values to it:
//! - **coefficients** ([`PlainModulus::encode_coeffs`]): value `i` is coefficient `i`; any
//!   `t >= 2`;
//! - **slots** (batching) through a [`SlotStructure`]. For a prime `t ≡ 1 (mod 2N)`,
//!   [`PrimeFieldSlots`] gives `N` slots in `Z_t`: `X^N + 1` splits into linear factors and slot
//!   `(r, j)` holds `m(ψ^{±3^j})` for a primitive `2N`-th root `ψ` mod `t` (`+` in row 0, `-` in
//!   row 1), so the slots form a `2 × N/2` matrix; the automorphism `X -> X^{3^k}` rotates both
//!   rows left by `k` and `X -> X^{-1}` swaps the rows.
//!
//! The slot structure is a trait so that slots in an extension field `GF(t^d)` (for `t` not
//! `≡ 1 mod 2N`, as HElib-style comparison circuits use) can be added later without touching
//! the schemes: they only see coefficient vectors mod `t` and Galois elements.

use crate::error::{Error, Result};
use fhe_math::galois;
use fhe_math::ntt::NttTable;
use fhe_math::{Modulus, primes};
use std::fmt;
use std::sync::Arc;

/// How slots sit in the plaintext ring: encoding, decoding and the Galois elements of the slot
/// permutations.
pub trait SlotStructure: Send + Sync + fmt::Debug {
    /// Number of slots.
    fn slot_count(&self) -> usize;
    /// Coefficients mod `t` of the plaintext whose slots hold `values` (each `< t`; exactly
    /// [`slot_count`](Self::slot_count) of them).
    fn encode(&self, values: &[u64]) -> Vec<u64>;
    /// The slot values of the plaintext with coefficients `coeffs` (each `< t`, `N` of them).
    fn decode(&self, coeffs: &[u64]) -> Vec<u64>;
    /// The Galois element rotating every row left by `step` (negative: right).
    fn row_rotation_element(&self, step: i64) -> u64;
    /// The Galois element swapping the two rows.
    fn column_swap_element(&self) -> u64;
    /// Length of a row (the rotation period).
    fn row_size(&self) -> usize;
    /// When the slot values are read from the forward negacyclic NTT modulo `t` of the
    /// coefficients ([`NttTable::forward`]'s output), that table and, per slot, its position in
    /// the output; then a backend can run the transform where the message is (decryption on
    /// the GPU). `None` (the default) for other structures.
    fn ntt_form(&self) -> Option<(&NttTable, &[usize])> {
        None
    }
}

fn bit_reverse(k: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        k.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Generator of the row rotations (`X -> X^{3^k}` rotates rows left by `k`).
pub const ROW_GENERATOR: u64 = 3;

/// `N` slots in `Z_t` for a prime `t ≡ 1 (mod 2N)`, as a `2 × N/2` matrix (module docs).
pub struct PrimeFieldSlots {
    n: usize,
    table: NttTable,
    /// `ntt_index[k]`: the position, in the output of [`NttTable::forward`], of slot `k`
    /// (`k < N/2`: row 0, column `k`; `k >= N/2`: row 1, column `k - N/2`).
    ntt_index: Vec<usize>,
}

impl fmt::Debug for PrimeFieldSlots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrimeFieldSlots")
            .field("n", &self.n)
            .field("t", &self.table.modulus().value())
            .finish()
    }
}

impl PrimeFieldSlots {
    /// The slots of degree `n` for the prime `t ≡ 1 (mod 2n)`.
    pub fn new(n: usize, t: u64) -> Result<Self> {
        let no = || Error::NoBatching {
            op: "build batching slots",
            t,
            n,
        };
        if !n.is_power_of_two()
            || n < 4
            || !primes::is_prime(t)
            || !(t - 1).is_multiple_of(2 * n as u64)
        {
            return Err(no());
        }
        let table = NttTable::new(Modulus::new(t)?, n)?;
        let log_n = n.trailing_zeros();
        let two_n = 2 * n as u64;
        let half = n / 2;
        // Forward NTT position i holds m(ψ^{2·brv(i)+1}): exponent e sits at brv((e-1)/2).
        let pos = |e: u64| bit_reverse(((e - 1) / 2) as usize, log_n);
        let mut ntt_index = vec![0usize; n];
        let mut e = 1u64;
        for j in 0..half {
            ntt_index[j] = pos(e);
            ntt_index[half + j] = pos(two_n - e);
            e = e * ROW_GENERATOR % two_n;
        }
        Ok(PrimeFieldSlots {
            n,
            table,
            ntt_index,
        })
    }
}

impl SlotStructure for PrimeFieldSlots {
    fn slot_count(&self) -> usize {
        self.n
    }

    fn encode(&self, values: &[u64]) -> Vec<u64> {
        let mut a = vec![0u64; self.n];
        for (&v, &i) in values.iter().zip(&self.ntt_index) {
            a[i] = v;
        }
        self.table.inverse(&mut a);
        a
    }

    fn decode(&self, coeffs: &[u64]) -> Vec<u64> {
        let mut a = coeffs.to_vec();
        self.table.forward(&mut a);
        let t = self.table.modulus();
        self.ntt_index.iter().map(|&i| t.reduce(a[i])).collect()
    }

    fn row_rotation_element(&self, step: i64) -> u64 {
        galois::galois_element(ROW_GENERATOR, step, self.n)
    }

    fn column_swap_element(&self) -> u64 {
        galois::galois_element_conjugate(self.n)
    }

    fn ntt_form(&self) -> Option<(&NttTable, &[usize])> {
        Some((&self.table, &self.ntt_index))
    }

    fn row_size(&self) -> usize {
        self.n / 2
    }
}

/// What [`PlainModulus::encode_slots_with`] hands to its lift.
pub enum SlotInput<'a> {
    /// The slot values in the order of the table's forward output; the message is their
    /// inverse transform.
    NttOrder(&'a NttTable, Vec<u64>),
    /// The message's coefficients mod `t`.
    Coeffs(Vec<u64>),
}

/// The plaintext modulus `t` with its encodings (coefficients always; slots when available).
#[derive(Clone, Debug)]
pub struct PlainModulus {
    n: usize,
    t: Modulus,
    slots: Option<Arc<dyn SlotStructure>>,
}

impl PlainModulus {
    /// `t` for ring degree `n`, with [`PrimeFieldSlots`] when `t` is a prime `≡ 1 (mod 2n)`.
    pub fn new(n: usize, t: u64) -> Result<Self> {
        let slots = PrimeFieldSlots::new(n, t)
            .ok()
            .map(|s| Arc::new(s) as Arc<dyn SlotStructure>);
        Ok(PlainModulus {
            n,
            t: Modulus::new(t)?,
            slots,
        })
    }

    /// `t` with a caller-provided slot structure (e.g. extension-field slots).
    pub fn with_slots(n: usize, t: u64, slots: Arc<dyn SlotStructure>) -> Result<Self> {
        Ok(PlainModulus {
            n,
            t: Modulus::new(t)?,
            slots: Some(slots),
        })
    }

    /// The modulus `t`.
    pub fn modulus(&self) -> &Modulus {
        &self.t
    }

    /// The value of `t`.
    pub fn t(&self) -> u64 {
        self.t.value()
    }

    /// The ring degree `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The slot structure, or an error naming `op` when `t` allows no batching.
    pub fn slots(&self, op: &'static str) -> Result<&Arc<dyn SlotStructure>> {
        self.slots.as_ref().ok_or(Error::NoBatching {
            op,
            t: self.t(),
            n: self.n,
        })
    }

    /// Whether slots are available.
    pub fn has_slots(&self) -> bool {
        self.slots.is_some()
    }

    fn check_unsigned(&self, values: &[u64], room: usize) -> Result<()> {
        if values.len() > room {
            return Err(Error::TooManyValues {
                given: values.len(),
                slots: room,
            });
        }
        self.check_message(values)
    }

    /// Reduces signed values into `[0, t)` (any `i64`; encodings use [`Self::signed_to_unsigned`],
    /// which refuses values outside the centred range instead).
    pub fn reduce_signed(&self, values: &[i64]) -> Vec<u64> {
        values.iter().map(|&v| self.t.reduce_i64(v)).collect()
    }

    /// The representatives in `[0, t)` of signed values in the centred range `(-t/2, t/2]`
    /// (the inverse of [`Self::center`]); [`Error::SignedValueOutOfRange`] for any other value.
    pub fn signed_to_unsigned(&self, values: &[i64]) -> Result<Vec<u64>> {
        let t = self.t();
        let inside = |v: i64| {
            let twice = 2 * i128::from(v);
            twice > -i128::from(t) && twice <= i128::from(t)
        };
        if let Some(&value) = values.iter().find(|&&v| !inside(v)) {
            return Err(Error::SignedValueOutOfRange { value, t });
        }
        Ok(self.reduce_signed(values))
    }

    /// Checks message coefficients: each below `t` ([`Error::ValueOutOfRange`] otherwise).
    pub fn check_message(&self, coeffs: &[u64]) -> Result<()> {
        match coeffs.iter().find(|&&v| v >= self.t()) {
            Some(&value) => Err(Error::ValueOutOfRange { value, t: self.t() }),
            None => Ok(()),
        }
    }

    /// The centred representative of `x mod t` in `(-t/2, t/2]`.
    pub fn center(&self, x: u64) -> i64 {
        let t = self.t();
        if x > t / 2 {
            x as i64 - t as i64
        } else {
            x as i64
        }
    }

    /// Coefficients of the plaintext whose slots hold `values` (each `< t`; missing ones are 0).
    pub fn encode_slots(&self, values: &[u64]) -> Result<Vec<u64>> {
        let slots = self.slots("encode into slots")?;
        self.check_unsigned(values, slots.slot_count())?;
        let mut v = values.to_vec();
        v.resize(slots.slot_count(), 0);
        Ok(slots.encode(&v))
    }

    /// Slot values of the plaintext with coefficients `coeffs`.
    pub fn decode_slots(&self, coeffs: &[u64]) -> Result<Vec<u64>> {
        let slots = self.slots("decode slots")?;
        self.check_coeffs(coeffs)?;
        Ok(slots.decode(coeffs))
    }

    /// Encodes slot values with `lift`: with prime-field slots ([`SlotStructure::ntt_form`]) it
    /// gets the NTT table and the values placed in [`NttTable::forward`]'s order (missing ones
    /// 0), and must run the inverse transform itself (a backend can do it on the device);
    /// otherwise it gets the coefficients computed here. Values are checked (`< t`, at most
    /// the slot count) first.
    pub fn encode_slots_with<T>(
        &self,
        values: &[u64],
        lift: impl FnOnce(SlotInput<'_>) -> Result<T>,
    ) -> Result<T> {
        let slots = self.slots("encode into slots")?;
        match slots.ntt_form() {
            Some((ntt, index)) => {
                self.check_unsigned(values, slots.slot_count())?;
                let mut a = vec![0u64; self.n];
                for (&v, &i) in values.iter().zip(index) {
                    a[i] = v;
                }
                lift(SlotInput::NttOrder(ntt, a))
            }
            None => lift(SlotInput::Coeffs(self.encode_slots(values)?)),
        }
    }

    /// The slot values of a decrypted message, where `decode(ntt)` decodes it: with
    /// `Some(table)` (slots read from the NTT modulo `t`, [`SlotStructure::ntt_form`]) it must
    /// return the transformed message, which is then only gathered; with `None` the
    /// coefficients, which are decoded here.
    pub fn decode_slots_with(
        &self,
        decode: impl FnOnce(Option<&NttTable>) -> Result<Vec<u64>>,
    ) -> Result<Vec<u64>> {
        let slots = self.slots("decode slots")?;
        match slots.ntt_form() {
            Some((ntt, index)) => {
                let v = decode(Some(ntt))?;
                self.check_coeffs(&v)?;
                Ok(index.iter().map(|&i| v[i]).collect())
            }
            None => self.decode_slots(&decode(None)?),
        }
    }

    /// Coefficient encoding: `values[i]` (each `< t`) is coefficient `i`; missing ones are 0.
    pub fn encode_coeffs(&self, values: &[u64]) -> Result<Vec<u64>> {
        self.check_unsigned(values, self.n)?;
        let mut v = values.to_vec();
        v.resize(self.n, 0);
        Ok(v)
    }

    fn check_coeffs(&self, coeffs: &[u64]) -> Result<()> {
        if coeffs.len() != self.n {
            return Err(Error::TooManyValues {
                given: coeffs.len(),
                slots: self.n,
            });
        }
        self.check_message(coeffs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn negacyclic_automorphism(a: &[u64], g: u64, t: &Modulus) -> Vec<u64> {
        let mut out = vec![0; a.len()];
        galois::automorphism_coeff(a, g, t, &mut out);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn round_trip_and_rotations(seed in any::<u64>(), step in -600i64..600) {
            let n = 1024;
            let pm = PlainModulus::new(n, 65537).unwrap();
            let v = test_support::random_values(seed, n, 65537);
            let c = pm.encode_slots(&v).unwrap();
            prop_assert_eq!(pm.decode_slots(&c).unwrap(), v.clone());
            let slots = pm.slots("test").unwrap();
            // Row rotation = cyclic shift of each row.
            let g = slots.row_rotation_element(step);
            let r = pm.decode_slots(&negacyclic_automorphism(&c, g, pm.modulus())).unwrap();
            let half = n / 2;
            for row in 0..2 {
                for j in 0..half {
                    let src = (j as i64 + step).rem_euclid(half as i64) as usize;
                    prop_assert_eq!(r[row * half + j], v[row * half + src]);
                }
            }
            // Column swap.
            let g = slots.column_swap_element();
            let s = pm.decode_slots(&negacyclic_automorphism(&c, g, pm.modulus())).unwrap();
            for j in 0..half {
                prop_assert_eq!(s[j], v[half + j]);
                prop_assert_eq!(s[half + j], v[j]);
            }
        }
    }

    #[test]
    fn slot_products_are_polynomial_products() {
        let n = 1024;
        let pm = PlainModulus::new(n, 65537).unwrap();
        let t = pm.modulus();
        let a: Vec<u64> = (0..n as u64).map(|i| i * 7 % 65537).collect();
        let b: Vec<u64> = (0..n as u64).map(|i| (i * i + 3) % 65537).collect();
        let (ca, cb) = (pm.encode_slots(&a).unwrap(), pm.encode_slots(&b).unwrap());
        // Negacyclic schoolbook product.
        let mut prod = vec![0u64; n];
        for i in 0..n {
            for j in 0..n {
                let p = t.mul(ca[i], cb[j]);
                if i + j < n {
                    prod[i + j] = t.add(prod[i + j], p);
                } else {
                    prod[i + j - n] = t.sub(prod[i + j - n], p);
                }
            }
        }
        let slots = pm.decode_slots(&prod).unwrap();
        for k in 0..n {
            assert_eq!(slots[k], t.mul(a[k], b[k]));
        }
    }

    #[test]
    fn errors() {
        let pm = PlainModulus::new(1024, 65537).unwrap();
        assert!(matches!(
            pm.encode_slots(&[65537]),
            Err(Error::ValueOutOfRange { .. })
        ));
        assert!(matches!(
            pm.encode_slots(&vec![0; 1025]),
            Err(Error::TooManyValues { .. })
        ));
        assert!(pm.decode_slots(&[0; 3]).is_err());
        let pm = PlainModulus::new(1024, 256).unwrap();
        assert!(!pm.has_slots());
        assert!(matches!(
            pm.encode_slots(&[1]),
            Err(Error::NoBatching { .. })
        ));
        assert_eq!(pm.encode_coeffs(&[255, 3]).unwrap()[..3], [255, 3, 0]);
        assert_eq!(pm.center(255), -1);
        assert_eq!(pm.center(128), 128);
    }
}
