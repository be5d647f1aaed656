//! [`CompareKeys`]: the relinearization key and the Galois keys a [`crate::Comparator`] uses.

use crate::error::Result;
use crate::layout::DigitLayout;
use bgv::{Context, Evaluator, RowRotations};
use fhe_math::backend::IntegerBackend;
use rlwe::{GaloisKeys, RelinKey, SecretKey};

/// The evaluation keys of the comparisons: relinearization, and row rotations by
/// `±1, ±2, …, ±B/2` (the lexicographic combination rotates left, broadcasting a result over
/// its block rotates right); with [`CompareKeys::generate_with_sums`] also the power-of-two
/// rotations up to `N/4` and the column swap of [`crate::Comparator::sum_bits`].
pub struct CompareKeys<B: IntegerBackend> {
    /// The relinearization key.
    pub relin: RelinKey<B>,
    /// The Galois keys.
    pub galois: GaloisKeys<B>,
}

impl<B: IntegerBackend> CompareKeys<B> {
    /// The row rotation steps the comparisons and the broadcast need for `layout`:
    /// `1, 2, …, B/2` and their negatives.
    pub fn rotation_steps(layout: &DigitLayout) -> Vec<i64> {
        let mut steps = Vec::new();
        let mut s = 1i64;
        while (s as usize) < layout.block() {
            steps.push(s);
            steps.push(-s);
            s *= 2;
        }
        steps
    }

    /// The Galois elements of [`CompareKeys::rotation_steps`], plus (with `sums`) the
    /// power-of-two rotations up to `N/4` and the column swap.
    pub fn galois_elements(ctx: &Context<B>, layout: &DigitLayout, sums: bool) -> Result<Vec<u64>> {
        let eval = Evaluator::new(ctx);
        let mut steps = Self::rotation_steps(layout);
        if sums {
            let mut s = 1i64;
            while (s as usize) < layout.slot_count() / 2 {
                steps.push(s);
                s *= 2;
            }
        }
        steps.sort_unstable();
        steps.dedup();
        Ok(eval.galois_elements(&steps, sums)?)
    }

    /// The row rotation steps of [`crate::Comparator::sort`] (`sort`) or
    /// [`crate::Comparator::array_min`] of `k` words besides [`CompareKeys::rotation_steps`]:
    /// the strided sums over the ranks and over the words ([`crate::array`]); the row swap is
    /// needed as well.
    pub fn array_steps(layout: &DigitLayout, k: usize, sort: bool) -> Vec<i64> {
        let kk = k.next_power_of_two();
        let b = layout.block();
        let row = layout.slot_count() / 2;
        let (sj, si) = if sort { (kk, kk * kk) } else { (1, kk) };
        let mut steps = Vec::new();
        for stride in [sj * b, si * b] {
            let mut s = stride;
            while s < stride * kk && s < row {
                steps.push(s as i64);
                s *= 2;
            }
        }
        steps
    }

    /// Fresh keys for `layout` under `sk` (relinearization, the comparison rotations and
    /// the rotations of the sort (`sort`) or minimum of `k` words, and the row swap).
    pub fn generate_for_array(
        ctx: &Context<B>,
        sk: &SecretKey<B>,
        layout: &DigitLayout,
        k: usize,
        sort: bool,
    ) -> Result<Self> {
        let mut steps = Self::rotation_steps(layout);
        steps.extend(Self::array_steps(layout, k, sort));
        steps.sort_unstable();
        steps.dedup();
        let kg = ctx.key_generator();
        let elements = Evaluator::new(ctx).galois_elements(&steps, true)?;
        Ok(CompareKeys {
            relin: kg.relin_key(sk)?,
            galois: kg.galois_keys(sk, &elements)?,
        })
    }

    /// Fresh keys for `layout` under `sk` (relinearization and the comparison rotations).
    pub fn generate(ctx: &Context<B>, sk: &SecretKey<B>, layout: &DigitLayout) -> Result<Self> {
        Self::generate_impl(ctx, sk, layout, false)
    }

    /// [`CompareKeys::generate`] plus the keys of the slot sums.
    pub fn generate_with_sums(
        ctx: &Context<B>,
        sk: &SecretKey<B>,
        layout: &DigitLayout,
    ) -> Result<Self> {
        Self::generate_impl(ctx, sk, layout, true)
    }

    fn generate_impl(
        ctx: &Context<B>,
        sk: &SecretKey<B>,
        layout: &DigitLayout,
        sums: bool,
    ) -> Result<Self> {
        let kg = ctx.key_generator();
        let elements = Self::galois_elements(ctx, layout, sums)?;
        Ok(CompareKeys {
            relin: kg.relin_key(sk)?,
            galois: kg.galois_keys(sk, &elements)?,
        })
    }
}
