//! Lookup tables as test polynomials.
//!
//! For a message space of `p = 2^message_bits` values (with a padding bit) and ring degree
//! `N`, message `m` switches to the exponent `m · N / p` of `Z_2N` up to noise, and the blind
//! rotation leaves in the constant coefficient `v[φ̃]` for `φ̃ ∈ [0, N)` and `−v[φ̃ − N]` for
//! `φ̃ ∈ [N, 2N)`. The test polynomial therefore gives each message a window of `w = N / p`
//! coefficients centred on `m · w`:
//!
//! ```text
//! v[j] = Δ(f(m))        with m = floor((j + w/2) / w), when m < p
//! v[j] = −Δ(f(0)) mod q when m = p   (the top half window, j ∈ [N − w/2, N))
//! ```
//!
//! The second line is the negacyclic half: a phase of message 0 with negative noise lands in
//! `[2N − w/2, 2N)`, where the constant coefficient is `−v[φ̃ − N]`, so storing `−Δ(f(0))` at
//! the top of `v` returns `Δ(f(0))`. `Δ` is [`crate::lwe::encode`].

use crate::error::{Error, Result};
use crate::lwe::encode;
use crate::params::Parameters;

/// A lookup table over the message space, as the test polynomial of a blind rotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookupTable {
    table: Vec<u64>,
    test_poly: Vec<u64>,
}

impl LookupTable {
    /// The table `m ↦ table[m]` for `m ∈ [0, p)`; entries must be below `p`.
    pub fn new(params: &Parameters, table: &[u64]) -> Result<Self> {
        params.validate()?;
        let p = params.message_space();
        if table.len() as u64 != p {
            return Err(Error::InvalidLookupTable {
                reason: format!("{} entries for a message space of {p}", table.len()),
            });
        }
        if let Some(&bad) = table.iter().find(|&&v| v >= p) {
            return Err(Error::InvalidLookupTable {
                reason: format!("entry {bad} is outside the message space 0..{p}"),
            });
        }
        let q = params.q()?;
        let n = params.ring_degree as u64;
        let w = n / p;
        let test_poly = (0..n)
            .map(|j| {
                let m = (j + w / 2) / w;
                if m < p {
                    encode(table[m as usize], p, q.value())
                } else {
                    q.neg(encode(table[0], p, q.value()))
                }
            })
            .collect();
        Ok(LookupTable {
            table: table.to_vec(),
            test_poly,
        })
    }

    /// The table from a function on the message space (its values reduced mod `p`).
    pub fn from_fn(params: &Parameters, f: impl Fn(u64) -> u64) -> Result<Self> {
        params.validate()?;
        let p = params.message_space();
        let table: Vec<u64> = (0..p).map(|m| f(m) % p).collect();
        Self::new(params, &table)
    }

    /// The table's entries.
    pub fn table(&self) -> &[u64] {
        &self.table
    }

    /// The test polynomial (`N` residues mod `q`).
    pub fn test_polynomial(&self) -> &[u64] {
        &self.test_poly
    }
}
