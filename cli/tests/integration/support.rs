//! What the test files share: running the built binary within a time bound, scratch
//! directories, fixture paths.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a run gave.
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs `command` (the built binary, or a wrapper of it) with `args`, reading both pipes on
/// threads so that a large output cannot block the child, and kills it after `limit` (the test
/// then fails).
pub fn run(mut command: Command, args: &[&str], limit: Duration) -> Run {
    let start = Instant::now();
    let mut child = command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("commcost {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        status,
        stdout: out.join().expect("stdout"),
        stderr: err.join().expect("stderr"),
        elapsed: start.elapsed(),
    }
}

/// The built binary with `args`, killed after `limit`: `(exit code, stdout, stderr)`, and no
/// panic on stderr.
pub fn run_within(args: &[&str], limit: Duration) -> (Option<i32>, String, String) {
    let r = run(Command::new(env!("CARGO_BIN_EXE_commcost")), args, limit);
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("RUST_BACKTRACE"),
        "{}",
        r.stderr
    );
    (r.status.code(), r.stdout, r.stderr)
}

/// A fresh scratch directory `name` under the target's temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes `text` to `dir/name`; its path.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

/// The path of a file under the repository's `tests/fixtures/`.
pub fn fixture(path: &str) -> String {
    format!("{}/../tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))
}
