//! The server: the evaluation keys and encrypted tables of a store directory, served over TCP
//! to many clients at once (a thread per connection, up to a limit), every failure answered
//! with an `Error` frame while the server keeps serving.
//!
//! Store layout: `<store>/eval.pdqe` (evaluation keys) and `<store>/tables/<name>.pdqt`.

use crate::cmp::Words;
use crate::encrypted::EncTable;
use crate::engine::{Engine, Response, Stage};
use crate::error::{Error, Result};
use crate::keys::ServerKeys;
use crate::protocol::{Blobs, DEFAULT_MAX_FRAME, Reply, Request, read_frame, write_frame};
use bgv::{Ciphertext, Context, Evaluator, Parameters};
use fhe_math::backend::IntegerBackend;
use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The evaluation key file of a store.
pub fn eval_key_path(store: &Path) -> PathBuf {
    store.join("eval.pdqe")
}

/// The file of table `name` in a store.
pub fn table_path(store: &Path, name: &str) -> PathBuf {
    store.join("tables").join(format!("{name}.pdqt"))
}

/// Limits of a server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request frame (payload bytes).
    pub max_frame: u64,
    /// Most connections served at once (more are answered with an error and closed).
    pub max_connections: usize,
    /// Read/write timeout of a connection.
    pub io_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame: DEFAULT_MAX_FRAME,
            max_connections: 64,
            io_timeout: Duration::from_secs(600),
        }
    }
}

/// A server's state.
pub struct Server<B: IntegerBackend> {
    eval: Evaluator<B>,
    keys: ServerKeys<B>,
    tables: BTreeMap<String, EncTable<B>>,
    limits: Limits,
    active: AtomicUsize,
}

fn blobs<B: IntegerBackend>(ctx: &Context<B>, cts: &[Ciphertext<B>]) -> Result<Blobs> {
    cts.iter().map(|c| Ok(c.to_bytes(ctx)?)).collect()
}

/// Ciphertexts from blobs (each checked against the parameters).
pub fn from_blobs<B: IntegerBackend>(ctx: &Context<B>, b: &Blobs) -> Result<Vec<Ciphertext<B>>> {
    b.iter()
        .map(|x| Ok(Ciphertext::from_bytes(ctx, x)?))
        .collect()
}

impl<B: IntegerBackend> Server<B> {
    /// A server for these keys and tables.
    pub fn new(
        ctx: &Context<B>,
        keys: ServerKeys<B>,
        tables: Vec<EncTable<B>>,
        limits: Limits,
    ) -> Self {
        Server {
            eval: Evaluator::new(ctx),
            keys,
            tables: tables.into_iter().map(|t| (t.name.clone(), t)).collect(),
            limits,
            active: AtomicUsize::new(0),
        }
    }

