//! Shared setup of the pdq tests: keys at the insecure test preset (generated once per test
//! binary), tables with edge values, and SQLite as the reference.

#![allow(dead_code)]

use bgv::{Context, Evaluator};
use fhe_math::cpu::CpuBackend;
use pdq::{
    Client, ColumnType, EncTable, PlainTable, QueryResult, ServerKeys, Value, keys, presets,
};
use std::sync::OnceLock;

pub type Cpu = CpuBackend;

/// Keys of one client and the server's evaluation keys.
pub struct Setup {
    pub ctx: Context<Cpu>,
    pub client: Client<Cpu>,
    pub server: ServerKeys<Cpu>,
    pub eval: Evaluator<Cpu>,
}

pub fn ctx() -> Context<Cpu> {
    Context::cpu(keys::parameters(&presets::TEST).unwrap()).unwrap()
}

/// A fresh key pair for tables of up to 600 rows (three ciphertexts of 256 rows at the test
/// preset).
pub fn fresh() -> Setup {
    let ctx = ctx();
    let (ck, server) = keys::generate(&ctx, &presets::TEST, 600).unwrap();
    Setup {
        client: Client::new(&ctx, ck).unwrap(),
        eval: Evaluator::new(&ctx),
        server,
        ctx,
    }
}

/// The shared key pair of a test binary.
pub fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(fresh)
}

/// The main test table `t` (48 rows, columns a..e): random 32-bit values mixed with 0,
/// 2^32 − 1, ties between columns, small values in d and e (equalities), zeros in b.
pub fn main_table() -> PlainTable {
    let rows = 48;
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut v = vec![Vec::new(); 5];
    for r in 0..rows {
        let pick = |x: u64, k: u64| match x % k {
            0 => 0,
            1 => u32::MAX as u64,
            2 => 1000,
            _ => x >> 32,
        };
        let a = pick(next(), 7);
        let b = if r % 5 == 0 { a } else { pick(next(), 9) };
        let c = if r % 4 == 0 { b } else { pick(next(), 6) };
        v[0].push(a);
        v[1].push(b);
        v[2].push(c);
        v[3].push(next() % 3);
        v[4].push(next() % 3);
    }
    let cols = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
    PlainTable::new("t", cols, v).unwrap()
}

/// A table `same` whose columns hold one value everywhere.
pub fn all_equal_table() -> PlainTable {
    let cols = ["x", "y"].map(String::from).to_vec();
    PlainTable::new("same", cols, vec![vec![77; 20], vec![77; 20]]).unwrap()
}

/// A table `big` of 600 rows: three ciphertexts (chunks) of 256 rows at the test preset,
/// the second matrix row in use.
pub fn big_table() -> PlainTable {
    let mut t = PlainTable::demo(600);
    t.name = "big".into();
    t
}

/// A table `m` of 40 rows with signed and decimal columns: `n`, `k` signed 32-bit integers
/// (negatives, 0, −2^31 and 2^31 − 1, ties `n = k` every 5th row), `p`, `q` decimals of 2
/// places (negatives, zeros in `q`, ties every 4th row), `r` decimals of 3 places, `u` small
/// unsigned integers.
pub fn mixed_table() -> PlainTable {
    let rows = 40;
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut v: Vec<Vec<i64>> = vec![Vec::new(); 6];
    for r in 0..rows {
        let x = next();
        let n = match x % 6 {
            0 => i32::MIN as i64,
            1 => i32::MAX as i64,
            2 => 0,
            3 => -((x >> 40) as i64),
            _ => (x >> 33) as i64 - (1 << 30),
        };
        let k = if r % 5 == 0 {
            n
        } else {
            (next() >> 33) as i64 - (1 << 30)
        };
        // Cents in [-500.00, 2000.00): sums keep away from 0.
        let p = (next() % 250_000) as i64 - 50_000;
        let q = match r % 4 {
            0 => p,
            1 => 0,
            _ => (next() % 250_000) as i64 - 50_000,
        };
        let rr = (next() % 2_000_000) as i64 - 400_000;
        v[0].push(n);
        v[1].push(k);
        v[2].push(p);
        v[3].push(q);
        v[4].push(rr);
        v[5].push((next() % 3) as i64);
    }
    let cols = ["n", "k", "p", "q", "r", "u"].map(String::from).to_vec();
    let types = vec![
        ColumnType::SIGNED,
        ColumnType::SIGNED,
        ColumnType::decimal(2),
        ColumnType::decimal(2),
        ColumnType::decimal(3),
        ColumnType::UNSIGNED,
    ];
    PlainTable::typed("m", cols, types, v).unwrap()
}

