//! The `pdq` binary end to end: `demo` ends with `all answers match: true`; `keygen`,
//! `encrypt --csv`, `serve` and `query` (with `--explain`) agree with the plaintext, and a
//! refused query is a clear error with a failure status.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const PDQ: &str = env!("CARGO_BIN_EXE_pdq");

fn pdq(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(PDQ)
        .args(args)
        .current_dir(dir)
        .env("FHE_BACKEND", "cpu")
        .output()
        .unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn demo_ends_with_all_answers_match() {
    let dir = std::env::temp_dir();
    let out = stdout(&pdq(&dir, &["demo", "--preset", "test", "--rows", "64"]));
    assert_eq!(
        out.trim_end().lines().last(),
        Some("all answers match: true"),
        "{out}"
    );
}

/// Kills the server process when the test ends, passing or not.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn keygen_encrypt_serve_query() {
    let dir = std::env::temp_dir().join(format!("pdq-cli-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.csv"), "a,b\n5,7\n4294967295,1\n9,9\n0,3\n").unwrap();
    stdout(&pdq(&dir, &["keygen", "--preset", "test", "--rows", "16"]));
    let out = stdout(&pdq(&dir, &["encrypt", "--csv", "t.csv"]));
    assert!(out.contains("4 rows × 2 columns"), "{out}");
    let mut server = Child(
        Command::new(PDQ)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .current_dir(&dir)
            .env("FHE_BACKEND", "cpu")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["query", "--addr", addr.as_str()];
        all.extend_from_slice(args);
        pdq(&dir, &all)
    };
    let out = stdout(&run(&["SELECT SUM(a), COUNT(*) FROM t WHERE a <= b"]));
    assert_eq!(out.lines().nth(1), Some("14 | 3"), "{out}");
    let out = stdout(&run(&["a / (b * b) where b >= 3"]));
    let got: Vec<f64> = out.lines().skip(1).map(|l| l.parse().unwrap()).collect();
    let want = [5.0 / 49.0, 9.0 / 81.0, 0.0];
    assert_eq!(got.len(), want.len(), "{out}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= w * pdq::REAL_TOLERANCE, "{out}");
    }
    let out = stdout(&run(&["--explain", "Index() where a < 7 or b = 1"]));
    assert!(out.contains("2 comparisons") && out.contains("$0"), "{out}");
    let refused = run(&["SELECT MAX(a) FROM t"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("bootstrapping or client rounds"));
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
