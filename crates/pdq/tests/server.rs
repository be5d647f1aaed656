//! The server over TCP: answers match SQLite (the division round trip included), many clients
//! at once, and malformed frames, oversized inputs, another key's queries and tables get
//! clear errors while the server keeps serving. Also the store on disk.

mod common;

use common::{Cpu, Setup, fresh, main_table, sqlite};
use pdq::protocol::{FRAME_MAGIC, Reply, Request, read_frame, write_frame};
use pdq::server::{Limits, Server, remote};
use pdq::{EncTable, ServerKeys};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

/// Starts a server with `setup`'s evaluation keys (moved in) and `tables`.
fn start(setup: Setup, tables: Vec<EncTable<Cpu>>, limits: Limits) -> (SocketAddr, Remote) {
    let Setup {
        ctx,
        client,
        server,
        ..
    } = setup;
    let srv = Server::new(&ctx, server, tables, limits);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || Arc::new(srv).serve(listener));
    (addr, Remote { client })
}

/// The client side of a started server.
struct Remote {
    client: pdq::Client<Cpu>,
}

fn raw(addr: SocketAddr, bytes: &[u8]) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(bytes).unwrap();
    read_frame::<Reply>(&mut s, 1 << 30).unwrap().unwrap()
}

fn error_of(r: Reply) -> String {
    match r {
        Reply::Error { message } => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn serving(addr: SocketAddr, c: &Remote) {
    let mut s = TcpStream::connect(addr).unwrap();
    let (r, _) = remote::query(&mut s, &c.client, "SELECT COUNT(*) FROM t", "t").unwrap();
    assert_eq!(r.rows, vec![vec![pdq::Value::Int(48)]]);
}

fn server_with_main_table(limits: Limits) -> (SocketAddr, Remote) {
    let s = fresh();
    let table = s.client.encrypt_table(&main_table(), |_| {}).unwrap();
    start(s, vec![table], limits)
}

#[test]
fn queries_over_tcp_match_sqlite_with_the_division_round_trip() {
    let (addr, c) = server_with_main_table(Limits::default());
    let plain = main_table();
    let mut s = TcpStream::connect(addr).unwrap();
    for (q, want) in [
        (
            "a / b^2 where b <= c",
            "SELECT CAST(a AS REAL) / (CAST(b AS REAL) * b) FROM t WHERE b <= c ORDER BY rowid",
        ),
        (
            "Sum(a) where b <= c and d != e",
            "SELECT SUM(a) FROM t WHERE b <= c AND d != e",
        ),
    ] {
        let (got, plan) = remote::query(&mut s, &c.client, q, "t").unwrap();
        let want = sqlite(&plain, want);
        assert!(
            got.matches(&want),
            "{q}: {} vs {}",
            got.summary(5),
            want.summary(5)
        );
        assert!(plan.to_string().contains("round trips"));
    }
    let plan = remote::explain(&mut s, &c.client, "a / b^2 where b <= c", "t").unwrap();
    let text = plan.to_string();
    assert!(
        text.contains("1 client round trips") && text.contains("levels needed"),
        "{text}"
    );
}

#[test]
fn many_clients_at_once() {
    let (addr, c) = server_with_main_table(Limits::default());
    let c = Arc::new(c);
    let want = sqlite(
        &main_table(),
        "SELECT rowid - 1 FROM t WHERE a <= b AND c != d ORDER BY rowid",
    );
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let c = Arc::clone(&c);
            let want = want.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                let (got, _) =
                    remote::query(&mut s, &c.client, "Index() where a <= b and c != d", "t")
                        .unwrap();
                assert!(got.matches(&want));
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn malformed_frames_get_errors_and_the_server_keeps_serving() {
    let (addr, c) = server_with_main_table(Limits::default());
    let e = error_of(raw(addr, b"GET / HTTP/1.1\r\n\r\n"));
    assert!(e.contains("bad magic"), "{e}");
    let mut header = pdq::blob::header(FRAME_MAGIC, 3);
    header[4] = 7;
    let e = error_of(raw(addr, &header));
    assert!(e.contains("format version 7"), "{e}");
    let e = error_of(raw(addr, &pdq::blob::header(FRAME_MAGIC, u64::MAX)));
    assert!(e.contains("exceeds the limit"), "{e}");
    let mut junk = pdq::blob::header(FRAME_MAGIC, 4).to_vec();
    junk.extend_from_slice(&[9, 9, 9, 9]);
    let e = error_of(raw(addr, &junk));
    assert!(e.contains("undecodable"), "{e}");
    // A frame whose constants are not ciphertexts.
    let mut s = TcpStream::connect(addr).unwrap();
    let q = pdq::sql::parse("SELECT COUNT(*) FROM t WHERE a < 5", "t").unwrap();
    write_frame(
        &mut s,
        &Request::Query {
            key: c.client.key().id,
            query: q.query,
            constants: vec![vec![vec![1, 2, 3]]],
        },
    )
    .unwrap();
    let e = error_of(read_frame::<Reply>(&mut s, 1 << 30).unwrap().unwrap());
    assert!(e.contains("ciphertext") || e.contains("blob"), "{e}");
    // The same connection goes on after a refused request.
    write_frame(&mut s, &Request::Reciprocals { limbs: vec![] }).unwrap();
    let e = error_of(read_frame::<Reply>(&mut s, 1 << 30).unwrap().unwrap());
    assert!(e.contains("no division is pending"), "{e}");
    write_frame(&mut s, &Request::Describe { table: "t".into() }).unwrap();
    assert!(matches!(
        read_frame::<Reply>(&mut s, 1 << 30).unwrap().unwrap(),
        Reply::Shape { rows: 48, .. }
    ));
    serving(addr, &c);
}

#[test]
fn oversized_inputs_are_refused() {
    let limits = Limits {
        max_frame: 64 << 10,
        ..Limits::default()
    };
    let (addr, c) = server_with_main_table(limits);
    let mut s = TcpStream::connect(addr).unwrap();
    // One encrypted constant is larger than 64 KiB.
    let e = remote::query(&mut s, &c.client, "SELECT COUNT(*) FROM t WHERE a < 5", "t")
        .unwrap_err()
        .to_string();
    assert!(e.contains("exceeds the limit"), "{e}");
    serving(addr, &c);
    let e = pdq::PlainTable::new("t", vec!["a".into()], vec![vec![1; 601]])
        .map(|t| c.client.encrypt_table(&t, |_| {}))
        .unwrap()
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("601 rows"), "{e}");
}

#[test]
fn another_keys_queries_and_tables_are_refused() {
    let s1 = fresh();
    let s2 = fresh();
    let own = s1.client.encrypt_table(&main_table(), |_| {}).unwrap();
    let mut foreign_plain = main_table();
    foreign_plain.name = "u".into();
    let foreign = s2.client.encrypt_table(&foreign_plain, |_| {}).unwrap();
    let other_client = s2.client;
    let (addr, c) = start(s1, vec![own, foreign], Limits::default());
    // The client checks the table's key before sending anything.
    let mut s = TcpStream::connect(addr).unwrap();
    let e = remote::query(&mut s, &other_client, "SELECT COUNT(*) FROM t", "t")
        .unwrap_err()
        .to_string();
    assert!(e.contains("belongs to key"), "{e}");
    // The server refuses a query from another key, and a table of another key.
    let q = pdq::sql::parse("SELECT COUNT(*) FROM t", "t")
        .unwrap()
        .query;
    write_frame(
        &mut s,
        &Request::Query {
            key: other_client.key().id,
            query: q,
            constants: vec![],
        },
    )
    .unwrap();
    let e = error_of(read_frame::<Reply>(&mut s, 1 << 30).unwrap().unwrap());
    assert!(
        e.contains("key mismatch") && e.contains("query is from key"),
        "{e}"
    );
    let q = pdq::sql::parse("SELECT COUNT(*) FROM u", "u")
        .unwrap()
        .query;
    write_frame(
        &mut s,
        &Request::Query {
            key: c.client.key().id,
            query: q,
            constants: vec![],
        },
    )
    .unwrap();
    let e = error_of(read_frame::<Reply>(&mut s, 1 << 30).unwrap().unwrap());
    assert!(e.contains("table `u` belongs to key"), "{e}");
    serving(addr, &c);
}

#[test]
fn the_store_survives_a_restart_and_rejects_damaged_files() {
    let dir = std::env::temp_dir().join(format!("pdq-store-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let s = fresh();
    let key_path = dir.join("client.key");
    s.client.key().save(&key_path).unwrap();
    s.server
        .save(
            &s.ctx,
            &pdq::presets::TEST,
            &pdq::server::eval_key_path(&dir),
        )
        .unwrap();
    let table = s.client.encrypt_table(&main_table(), |_| {}).unwrap();
    let tpath = pdq::server::table_path(&dir, "t");
    table.save(&s.ctx, &tpath).unwrap();
    let make = |p| Ok(bgv::Context::cpu(p)?);
    let server = Server::open(&dir, Limits::default(), make).unwrap();
    assert_eq!(server.table_names(), vec!["t".to_string()]);
    let (ctx, ck) = pdq::ClientKey::load(&key_path, make).unwrap();
    assert_eq!(ck.id, s.client.key().id);
    let (_, keys): (_, ServerKeys<Cpu>) =
        ServerKeys::load(&pdq::server::eval_key_path(&dir), make).unwrap();
    assert_eq!(keys.id, ck.id);
    let loaded = EncTable::load(&ctx, &tpath, Some(ck.id)).unwrap();
    assert_eq!((loaded.rows, loaded.columns.len()), (48, 5));
    let e = EncTable::load(&ctx, &tpath, Some(pdq::KeyId([0; 16])))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("belongs to key"), "{e}");
    let mut bytes = std::fs::read(&tpath).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&tpath, &bytes).unwrap();
    let e = Server::open(&dir, Limits::default(), make)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("invalid table file"), "{e}");
    std::fs::write(&tpath, b"PDQKjunk").unwrap();
    let e = EncTable::load(&ctx, &tpath, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("bad magic") || e.contains("shorter"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
