//! The errors of `pdq`: one typed enum for parsing, planning, storage, the protocol and the
//! schemes underneath.

use std::path::PathBuf;

/// Everything that can go wrong in `pdq`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not SQL the parser understands.
    #[error("cannot parse SQL: {0}")]
    Parse(String),
    /// Valid SQL that pdq does not evaluate; the message names the construct.
    #[error("unsupported SQL: {0}")]
    Unsupported(String),
    /// `MIN` / `MAX` over the rows.
    #[error(
        "{0}() over many rows needs bootstrapping or client rounds (a comparison tournament of \
         depth log2(rows) × the comparison depth); not supported yet"
    )]
    MinMax(String),
    /// A column name that the table does not have.
    #[error("unknown column `{name}` (the table has: {known})")]
    UnknownColumn {
        /// The name asked for.
        name: String,
        /// The table's columns, comma separated.
        known: String,
    },
    /// A table name that the store does not have.
    #[error("unknown table `{0}`")]
    UnknownTable(String),
    /// A table or constant value outside the supported domain.
    #[error(
        "value `{value}` is outside the supported domain ({place}): pdq encrypts unsigned or \
         signed 32-bit integers and decimals of at most 9 places as fixed point"
    )]
    Value {
        /// The text of the value.
        value: String,
        /// Where it was found.
        place: String,
    },
    /// An expression whose exact value would not fit the plaintext modulus limb by limb.
    #[error(
        "cannot evaluate `{expr}` exactly: a limb of it can reach {range} distinct values, more \
         than the plaintext modulus t = {t} holds"
    )]
    Overflow {
        /// The expression.
        expr: String,
        /// The size of the limb's value range.
        range: u128,
        /// The plaintext modulus.
        t: u64,
    },
    /// A query that needs more multiplicative depth than the parameters have.
    #[error("the query needs {needed} levels but the parameters have {available}")]
    Depth {
        /// Levels the plan needs.
        needed: usize,
        /// Levels of the parameter set.
        available: usize,
    },
    /// A table with more rows than a ciphertext has slots, or a bad shape.
    #[error("bad table: {0}")]
    Table(String),
    /// A CSV input that cannot be read as a table.
    #[error("CSV line {line}: {why}")]
    Csv {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// A file that cannot be read or written.
    #[error("I/O on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file or blob whose content is not what it claims to be.
    #[error("invalid {what}: {why}")]
    Format {
        /// What was being read ("table file", "frame").
        what: &'static str,
        /// What is wrong.
        why: String,
    },
    /// Keys, table and query that do not belong together.
    #[error("key mismatch: {0}")]
    KeyMismatch(String),
    /// A network failure.
    #[error("network: {0}")]
    Net(#[from] std::io::Error),
    /// The peer broke the protocol.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The server answered with an error.
    #[error("server: {0}")]
    Remote(String),
    /// An error of the BGV scheme.
    #[error(transparent)]
    Bgv(#[from] bgv::Error),
    /// An error of the RLWE layer (keys, serialization).
    #[error(transparent)]
    Rlwe(#[from] rlwe::Error),
    /// An error of the comparisons.
    #[error(transparent)]
    Compare(#[from] compare::Error),
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An [`Error::Format`].
    pub fn format(what: &'static str, why: impl Into<String>) -> Self {
        Error::Format {
            what,
            why: why.into(),
        }
    }
}
