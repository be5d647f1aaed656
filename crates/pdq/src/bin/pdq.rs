//! The `pdq` binary: private database queries over an encrypted table.
//!
//! `pdq demo` runs everything in one process; `pdq keygen`, `pdq encrypt --csv t.csv`,
//! `pdq serve` and `pdq query "SELECT ..."` split it between a client (the secret key) and a
//! server (the store directory: evaluation keys and encrypted tables).

use bgv::{Context, Parameters};
use clap::{Parser, Subcommand};
use fhe_cuda::AnyBackend;
use indicatif::{ProgressBar, ProgressStyle};
use pdq::server::{self, Limits, Server, remote};
use pdq::{Client, ClientKey, PlainTable, presets};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "pdq",
    about = "Private database queries: SQL on an encrypted table (exact, BGV)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The whole flow in one process on the embedded table; the last line says whether every
    /// answer matched the plaintext.
    Demo {
        /// Rows of the embedded table.
        #[arg(long, default_value_t = 1024)]
        rows: usize,
        /// Parameter preset (cat, test).
        #[arg(long, default_value = "cat")]
        preset: String,
    },
    /// Generates the client key and the server's evaluation keys.
    Keygen {
        /// Parameter preset (cat, test).
        #[arg(long, default_value = "cat")]
        preset: String,
        /// Most rows of a table under this key.
        #[arg(long, default_value_t = 1024)]
        rows: usize,
        /// The client key file (secret).
        #[arg(long, default_value = "pdq-client.key")]
        key: PathBuf,
        /// The server's store directory (the evaluation keys go there).
        #[arg(long, default_value = "pdq-store")]
        store: PathBuf,
    },
    /// Encrypts a CSV table (header line `a,b:i,c:d2`: column types declared `u`, `i`, `dK` or
    /// inferred; integers and decimals) into the store.
    Encrypt {
        /// The CSV file.
        #[arg(long)]
        csv: PathBuf,
        /// Table name (default: the file's stem).
        #[arg(long)]
        name: Option<String>,
        /// The client key file.
        #[arg(long, default_value = "pdq-client.key")]
        key: PathBuf,
        /// The store directory.
        #[arg(long, default_value = "pdq-store")]
        store: PathBuf,
    },
    /// Serves the store's tables over TCP.
    Serve {
        /// The store directory.
        #[arg(long, default_value = "pdq-store")]
        store: PathBuf,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:7878")]
        addr: String,
        /// Largest request frame in MiB.
        #[arg(long, default_value_t = 1024)]
        max_frame_mib: u64,
    },
    /// Runs a query on a server.
    Query {
        /// The SQL text (`FROM` defaults to --table).
        sql: String,
        /// Server address.
        #[arg(long, default_value = "127.0.0.1:7878")]
        addr: String,
        /// Default table.
        #[arg(long, default_value = "t")]
        table: String,
        /// The client key file.
        #[arg(long, default_value = "pdq-client.key")]
        key: PathBuf,
        /// Print the plan (levels, comparisons, round trips) instead of running the query.
        #[arg(long)]
        explain: bool,
    },
}

type Ctx = Context<AnyBackend>;

fn make_ctx(params: Arc<Parameters>) -> pdq::Result<Ctx> {
    let ring = bgv::context::ring_for(&params)?;
    let (backend, why_cpu) = AnyBackend::auto_explained(ring);
    if let Some(e) = why_cpu {
        eprintln!("backend: CPU ({e})");
    } else {
        eprintln!("backend: {}", if backend.is_gpu() { "GPU" } else { "CPU" });
    }
    Ok(Context::with_backend(params, backend)?)
}

fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("template"));
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

