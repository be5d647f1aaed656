//! What pdq refuses, with errors that name the construct: MIN/MAX (they need bootstrapping or
//! client rounds), negative and decimal values (only unsigned 32-bit integers are encrypted),
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
fn negative_and_decimal_values_are_refused() {
    for q in [
        "SELECT COUNT(*) FROM t WHERE a < -1",
        "SELECT COUNT(*) FROM t WHERE a < 2.5",
        "SELECT COUNT(*) FROM t WHERE a < 4294967296",
    ] {
        let e = refusal(q);
        assert!(e.contains("unsigned 32-bit integers only"), "{q}: {e}");
    }
    let e = pdq::PlainTable::from_csv("t", "a\n-3\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("negative and decimal"), "{e}");
    let e = pdq::PlainTable::from_csv("t", "a\n1.5\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("negative and decimal"), "{e}");
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
