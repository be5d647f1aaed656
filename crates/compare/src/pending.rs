//! The non-blocking API: a comparison (or any work on the comparator) started on its own
//! thread, returned at once as a [`Pending`] handle, joined where the result is used; the
//! caller's thread goes on meanwhile (other homomorphic arithmetic, I/O, another comparison).

use crate::comparator::{Comparator, Predicate};
use crate::error::{Error, Result};
use crate::vectors::{EncryptedBits, EncryptedWords};
use fhe_math::backend::IntegerBackend;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A result being computed on another thread.
pub struct Pending<T> {
    handle: JoinHandle<Result<T>>,
}

impl<T> Pending<T> {
    /// Waits for the result. Errors: the work's own error, or [`Error::Worker`] when its
    /// thread panicked.
    pub fn join(self) -> Result<T> {
        self.handle.join().map_err(|_| Error::Worker {
            reason: "the thread computing it panicked".into(),
        })?
    }

    /// Whether the result is ready (a [`Pending::join`] would not wait).
    pub fn is_ready(&self) -> bool {
        self.handle.is_finished()
    }
}

impl<B: IntegerBackend> Comparator<B> {
    /// Runs `f` on this comparator on a new thread; returns at once.
    pub fn spawn<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Comparator<B>) -> Result<T> + Send + 'static,
    ) -> Pending<T> {
        let me = Arc::clone(self);
        Pending {
            handle: std::thread::spawn(move || f(&me)),
        }
    }

    /// [`Comparator::compare`] started on a new thread; returns at once.
    pub fn compare_async(
        self: &Arc<Self>,
        a: Arc<EncryptedWords<B>>,
        b: Arc<EncryptedWords<B>>,
        p: Predicate,
    ) -> Pending<EncryptedBits<B>> {
        self.spawn(move |c| c.compare(&a, &b, p))
    }

    /// [`Comparator::compare_scalar`] started on a new thread; returns at once.
    pub fn compare_scalar_async(
        self: &Arc<Self>,
        a: Arc<EncryptedWords<B>>,
        c: i128,
        p: Predicate,
    ) -> Pending<EncryptedBits<B>> {
        self.spawn(move |cmp| cmp.compare_scalar(&a, c, p))
    }
}