/// The tables of the tests, encrypted once under the shared key.
pub fn tables() -> &'static Vec<(PlainTable, EncTable<Cpu>)> {
    static T: OnceLock<Vec<(PlainTable, EncTable<Cpu>)>> = OnceLock::new();
    T.get_or_init(|| {
        [main_table(), all_equal_table(), big_table(), mixed_table()]
            .into_iter()
            .map(|p| {
                let e = setup().client.encrypt_table(&p, |_| {}).unwrap();
                (p, e)
            })
            .collect()
    })
}

/// The answer of SQLite to `sql` on `table` (INTEGER columns, REAL for decimals, row ids
/// from 1 in order).
pub fn sqlite(table: &PlainTable, sql: &str) -> QueryResult {
    let db = rusqlite::Connection::open_in_memory().unwrap();
    let cols: Vec<String> = table
        .columns
        .iter()
        .zip(&table.types)
        .map(|(c, t)| {
            let ty = if t.scale > 0 { "REAL" } else { "INTEGER" };
            format!("{c} {ty}")
        })
        .collect();
    db.execute(
        &format!("CREATE TABLE {} ({})", table.name, cols.join(", ")),
        [],
    )
    .unwrap();
    let marks = vec!["?"; table.columns.len()].join(", ");
    let mut ins = db
        .prepare(&format!("INSERT INTO {} VALUES ({marks})", table.name))
        .unwrap();
    for r in 0..table.rows() {
        let row: Vec<rusqlite::types::Value> = table
            .values
            .iter()
            .zip(&table.types)
            .map(|(c, t)| match t.scale {
                0 => rusqlite::types::Value::Integer(c[r]),
                k => rusqlite::types::Value::Real(c[r] as f64 / 10f64.powi(k as i32)),
            })
            .collect();
        ins.execute(rusqlite::params_from_iter(row)).unwrap();
    }
    let mut st = db.prepare(sql).unwrap();
    let n = st.column_count();
    let columns = st.column_names().iter().map(|s| s.to_string()).collect();
    let rows = st
        .query_map([], |row| {
            (0..n)
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        rusqlite::types::ValueRef::Integer(x) => Value::Int(x as i128),
                        rusqlite::types::ValueRef::Real(x) => Value::Real(x),
                        rusqlite::types::ValueRef::Null => Value::Null,
                        other => panic!("unexpected SQLite value {other:?}"),
                    })
                })
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap();
    QueryResult { columns, rows }
}

/// Runs `pdq_sql` encrypted on table `name` and `sqlite_sql` in SQLite; asserts equal
/// answers (integers exactly, reals to 2^-30) and returns the number of rows.
pub fn check(name: &str, pdq_sql: &str, sqlite_sql: &str) -> usize {
    let s = setup();
    let (plain, enc) = tables().iter().find(|(p, _)| p.name == name).unwrap();
    let (got, _, _) = pdq::local::run(&s.client, &s.eval, &s.server, enc, pdq_sql).unwrap();
    let want = sqlite(plain, sqlite_sql);
    assert!(
        got.matches(&want),
        "{pdq_sql}\n  pdq:    {}\n  sqlite: {}",
        got.summary(100),
        want.summary(100)
    );
    got.rows.len()
}
