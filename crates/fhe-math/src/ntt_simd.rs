//! The CPU backend's fast path for [`NttTable`](crate::ntt::NttTable): the negacyclic NTT of
//! the `tfhe-ntt` crate (AVX-512 with IFMA for primes below 2^51, AVX-512 or AVX2 otherwise,
//! chosen at run time), mapped onto this crate's contract.
//!
//! `tfhe-ntt` evaluates at the same points in the same bit-reversed shape but from its own
//! primitive root ψ' = ψ^r, so its output is a fixed permutation of ours:
//! `ours[i] = a(ψ^(2·brv(i)+1)) = its[order[i]]`. The permutation is found once, by transforming
//! the polynomial `X` both ways (its evaluations `ψ^(2·brv(i)+1)` are distinct). The forward
//! runs `tfhe-ntt` and gathers by `order`; the inverse gathers by the inverse permutation, then
//! runs `tfhe-ntt`'s inverse and its `n^-1` scaling. Both ends are canonical, so the results are
//! the scalar transform's bits (checked by the tests below).

use std::cell::RefCell;
use tfhe_ntt::prime64::Plan;

thread_local! {
    /// One scratch row per thread for the gathers (the transforms are in place).
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// A `tfhe-ntt` plan for one prime and degree with the permutations to and from our order.
#[derive(Clone, Debug)]
pub(crate) struct SimdNtt {
    plan: Plan,
    /// `ours[i] = its[to_ours[i]]`.
    to_ours: Vec<u32>,
    /// `its[j] = ours[to_its[j]]`.
    to_its: Vec<u32>,
}

impl SimdNtt {
    /// The plan for `q` and `n`, given `x_hat`, our forward transform of the polynomial `X`
    /// (`x_hat[i] = ψ^(2·brv(i)+1)`); `None` where `tfhe-ntt` has no plan (n < 16) or the
    /// evaluations do not match as sets (never for a prime `q ≡ 1 mod 2n`).
    pub(crate) fn new(q: u64, x_hat: &[u64]) -> Option<SimdNtt> {
        let n = x_hat.len();
        let plan = Plan::try_new(n, q)?;
        let mut its = vec![0u64; n];
        its[1] = 1;
        plan.fwd(&mut its);
        let mut by_value: Vec<(u64, u32)> = its
            .iter()
            .enumerate()
            .map(|(j, &v)| (v, j as u32))
            .collect();
        by_value.sort_unstable();
        let mut to_ours = Vec::with_capacity(n);
        let mut to_its = vec![u32::MAX; n];
        for (i, v) in x_hat.iter().enumerate() {
            let k = by_value.binary_search_by_key(v, |&(w, _)| w).ok()?;
            let j = by_value[k].1;
            if to_its[j as usize] != u32::MAX {
                return None;
            }
            to_its[j as usize] = i as u32;
            to_ours.push(j);
        }
        Some(SimdNtt {
            plan,
            to_ours,
            to_its,
        })
    }

    /// The forward transform of canonical coefficients `a`, in our order.
    pub(crate) fn forward(&self, a: &mut [u64]) {
        self.plan.fwd(a);
        gather(a, &self.to_ours);
    }

    /// The inverse transform (with the `n^-1` scaling) of canonical evaluations `a` in our order.
    pub(crate) fn inverse(&self, a: &mut [u64]) {
        gather(a, &self.to_its);
        self.plan.inv(a);
        self.plan.normalize(a);
    }
}

/// `a[i] <- a[from[i]]` for every `i`, through the thread's scratch row.
fn gather(a: &mut [u64], from: &[u32]) {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        s.clear();
        s.extend(from.iter().map(|&j| a[j as usize]));
        a.copy_from_slice(&s);
    });
}

#[cfg(test)]
mod tests {
    use crate::modulus::Modulus;
    use crate::ntt::NttTable;
    use crate::primes::ntt_primes;
    use crate::test_util::rand_poly;

    /// The vectorized forward and inverse give the scalar transforms' bits, for every degree
    /// from 16 to 2^14 and primes of 20 to 61 bits (IFMA below 2^51, the 64-bit path above), on
    /// random inputs and on the edge values 0 and q - 1.
    #[test]
    fn vectorized_transforms_match_the_scalar_ones() {
        for log_n in 4..=14u32 {
            let n = 1usize << log_n;
            for bits in [20u32, 31, 40, 46, 50, 51, 52, 55, 60, 61] {
                let Ok(primes) = ntt_primes(bits, 2 * n as u64, 2, &[]) else {
                    continue;
                };
                for q in primes {
                    let table = NttTable::new(Modulus::new(q).unwrap(), n).unwrap();
                    assert!(table.is_vectorized(), "n {n} q {q}");
                    for case in 0..3 {
                        let a: Vec<u64> = match case {
                            0 => rand_poly(q ^ n as u64, n, q),
                            1 => vec![q - 1; n],
                            _ => (0..n).map(|k| [0, q - 1][k % 2]).collect(),
                        };
                        let (mut fast, mut slow) = (a.clone(), a.clone());
                        table.forward(&mut fast);
                        table.forward_scalar(&mut slow);
                        assert_eq!(fast, slow, "forward n {n} q {q} case {case}");
                        table.inverse(&mut fast);
                        table.inverse_scalar(&mut slow);
                        assert_eq!(fast, slow, "inverse n {n} q {q} case {case}");
                        assert_eq!(fast, a, "round trip n {n} q {q} case {case}");
                    }
                }
            }
        }
    }

    /// Degrees below 16 have no `tfhe-ntt` plan and keep the scalar transform.
    #[test]
    fn small_degrees_stay_scalar() {
        for log_n in 1..4u32 {
            let n = 1usize << log_n;
            let q = ntt_primes(30, 2 * n as u64, 1, &[]).unwrap()[0];
            let table = NttTable::new(Modulus::new(q).unwrap(), n).unwrap();
            assert!(!table.is_vectorized());
            let mut a: Vec<u64> = (0..n as u64).collect();
            table.forward(&mut a);
            table.inverse(&mut a);
            assert_eq!(a, (0..n as u64).collect::<Vec<_>>());
        }
    }
}
