//! What pdq refuses, with errors that name the construct: MIN/MAX (they need bootstrapping or
//! client rounds), constants and cells outside their column's type (unsigned or signed 32-bit
//! integers, decimals of at most 9 places),
//! expressions whose limbs would wrap mod t, unknown columns and tables.

mod common;

use common::{setup, tables};

fn refusal(sql: &str) -> String {
    let s = setup();
    let (_, enc) = &tables()[0];
    match pdq::local::run(&s.client, &s.eval, &s.server, enc, sql) {
        Ok((r, _, _)) => panic!("{sql} answered {}", r.summary(3)),
        Err(e) => e.to_string(),
    }
}

#[test]
fn min_max_need_bootstrapping_or_client_rounds() {
    for q in ["SELECT MIN(a) FROM t", "SELECT MAX(b) FROM t WHERE a < b"] {
        let e = refusal(q);
        assert!(e.contains("bootstrapping or client rounds"), "{e}");
    }
}

#[test]
fn values_outside_the_column_types_are_refused() {
    for q in [
        "SELECT COUNT(*) FROM t WHERE a < -1",
        "SELECT COUNT(*) FROM t WHERE a < 2.5",
        "SELECT COUNT(*) FROM t WHERE a < 4294967296",
    ] {
        let e = refusal(q);
        assert!(e.contains("unsigned 32-bit integers only"), "{q}: {e}");
    }
    let e = pdq::PlainTable::from_csv("t", "a\n-3\n4294967295\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("-2147483648..=2147483647"), "{e}");
    let e = pdq::PlainTable::from_csv("t", "a\n1.5e3\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("decimal places"), "{e}");
}

#[test]
fn inexact_expressions_and_unknown_names_are_refused() {
    let e = refusal("SELECT a * b * c FROM t");
    assert!(
        e.contains("cannot evaluate") && e.contains("exactly"),
        "{e}"
    );
    let e = refusal("SELECT SUM(a * b) FROM t");
    assert!(e.contains("SUM((a * b))"), "{e}");
    let e = refusal("SELECT z FROM t");
    assert!(e.contains("unknown column `z`"), "{e}");
    let e = refusal("SELECT a FROM other");
    assert!(e.contains("unknown table `other`"), "{e}");
    let e = refusal("SELECT a FROM t LIMIT 3");
    assert!(e.contains("LIMIT"), "{e}");
}

fn typed_refusal(sql: &str) -> String {
    let s = setup();
    let (_, enc) = tables().iter().find(|(p, _)| p.name == "m").unwrap();
    match pdq::local::run(&s.client, &s.eval, &s.server, enc, sql) {
        Ok((r, _, _)) => panic!("{sql} answered {}", r.summary(3)),
        Err(e) => e.to_string(),
    }
}

#[test]
fn mismatched_types_and_inexact_constants_are_refused() {
    let e = typed_refusal("SELECT COUNT(*) FROM m WHERE n < p");
    assert!(e.contains("different types"), "{e}");
    let e = typed_refusal("SELECT n + r FROM m");
    assert!(e.contains("cannot evaluate") && e.contains("10^3"), "{e}");
    let e = typed_refusal("SELECT SUM(n + p) FROM m");
    assert!(e.contains("cannot evaluate") && e.contains("SUM"), "{e}");
    let e = typed_refusal("SELECT COUNT(*) FROM m WHERE p < 1.234");
    assert!(e.contains("decimals of 2 places"), "{e}");
    let e = typed_refusal("SELECT COUNT(*) FROM m WHERE n < 2.5");
    assert!(e.contains("signed 32-bit integers"), "{e}");
    let e = typed_refusal("SELECT COUNT(*) FROM m WHERE n < 2147483648");
    assert!(e.contains("-2147483648..=2147483647"), "{e}");
    let e = typed_refusal("SELECT COUNT(*) FROM m WHERE u < -1");
    assert!(e.contains("unsigned 32-bit integers only"), "{e}");
}