fn run(cli: Cli) -> pdq::Result<bool> {
    match cli.command {
        Command::Demo { rows, preset } => {
            let literal = presets::literal(&preset)?;
            let ctx = make_ctx(pdq::keys::parameters(&literal)?)?;
            let t0 = Instant::now();
            let pb = spinner("starting");
            let mut out = Vec::new();
            let reports = pdq::demo::run(&ctx, &literal, rows, &mut out, |step| {
                pb.set_message(step.to_string())
            });
            pb.finish_and_clear();
            print!("{}", String::from_utf8_lossy(&out));
            let reports = reports?;
            let all = reports.iter().all(|r| r.matches);
            println!("\ntotal time: {:.1} s", t0.elapsed().as_secs_f64());
            println!("all answers match: {all}");
            Ok(all)
        }
        Command::Keygen {
            preset,
            rows,
            key,
            store,
        } => {
            let literal = presets::literal(&preset)?;
            let ctx = make_ctx(pdq::keys::parameters(&literal)?)?;
            let pb = spinner("generating keys");
            let (ck, sk) = pdq::keys::generate(&ctx, &literal, rows)?;
            pb.set_message("writing keys");
            ck.save(&key)?;
            sk.save(&ctx, &literal, &server::eval_key_path(&store))?;
            pb.finish_and_clear();
            println!(
                "key {}: client key {} (secret), evaluation keys {}",
                ck.id,
                key.display(),
                server::eval_key_path(&store).display()
            );
            Ok(true)
        }
        Command::Encrypt {
            csv,
            name,
            key,
            store,
        } => {
            let (ctx, ck) = ClientKey::load(&key, make_ctx)?;
            let text = std::fs::read_to_string(&csv).map_err(|e| pdq::Error::io(&csv, e))?;
            let name = name.unwrap_or_else(|| {
                csv.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "t".into())
            });
            let plain = PlainTable::from_csv(&name, &text)?;
            let client = Client::new(&ctx, ck)?;
            let pb = ProgressBar::new(plain.columns.len() as u64);
            pb.set_style(
                ProgressStyle::with_template("encrypting columns {bar:30} {pos}/{len} [{elapsed}]")
                    .expect("template"),
            );
            let table = client.encrypt_table(&plain, |i| pb.set_position(i as u64))?;
            pb.finish_and_clear();
            let path = server::table_path(&store, &name);
            table.save(&ctx, &path)?;
            println!(
                "table `{name}`: {} rows × {} columns encrypted to {}",
                plain.rows(),
                plain.columns.len(),
                path.display()
            );
            Ok(true)
        }
        Command::Serve {
            store,
            addr,
            max_frame_mib,
        } => {
            let limits = Limits {
                max_frame: max_frame_mib << 20,
                ..Limits::default()
            };
            let pb = spinner("loading the store");
            let server = Server::open(&store, limits, make_ctx)?;
            pb.finish_and_clear();
            let listener = TcpListener::bind(&addr)?;
            println!(
                "serving tables [{}] on {}",
                server.table_names().join(", "),
                listener.local_addr()?
            );
            Arc::new(server).serve(listener)?;
            Ok(true)
        }
        Command::Query {
            sql,
            addr,
            table,
            key,
            explain,
        } => {
            let (ctx, ck) = ClientKey::load(&key, make_ctx)?;
            let client = Client::new(&ctx, ck)?;
            let mut stream = TcpStream::connect(&addr)?;
            if explain {
                println!("{}", remote::explain(&mut stream, &client, &sql, &table)?);
                return Ok(true);
            }
            let pb = spinner("query running");
            let t0 = Instant::now();
            let (result, _) = remote::query(&mut stream, &client, &sql, &table)?;
            pb.finish_and_clear();
            println!("{}", result.columns.join(" | "));
            for row in &result.rows {
                let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
                println!("{}", cells.join(" | "));
            }
            eprintln!(
                "{} rows in {:.1} ms",
                result.rows.len(),
                t0.elapsed().as_secs_f64() * 1e3
            );
            Ok(true)
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("pdq: {e}");
            ExitCode::FAILURE
        }
    }
}
