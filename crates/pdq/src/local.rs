//! The whole query flow in one process (client and server sharing no state but the
//! ciphertexts): the demo, the tests and the benchmarks use it.

use crate::client::Reciprocals;
use crate::cmp::Words;
use crate::encrypted::EncTable;
use crate::engine::{Engine, Response, Stage};
use crate::error::Result;
use crate::keys::ServerKeys;
use crate::plan::Plan;
use crate::sql;
use crate::{Client, QueryResult};
use bgv::{Ciphertext, Evaluator};
use fhe_math::backend::IntegerBackend;
use std::time::{Duration, Instant};

/// Where the time of one query went.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    /// Client: parsing, planning, encrypting the constants.
    pub encrypt: Duration,
    /// Server: the evaluation (both halves of a division).
    pub compute: Duration,
    /// Client: the reciprocals of a division round trip.
    pub round_trip: Duration,
    /// Client: decrypting and decoding the answer.
    pub decrypt: Duration,
}

impl Timings {
    /// The whole task.
    pub fn total(&self) -> Duration {
        self.encrypt + self.compute + self.round_trip + self.decrypt
    }
}

/// Runs `text` (SQL; `FROM` defaults to the table) as client and server in one process.
pub fn run<B: IntegerBackend>(
    client: &Client<B>,
    server: &Evaluator<B>,
    keys: &ServerKeys<B>,
    table: &EncTable<B>,
    text: &str,
) -> Result<(QueryResult, Plan, Timings)> {
    run_with(client, server, keys, table, text, false)
}

/// Serializes and reloads ciphertexts (what crossing the wire costs, without a socket).
fn through_bytes<B: IntegerBackend>(
    ctx: &bgv::Context<B>,
    cts: Vec<Ciphertext<B>>,
) -> Result<Vec<Ciphertext<B>>> {
    cts.iter()
        .map(|c| Ok(Ciphertext::from_bytes(ctx, &c.to_bytes(ctx)?)?))
        .collect()
}

/// [`run`]; with `wire`, every message (constants, denominators, reciprocals, answer) is
/// serialized and reloaded on its way, as over the network (counted in the client's and the
/// server's times: the "full task" of the benchmarks).
pub fn run_with<B: IntegerBackend>(
    client: &Client<B>,
    server: &Evaluator<B>,
    keys: &ServerKeys<B>,
    table: &EncTable<B>,
    text: &str,
    wire: bool,
) -> Result<(QueryResult, Plan, Timings)> {
    let ctx = server.context();
    let hop = |cts: Vec<Ciphertext<B>>| -> Result<Vec<Ciphertext<B>>> {
        if wire {
            through_bytes(ctx, cts)
        } else {
            Ok(cts)
        }
    };
    let mut times = Timings::default();
    let t0 = Instant::now();
    let parsed = sql::parse(text, &table.name)?;
    let engine = Engine::new(server, keys, table)?;
    let plan = engine.plan(&parsed.query)?;
    let constants = client
        .encrypt_constants(&plan.constant_words(&parsed.constants)?, table.rows)?
        .into_iter()
        .map(|w| {
            let len = w.0.len();
            Words::from_ciphertexts(ctx, hop(w.0.into_ciphertexts())?, len)
        })
        .collect::<Result<Vec<_>>>()?;
    times.encrypt = t0.elapsed();
    let t1 = Instant::now();
    let stage = engine.start(&parsed.query, &constants)?;
    times.compute = t1.elapsed();
    let (response, memory) = match stage {
        Stage::Done(r) => (r, Reciprocals::default()),
        Stage::NeedReciprocals {
            pending,
            denominators,
        } => {
            let t2 = Instant::now();
            let denominators = denominators
                .into_iter()
                .map(&hop)
                .collect::<Result<Vec<_>>>()?;
            let (recips, memory) = client.reciprocals(&plan, &denominators)?;
            let recips = recips.into_iter().map(&hop).collect::<Result<Vec<_>>>()?;
            times.round_trip = t2.elapsed();
            let t3 = Instant::now();
            let r = engine.finish(pending, recips)?;
            times.compute += t3.elapsed();
            (r, memory)
        }
    };
    let t4 = Instant::now();
    let response = Response {
        mask: hop(response.mask)?,
        sums: hop(response.sums)?,
        items: response
            .items
            .into_iter()
            .map(&hop)
            .collect::<Result<_>>()?,
    };
    let result = client.decode(&plan, &response, &memory)?;
    times.decrypt = t4.elapsed();
    Ok((result, plan, times))
}