    /// Loads a store directory; `make_ctx` builds the context on a backend. Every table is
    /// validated; a table of another key is loaded but refused at query time.
    pub fn open(
        store: &Path,
        limits: Limits,
        make_ctx: impl FnOnce(Arc<Parameters>) -> Result<Context<B>>,
    ) -> Result<Self> {
        let (ctx, keys) = ServerKeys::load(&eval_key_path(store), make_ctx)?;
        let dir = store.join("tables");
        let mut tables = Vec::new();
        if dir.exists() {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| Error::io(&dir, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "pdqt"))
                .collect();
            paths.sort();
            for p in paths {
                tables.push(EncTable::load(&ctx, &p, None)?);
            }
        }
        Ok(Self::new(&ctx, keys, tables, limits))
    }

    /// The table names.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
    }

    fn ctx(&self) -> &Context<B> {
        self.eval.context()
    }

    fn table(&self, name: &str) -> Result<&EncTable<B>> {
        self.tables
            .get(name)
            .ok_or_else(|| Error::UnknownTable(name.to_string()))
    }

    /// Accepts connections forever, a thread each.
    pub fn serve(self: Arc<Self>, listener: TcpListener) -> Result<()> {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let server = Arc::clone(&self);
            std::thread::spawn(move || server.connection(stream));
        }
        Ok(())
    }

    /// Serves one connection until it closes (errors are answered, then the loop goes on,
    /// except after a broken frame, where the stream cannot be resynchronized).
    pub fn connection(&self, mut stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(self.limits.io_timeout));
        let _ = stream.set_write_timeout(Some(self.limits.io_timeout));
        let n = self.active.fetch_add(1, Ordering::SeqCst);
        if n >= self.limits.max_connections {
            let _ = write_frame(
                &mut stream,
                &Reply::Error {
                    message: format!(
                        "server busy: {} connections (limit {})",
                        n, self.limits.max_connections
                    ),
                },
            );
        } else {
            loop {
                let request = match read_frame::<Request>(&mut stream, self.limits.max_frame) {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(e) => {
                        let _ = write_frame(
                            &mut stream,
                            &Reply::Error {
                                message: e.to_string(),
                            },
                        );
                        break;
                    }
                };
                let reply = self
                    .handle(request, &mut stream)
                    .unwrap_or_else(|e| Reply::Error {
                        message: e.to_string(),
                    });
                if write_frame(&mut stream, &reply).is_err() {
                    break;
                }
            }
        }
        self.active.fetch_sub(1, Ordering::SeqCst);
    }

    fn handle(&self, request: Request, stream: &mut TcpStream) -> Result<Reply> {
        match request {
            Request::Describe { table } => {
                let t = self.table(&table)?;
                Ok(Reply::Shape {
                    key: t.key_id,
                    columns: t.column_names(),
                    types: t.columns.iter().map(|c| c.ty).collect(),
                    rows: t.rows,
                    limb_bits: t.limb_bits,
                    compare_depth: crate::cmp::depth(&self.keys.cmp),
                    compare_cost: crate::cmp::cost(&self.keys.cmp),
                })
            }
            Request::Reciprocals { .. } => Err(Error::Protocol(
                "reciprocals sent while no division is pending".into(),
            )),
            Request::Query {
                key,
                query,
                constants,
            } => {
                if key != self.keys.id {
                    return Err(Error::KeyMismatch(format!(
                        "the query is from key {key}; this server holds the evaluation keys of \
                         key {}",
                        self.keys.id
                    )));
                }
                let table = self.table(&query.table)?;
                let engine = Engine::new(&self.eval, &self.keys, table)?;
                let constants = constants
                    .iter()
                    .map(|c| {
                        Words::from_ciphertexts(self.ctx(), from_blobs(self.ctx(), c)?, table.rows)
                    })
                    .collect::<Result<Vec<_>>>()?;
                let response = match engine.start(&query, &constants)? {
                    Stage::Done(r) => r,
                    Stage::NeedReciprocals {
                        pending,
                        denominators,
                    } => {
                        let denominators = denominators
                            .iter()
                            .map(|d| blobs(self.ctx(), d))
                            .collect::<Result<_>>()?;
                        write_frame(stream, &Reply::NeedReciprocals { denominators })?;
                        match read_frame::<Request>(stream, self.limits.max_frame)? {
                            Some(Request::Reciprocals { limbs }) => {
                                let limbs = limbs
                                    .iter()
                                    .map(|l| from_blobs(self.ctx(), l))
                                    .collect::<Result<_>>()?;
                                engine.finish(pending, limbs)?
                            }
                            Some(_) => {
                                return Err(Error::Protocol(
                                    "expected the reciprocals of the pending division".into(),
                                ));
                            }
                            None => {
                                return Err(Error::Protocol(
                                    "connection closed during the division round trip".into(),
                                ));
                            }
                        }
                    }
                };
                self.answer(&response)
            }
        }
    }

    fn answer(&self, r: &Response<B>) -> Result<Reply> {
        Ok(Reply::Answer {
            mask: blobs(self.ctx(), &r.mask)?,
            sums: blobs(self.ctx(), &r.sums)?,
            items: r
                .items
                .iter()
                .map(|i| blobs(self.ctx(), i))
                .collect::<Result<_>>()?,
        })
    }
}

/// The client side of the protocol.
pub mod remote {
    use super::*;
    use crate::Client;
    use crate::QueryResult;
    use crate::client::Reciprocals;
    use crate::plan::{Plan, TableShape};
    use crate::sql;

