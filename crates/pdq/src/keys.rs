//! Keys: the client's secret key and the server's evaluation keys (relinearization and the
//! rotations of the slot sums and of the comparisons), both tagged with a random 128-bit key
//! id that tables and queries carry, so a table or query of another key is refused by name.

use crate::blob;
use crate::cmp;
use crate::error::{Error, Result};
use bgv::rotations::RowRotations;
use bgv::{Context, Evaluator, Parameters, ParametersLiteral};
use compare::{Comparator, CompareKeys};
use fhe_math::backend::IntegerBackend;
use rlwe::serialize as ser;
use rlwe::{GaloisKeys, RelinKey, SecretKey};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// A key id: 16 random bytes drawn at key generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeyId(pub [u8; 16]);

impl std::fmt::Display for KeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl KeyId {
    /// A fresh random id.
    pub fn random() -> Result<Self> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id)
            .map_err(|e| Error::Protocol(format!("no randomness for a key id: {e}")))?;
        Ok(KeyId(id))
    }
}

/// Magic of the client key file.
pub const CLIENT_MAGIC: [u8; 4] = *b"PDQK";
/// Magic of the evaluation key file.
pub const EVAL_MAGIC: [u8; 4] = *b"PDQE";
/// Largest evaluation key file read (64 GiB).
pub const MAX_EVAL_FILE: u64 = 64 << 30;

/// The client's keys: parameters, secret key, key id.
pub struct ClientKey<B: IntegerBackend> {
    /// Key id.
    pub id: KeyId,
    /// The parameter literal (public).
    pub literal: ParametersLiteral,
    /// Most rows a table of this key may have (the slot sums' rotations are made for it).
    pub max_rows: usize,
    /// The secret key.
    pub sk: SecretKey<B>,
}

/// The server's evaluation keys, inside the comparator that uses them.
pub struct ServerKeys<B: IntegerBackend> {
    /// Key id.
    pub id: KeyId,
    /// Most rows of a table.
    pub max_rows: usize,
    /// The comparator (owning the relinearization and rotation keys).
    pub cmp: Comparator<B>,
}

#[derive(Serialize, Deserialize)]
struct ClientKeyFile {
    id: KeyId,
    literal: ParametersLiteral,
    max_rows: usize,
    sk: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct EvalKeyFile {
    id: KeyId,
    literal: ParametersLiteral,
    max_rows: usize,
    rlk: Vec<u8>,
    galois: Vec<u8>,
}

/// The parameters of a literal.
pub fn parameters(literal: &ParametersLiteral) -> Result<Arc<Parameters>> {
    Ok(Parameters::new(literal)?)
}

/// Row rotations of the slot sums of up to `rows` rows whose values sit every `stride`
/// slots: `stride·1, stride·2, stride·4, …` below `stride·rows` rounded up to a power of two.
pub fn sum_steps(rows: usize, stride: usize) -> Vec<i64> {
    (0..rows.next_power_of_two().trailing_zeros())
        .map(|k| (stride as i64) << k)
        .collect()
}

impl<B: IntegerBackend> ServerKeys<B> {
    /// The relinearization key.
    pub fn rlk(&self) -> &RelinKey<B> {
        &self.cmp.keys().relin
    }

    /// The rotation keys.
    pub fn galois(&self) -> &GaloisKeys<B> {
        &self.cmp.keys().galois
    }

