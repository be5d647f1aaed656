//! The local flow on queries without WHERE (kept until the comparisons land).
use pdq::*;
#[test]
fn flow() {
    let lit = bgv::params::TEST_N11_INSECURE;
    let ctx = bgv::Context::cpu(keys::parameters(&lit).unwrap()).unwrap();
    let (ck, sk) = keys::generate(&ctx, &lit, 16).unwrap();
    let client = Client::new(&ctx, ck);
    let plain =
        PlainTable::from_csv("t", "a,b,c\n1,2,3\n4294967295,5,0\n7,0,9\n100,3,3\n").unwrap();
    let table = client.encrypt_table(&plain, |_| {}).unwrap();
    let ev = bgv::Evaluator::new(&ctx);
    for q in [
        "SELECT SUM(a) FROM t",
        "SELECT a*b, a - c, Index() FROM t",
        "SELECT a / (b*b) FROM t",
        "SELECT AVG(a+b), COUNT(*) FROM t",
    ] {
        let t0 = std::time::Instant::now();
        let (r, plan, _) = local::run(&client, &ev, &sk, &table, q).unwrap();
        let p = sql::parse(q, "t").unwrap();
        let want = plain.answer(&p.query, &p.constants).unwrap();
        println!(
            "{q}: {} vs {} ({:?})\n{plan}",
            r.summary(10),
            want.summary(10),
            t0.elapsed()
        );
        assert!(r.matches(&want));
    }
}
