//! Every query of the test set returns what SQLite returns on the same table: CAT's four
//! queries and the operators, OR/NOT, no row and every row matching, ties, all-equal columns,
//! 0 and 2^32 − 1, arithmetic and division (SQLite's division made real with CAST).

mod common;

use common::check;

#[test]
fn cat_q1_index_where_le_and_ne() {
    let n = check(
        "t",
        "Index() where a <= b and c != d",
        "SELECT rowid - 1 FROM t WHERE a <= b AND c != d ORDER BY rowid",
    );
    assert!(n > 0);
}

#[test]
fn cat_q2_sum_where_le_and_ne() {
    check(
        "t",
        "Sum(a) where b <= c and d != e",
        "SELECT SUM(a) FROM t WHERE b <= c AND d != e",
    );
}

#[test]
fn cat_q3_division_where_le() {
    let n = check(
        "t",
        "a / b^2 where b <= c",
        "SELECT CAST(a AS REAL) / (CAST(b AS REAL) * b) FROM t WHERE b <= c ORDER BY rowid",
    );
    assert!(n > 0);
}

#[test]
fn cat_q4_avg_where_le_and_eq() {
    check(
        "t",
        "Avg(a) where b <= c and d == e",
        "SELECT AVG(a) FROM t WHERE b <= c AND d = e",
    );
}

#[test]
fn each_operator_between_columns() {
    for op in ["<", "<=", "=", "!=", ">", ">="] {
        check(
            "t",
            &format!("SELECT Index() FROM t WHERE a {op} b"),
            &format!("SELECT rowid - 1 FROM t WHERE a {op} b ORDER BY rowid"),
        );
    }
}

#[test]
fn each_operator_against_constants() {
    for (op, k) in [
        ("<", 1000u64),
        ("<=", 1000),
        ("=", 0),
        ("!=", 4294967295),
        (">", 2147483648),
        (">=", 4294967295),
    ] {
        check(
            "t",
            &format!("SELECT COUNT(*), SUM(c) FROM t WHERE a {op} {k}"),
            &format!("SELECT COUNT(*), SUM(c) FROM t WHERE a {op} {k}"),
        );
    }
}

#[test]
fn constant_on_the_left() {
    check(
        "t",
        "SELECT b FROM t WHERE 1000 <= b",
        "SELECT b FROM t WHERE 1000 <= b ORDER BY rowid",
    );
}

#[test]
fn or_and_not() {
    check(
        "t",
        "SELECT SUM(b), COUNT(*) FROM t WHERE a < b OR d = e",
        "SELECT SUM(b), COUNT(*) FROM t WHERE a < b OR d = e",
    );
    check(
        "t",
        "SELECT Index() FROM t WHERE NOT (a <= b) AND NOT d = 1",
        "SELECT rowid - 1 FROM t WHERE NOT (a <= b) AND NOT d = 1 ORDER BY rowid",
    );
}

#[test]
fn no_row_matches() {
    check(
        "t",
        "SELECT SUM(a), COUNT(*), AVG(b) FROM t WHERE a > 4294967295",
        "SELECT SUM(a), COUNT(*), AVG(b) FROM t WHERE a > 4294967295",
    );
    let n = check(
        "t",
        "SELECT Index(), a FROM t WHERE d > 7",
        "SELECT rowid - 1, a FROM t WHERE d > 7 ORDER BY rowid",
    );
    assert_eq!(n, 0);
}

#[test]
fn every_row_matches() {
    check(
        "t",
        "SELECT SUM(a), COUNT(*), AVG(c) FROM t WHERE a >= 0",
        "SELECT SUM(a), COUNT(*), AVG(c) FROM t WHERE a >= 0",
    );
    check(
        "t",
        "SELECT SUM(a), SUM(b), COUNT(*) FROM t",
        "SELECT SUM(a), SUM(b), COUNT(*) FROM t",
    );
}

#[test]
fn ties_between_columns() {
    // Rows 0, 5, 10, … have a = b and rows 0, 4, 8, … have b = c.
    for op in ["<=", ">=", "=", "<", ">"] {
        check(
            "t",
            &format!("SELECT Index() FROM t WHERE b {op} c AND a {op} b"),
            &format!("SELECT rowid - 1 FROM t WHERE b {op} c AND a {op} b ORDER BY rowid"),
        );
    }
}

#[test]
fn all_equal_columns() {
    for op in ["<", "<=", "=", "!=", ">", ">="] {
        check(
            "same",
            &format!("SELECT COUNT(*), SUM(x) FROM same WHERE x {op} y"),
            &format!("SELECT COUNT(*), SUM(x) FROM same WHERE x {op} y"),
        );
    }
}

#[test]
fn zero_and_max_values() {
    check(
        "t",
        "SELECT Index(), a, b FROM t WHERE a = 4294967295 OR b = 0",
        "SELECT rowid - 1, a, b FROM t WHERE a = 4294967295 OR b = 0 ORDER BY rowid",
    );
    check(
        "t",
        "SELECT a * b, a - b, a + c FROM t WHERE a >= 4294967295",
        "SELECT a * b, a - b, a + c FROM t WHERE a >= 4294967295 ORDER BY rowid",
    );
}

#[test]
fn arithmetic_per_row() {
    check(
        "t",
        "SELECT a + b, a - c, b * c, (a - b) * d FROM t WHERE d != e",
        "SELECT a + b, a - c, b * c, (a - b) * d FROM t WHERE d != e ORDER BY rowid",
    );
}