    fn call(stream: &mut TcpStream, request: &Request) -> Result<Reply> {
        write_frame(stream, request)?;
        match read_frame::<Reply>(stream, crate::protocol::DEFAULT_MAX_FRAME)? {
            Some(Reply::Error { message }) => Err(Error::Remote(message)),
            Some(r) => Ok(r),
            None => Err(Error::Protocol("the server closed the connection".into())),
        }
    }

    /// The public shape of `table` on the server, as the planner needs it.
    pub fn describe<B: IntegerBackend>(
        stream: &mut TcpStream,
        client: &Client<B>,
        table: &str,
    ) -> Result<TableShape> {
        match call(
            stream,
            &Request::Describe {
                table: table.to_string(),
            },
        )? {
            Reply::Shape {
                key,
                columns,
                types,
                rows,
                limb_bits,
                compare_depth,
                compare_cost,
            } => {
                if key != client.key().id {
                    return Err(Error::KeyMismatch(format!(
                        "table `{table}` on the server belongs to key {key}, this client holds \
                         key {}",
                        client.key().id
                    )));
                }
                let ctx = client.context();
                if types.len() != columns.len() {
                    return Err(Error::Protocol(format!(
                        "{} column types for {} columns",
                        types.len(),
                        columns.len()
                    )));
                }
                Ok(TableShape {
                    columns,
                    types,
                    rows,
                    limb_bits,
                    t: ctx.params().t(),
                    levels: ctx.params().max_level(),
                    compare_depth,
                    compare_cost,
                    block: crate::cmp::layout(ctx.params().n())?.block(),
                    slots: ctx.params().n(),
                })
            }
            other => Err(Error::Protocol(format!(
                "unexpected reply {}",
                other.name()
            ))),
        }
    }

    /// Plans `text` against the server's table (for `--explain`).
    pub fn explain<B: IntegerBackend>(
        stream: &mut TcpStream,
        client: &Client<B>,
        text: &str,
        default_table: &str,
    ) -> Result<Plan> {
        let parsed = sql::parse(text, default_table)?;
        let shape = describe(stream, client, &parsed.query.table)?;
        Plan::new(&parsed.query, &shape)
    }

    /// Runs `text` on the server: constants encrypted here, the division round trip
    /// answered here, the answer decrypted here.
    pub fn query<B: IntegerBackend>(
        stream: &mut TcpStream,
        client: &Client<B>,
        text: &str,
        default_table: &str,
    ) -> Result<(QueryResult, Plan)> {
        let parsed = sql::parse(text, default_table)?;
        let shape = describe(stream, client, &parsed.query.table)?;
        let plan = Plan::new(&parsed.query, &shape)?;
        let ctx = client.context();
        let constants = client
            .encrypt_constants(&plan.constant_words(&parsed.constants)?, shape.rows)?
            .iter()
            .map(|w| blobs(ctx, w.ciphertexts()))
            .collect::<Result<_>>()?;
        let mut reply = call(
            stream,
            &Request::Query {
                key: client.key().id,
                query: parsed.query.clone(),
                constants,
            },
        )?;
        let mut memory = Reciprocals::default();
        if let Reply::NeedReciprocals { denominators } = &reply {
            let dens = denominators
                .iter()
                .map(|d| from_blobs(ctx, d))
                .collect::<Result<Vec<_>>>()?;
            let (limbs, m) = client.reciprocals(&plan, &dens)?;
            memory = m;
            let limbs = limbs.iter().map(|l| blobs(ctx, l)).collect::<Result<_>>()?;
            reply = call(stream, &Request::Reciprocals { limbs })?;
        }
        let Reply::Answer { mask, sums, items } = reply else {
            return Err(Error::Protocol(format!(
                "unexpected reply {}",
                reply.name()
            )));
        };
        let response = Response {
            mask: from_blobs(ctx, &mask)?,
            sums: from_blobs(ctx, &sums)?,
            items: items
                .iter()
                .map(|i| from_blobs(ctx, i))
                .collect::<Result<_>>()?,
        };
        Ok((client.decode(&plan, &response, &memory)?, plan))
    }
}
