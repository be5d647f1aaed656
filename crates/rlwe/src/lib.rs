//! rlwe