#[test]
fn sums_and_averages_of_expressions() {
    check(
        "t",
        "SELECT SUM(a + b), AVG(a - c), SUM(d - e) FROM t WHERE c > b",
        "SELECT SUM(a + b), AVG(a - c), SUM(d - e) FROM t WHERE c > b",
    );
}

#[test]
fn division_by_zero_is_null_and_signs() {
    check(
        "t",
        "SELECT a / (b * b), (a - c) / (b - c) FROM t",
        "SELECT CAST(a AS REAL) / (CAST(b AS REAL) * b), \
         CAST(a - c AS REAL) / (b - c) FROM t ORDER BY rowid",
    );
}

#[test]
fn tables_of_several_ciphertexts() {
    check(
        "big",
        "SELECT SUM(a), COUNT(*), AVG(b) FROM big WHERE b <= c AND d != e",
        "SELECT SUM(a), COUNT(*), AVG(b) FROM big WHERE b <= c AND d != e",
    );
    check(
        "big",
        "SELECT Index(), a / (b * b) FROM big WHERE c < 1000000000 OR d = e",
        "SELECT rowid - 1, CAST(a AS REAL) / (CAST(b AS REAL) * b) FROM big \
         WHERE c < 1000000000 OR d = e ORDER BY rowid",
    );
}

#[test]
fn negative_values_in_comparisons() {
    for op in ["<", "<=", "=", "!=", ">", ">="] {
        let n = check(
            "m",
            &format!("SELECT Index(), n FROM m WHERE n {op} k"),
            &format!("SELECT rowid - 1, n FROM m WHERE n {op} k ORDER BY rowid"),
        );
        assert!(n > 0, "{op}");
    }
    for (op, c) in [
        ("<", "0"),
        ("<=", "-5"),
        ("=", "-2147483648"),
        (">", "-1000000"),
        (">=", "2147483647"),
    ] {
        check(
            "m",
            &format!("SELECT COUNT(*), SUM(k) FROM m WHERE n {op} {c}"),
            &format!("SELECT COUNT(*), SUM(k) FROM m WHERE n {op} {c}"),
        );
    }
}

#[test]
fn negative_values_in_sums_averages_and_arithmetic() {
    check(
        "m",
        "SELECT SUM(n), AVG(n), SUM(n - k), AVG(n + k), COUNT(*) FROM m WHERE u != 1",
        "SELECT SUM(n), AVG(n), SUM(n - k), AVG(n + k), COUNT(*) FROM m WHERE u != 1",
    );
    check(
        "m",
        "SELECT SUM(n), AVG(k) FROM m",
        "SELECT SUM(n), AVG(k) FROM m",
    );
    let n = check(
        "m",
        "SELECT n * k, n - k, n / k FROM m WHERE NOT (n < -100)",
        "SELECT n * k, n - k, CAST(n AS REAL) / k FROM m WHERE NOT (n < -100) ORDER BY rowid",
    );
    assert!(n > 0);
}

#[test]
fn decimal_columns_in_comparisons() {
    let n = check(
        "m",
        "SELECT Index(), p, q FROM m WHERE p <= q AND p > -12.5",
        "SELECT rowid - 1, p, q FROM m WHERE p <= q AND p > -12.5 ORDER BY rowid",
    );
    assert!(n > 0);
    for op in ["<", "=", ">="] {
        check(
            "m",
            &format!("SELECT Index() FROM m WHERE q {op} 0 OR r {op} 1.25"),
            &format!("SELECT rowid - 1 FROM m WHERE q {op} 0 OR r {op} 1.25 ORDER BY rowid"),
        );
    }
}

#[test]
fn decimal_sums_averages_products_and_divisions() {
    check(
        "m",
        "SELECT SUM(p), AVG(q), SUM(r), AVG(p - q), COUNT(*) FROM m WHERE q < 325.5 OR u = 1",
        "SELECT SUM(p), AVG(q), SUM(r), AVG(p - q), COUNT(*) FROM m WHERE q < 325.5 OR u = 1",
    );
    let n = check(
        "m",
        "SELECT p * q, p * r, n * p FROM m WHERE u != 2",
        "SELECT p * q, p * r, n * p FROM m WHERE u != 2 ORDER BY rowid",
    );
    assert!(n > 0);
    check(
        "m",
        "SELECT p / q, n / p, r / (p * p) FROM m",
        "SELECT p / q, CAST(n AS REAL) / p, r / (p * p) FROM m ORDER BY rowid",
    );
}

#[test]
fn mixed_columns() {
    check(
        "m",
        "SELECT SUM(p), SUM(n), AVG(r), COUNT(*) FROM m WHERE n > k AND p <= q OR u = 0",
        "SELECT SUM(p), SUM(n), AVG(r), COUNT(*) FROM m WHERE n > k AND p <= q OR u = 0",
    );
    check(
        "m",
        "SELECT Index(), n * r, u * p FROM m WHERE r >= -100.005 AND NOT (k = n)",
        "SELECT rowid - 1, n * r, u * p FROM m WHERE r >= -100.005 AND NOT (k = n) \
         ORDER BY rowid",
    );
}

#[test]
fn sums_and_differences_across_decimal_scales() {
    let n = check(
        "m",
        "SELECT n + p, p - n, q + r, r - q FROM m WHERE u = 1",
        "SELECT n + p, p - n, q + r, r - q FROM m WHERE u = 1 ORDER BY rowid",
    );
    assert!(n > 0);
    check(
        "m",
        "SELECT SUM(q + r), AVG(p - r) FROM m WHERE u = 2",
        "SELECT SUM(q + r), AVG(p - r) FROM m WHERE u = 2",
    );
}