    /// Slots between two rows' values (the comparison block).
    pub fn stride(&self) -> usize {
        self.cmp.layout().block()
    }
}

fn server_keys<B: IntegerBackend>(
    ctx: &Context<B>,
    id: KeyId,
    max_rows: usize,
    relin: RelinKey<B>,
    galois: GaloisKeys<B>,
) -> Result<ServerKeys<B>> {
    let layout = cmp::layout(ctx.params().n())?;
    Ok(ServerKeys {
        id,
        max_rows,
        cmp: Comparator::new(ctx, layout, CompareKeys { relin, galois })?,
    })
}

/// Generates a key pair for tables of up to `max_rows` rows.
pub fn generate<B: IntegerBackend>(
    ctx: &Context<B>,
    literal: &ParametersLiteral,
    max_rows: usize,
) -> Result<(ClientKey<B>, ServerKeys<B>)> {
    let n = ctx.params().n();
    let limit = cmp::max_rows(ctx.params().t());
    if max_rows == 0 || max_rows > limit {
        return Err(Error::Table(format!(
            "{max_rows} rows: 1..={limit} (a column sum of 1-bit limbs stays below t = {})",
            ctx.params().t()
        )));
    }
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let rlk = kg.relin_key(&sk)?;
    let eval = Evaluator::new(ctx);
    let layout = cmp::layout(n)?;
    // The slot sums (over one matrix row, then the column swap when a chunk fills both),
    // and the shifts by 1..B−1 slots right that pack sums into a block.
    let row_blocks = n / 2 / layout.block();
    let mut steps = sum_steps(max_rows.min(row_blocks), layout.block());
    steps.extend((1..layout.block() as i64).map(|j| -j));
    let mut elements = eval.galois_elements(&steps, max_rows > row_blocks)?;
    elements.extend(CompareKeys::<B>::galois_elements(ctx, &layout, false)?);
    elements.sort_unstable();
    elements.dedup();
    let galois = kg.galois_keys(&sk, &elements)?;
    let id = KeyId::random()?;
    Ok((
        ClientKey {
            id,
            literal: literal.clone(),
            max_rows,
            sk,
        },
        server_keys(ctx, id, max_rows, rlk, galois)?,
    ))
}

impl<B: IntegerBackend> ClientKey<B> {
    /// Writes the client key file (keep it secret).
    pub fn save(&self, path: &Path) -> Result<()> {
        let file = ClientKeyFile {
            id: self.id,
            literal: self.literal.clone(),
            max_rows: self.max_rows,
            sk: ser::secret_key_to_bytes(&self.sk)?.to_vec(),
        };
        blob::write_atomic(path, &blob::encode("client key file", CLIENT_MAGIC, &file)?)
    }

    /// Reads a client key file; `make_ctx` builds the context on a backend.
    pub fn load(
        path: &Path,
        make_ctx: impl FnOnce(Arc<Parameters>) -> Result<Context<B>>,
    ) -> Result<(Context<B>, Self)> {
        let f: ClientKeyFile = blob::read_file("client key file", CLIENT_MAGIC, path, 1 << 20)?;
        let ctx = make_ctx(parameters(&f.literal)?)?;
        let fp = ctx.params().fingerprint();
        let sk = ser::secret_key_from_bytes(ctx.backend(), fp, &f.sk)?;
        Ok((
            ctx,
            ClientKey {
                id: f.id,
                literal: f.literal,
                max_rows: f.max_rows,
                sk,
            },
        ))
    }
}

impl<B: IntegerBackend> ServerKeys<B> {
    /// Writes the evaluation key file for `literal`.
    pub fn save(&self, ctx: &Context<B>, literal: &ParametersLiteral, path: &Path) -> Result<()> {
        let be = ctx.backend();
        let file = EvalKeyFile {
            id: self.id,
            literal: literal.clone(),
            max_rows: self.max_rows,
            rlk: ser::relin_key_to_bytes(be, self.rlk())?,
            galois: ser::galois_keys_to_bytes(be, self.galois())?,
        };
        blob::write_atomic(
            path,
            &blob::encode("evaluation key file", EVAL_MAGIC, &file)?,
        )
    }

    /// Reads an evaluation key file; `make_ctx` builds the context on a backend.
    pub fn load(
        path: &Path,
        make_ctx: impl FnOnce(Arc<Parameters>) -> Result<Context<B>>,
    ) -> Result<(Context<B>, Self)> {
        let f: EvalKeyFile =
            blob::read_file("evaluation key file", EVAL_MAGIC, path, MAX_EVAL_FILE)?;
        let ctx = make_ctx(parameters(&f.literal)?)?;
        let fp = ctx.params().fingerprint();
        let be = ctx.backend();
        let rlk = ser::relin_key_from_bytes(be, fp, &f.rlk)?;
        let galois = ser::galois_keys_from_bytes(be, fp, &f.galois)?;
        let keys = server_keys(&ctx, f.id, f.max_rows, rlk, galois)?;
        Ok((ctx, keys))
    }
}
