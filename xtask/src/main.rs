//! Project tooling. `cargo xtask <command>`:
//!
//! - `examples`: installs the pinned dev server if missing, then runs every example against it
//!   and checks that every command the guide shows is still printed by an example, and that
//!   every diagram it shows is still the one its example prints (`diagrams.rs`).
//! - `diagrams [--check]`: writes the guide's diagrams again from what the examples print (or,
//!   with `--check`, only checks them, without a server).
//! - `test`: installs what is missing (cmake, the dev server, mdBook), then runs the format
//!   check, clippy, every test (unit, integration, compile-fail, doc), rustdoc, the book build,
//!   the examples and the packaging of the published crates (`package`). This is what CI runs.
//! - `suite`: the runtime's unit tests and the integration suite (again under each populate
//!   plan for the tests that populate), against the server named by `MONGODB_URI` or else the
//!   dev server; installs the dev server, which some tests start on their own. What the
//!   workflow testing real MongoDB servers runs.
//! - `package`: packages the published crates (`cargo package`) and builds them from the
//!   packages, as crates.io would.
//! - `bench [name]`: runs the benchmarks (release build) against the dev server, or the server
//!   named by `MONGODB_URI`; each prints its medians, ratios and command counts.
//! - `derive-time`: compile time of 100 generated models deriving `Model` with relations
//!   against the same structs deriving serde's traits only (see `derive_time.rs`);
//!   `--instructions` counts the compiler's instructions instead (valgrind's cachegrind).
//! - `server [PORT]`: installs the pinned dev server if missing and runs it in the foreground
//!   on 127.0.0.1 (port 27017 unless given), keeping its data in the cache directory, until
//!   Ctrl-C: a database for an application of one's own (`mongodb://127.0.0.1:27017`).
//! - `install`: only the installs.
//!
//! Installs go to a per-user cache directory keyed by version, so a fresh clone reuses them.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

mod derive_time;
mod diagrams;

#[path = "../../odm/src/testing/location.rs"]
#[allow(dead_code)]
mod location;

const MDBOOK_VERSION: &str = "0.5.4";

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let started = Instant::now();
    let result = match args.first().map(String::as_str) {
        Some("examples") => install_server().and_then(|server| run_examples(&server)),
        Some("test") => run_all(),
        Some("suite") => install_server().and_then(|server| run_suite(&server)),
        Some("package") => run_package(),
        Some("install") => install_all().map(|_| ()),
        Some("server") => install_server().and_then(|server| run_server(&server, args.get(1))),
        Some("diagrams") if args.get(1).is_some_and(|a| a == "--check") => diagrams::check(),
        Some("diagrams") => diagrams::write(),
        Some("derive-time") if args.get(1).is_some_and(|a| a == "--instructions") => {
            derive_time::instructions()
        }
        Some("derive-time") => derive_time::run(),
        Some("bench") => install_server().and_then(|server| run_benches(&server, args.get(1))),
        _ => Err(
            "usage: cargo xtask <examples|diagrams [--check]|test|suite|package|bench [name]|derive-time [--instructions]|server [port]|install>"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => {
            eprintln!("xtask: done in {:.0} s", started.elapsed().as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Runs a command in the workspace root, echoing it and timing it.
fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
    eprintln!("xtask: $ {program} {}", args.join(" "));
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    eprintln!(
        "xtask: {program} {} finished in {:.1} s",
        args.first().copied().unwrap_or_default(),
        started.elapsed().as_secs_f64()
    );
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

fn has(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// cmake is needed to build the dev server (it bundles WiredTiger).
fn install_cmake() -> Result {
    if has("cmake", "--version") {
        return Ok(());
    }
    eprintln!("xtask: cmake is missing; installing it with apt-get");
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let (program, prefix): (&str, &[&str]) = if is_root {
        ("apt-get", &[])
    } else {
        ("sudo", &["-n", "apt-get"])
    };
    let with = |rest: &[&'static str]| -> Vec<&str> {
        prefix.iter().copied().chain(rest.iter().copied()).collect()
    };
    run(program, &with(&["update", "-qq"]), &[])?;
    run(
        program,
        &with(&["install", "-y", "-qq", "cmake"]),
        &[("DEBIAN_FRONTEND", "noninteractive")],
    )
    .map_err(|e| format!("{e}; install cmake by hand (apt-get install -y cmake)"))
}

/// Installs the pinned dev server into the cache unless it is there; returns its path.
fn install_server() -> Result<PathBuf> {
    let binary = location::server_binary();
    if binary.is_file() {
        eprintln!("xtask: dev server present: {}", binary.display());
        return Ok(binary);
    }
    install_cmake()?;
    let root = location::server_root();
    eprintln!(
        "xtask: installing {} {} (about 4 minutes on 2 cores)",
        location::SERVER_CRATE,
        location::SERVER_VERSION
    );
    run(
        "cargo",
        &[
            "install",
            location::SERVER_CRATE,
            "--version",
            &format!("={}", location::SERVER_VERSION),
            "--ignore-rust-version",
            "--root",
            &root.to_string_lossy(),
        ],
        &[],
    )?;
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(format!(
            "installed {} but {} is missing",
            location::SERVER_CRATE,
            binary.display()
        ))
    }
}

/// Installs the pinned mdBook into the cache unless it is there; returns its path.
fn install_mdbook() -> Result<PathBuf> {
    let root = location::cache_dir().join(format!("mdbook-{MDBOOK_VERSION}"));
    let binary = root.join("bin").join("mdbook");
    if binary.is_file() {
        eprintln!("xtask: mdbook present: {}", binary.display());
        return Ok(binary);
    }
    run(
        "cargo",
        &[
            "install",
            "mdbook",
            "--version",
            &format!("={MDBOOK_VERSION}"),
            "--locked",
            "--root",
            &root.to_string_lossy(),
        ],
        &[],
    )?;
    Ok(binary)
}

fn install_all() -> Result<(PathBuf, PathBuf)> {
    Ok((install_server()?, install_mdbook()?))
}

/// Runs the dev server in the foreground on 127.0.0.1, its data kept under the cache directory
/// (one directory per port), until it is stopped.
fn run_server(server: &Path, port: Option<&String>) -> Result {
    let port = port.map_or("27017", String::as_str);
    if port.parse::<u16>().is_err() {
        return Err(format!("`{port}` is not a port number"));
    }
    let data = location::cache_dir().join(format!("dev-data-{port}"));
    std::fs::create_dir_all(&data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
    eprintln!(
        "xtask: the development server on mongodb://127.0.0.1:{port}, data in {}; Ctrl-C stops it",
        data.display()
    );
    let data = data.to_string_lossy();
    run(
        &server.to_string_lossy(),
        &[
            "--host",
            "127.0.0.1",
            "--port",
            port,
            "--storage-path",
            &data,
        ],
        &[],
    )
}

/// The example names declared in examples/Cargo.toml.
fn example_names() -> Result<Vec<String>> {
    let manifest = std::fs::read_to_string(root().join("examples/Cargo.toml"))
        .map_err(|e| format!("cannot read examples/Cargo.toml: {e}"))?;
    let mut names = Vec::new();
    let mut in_example = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_example = line == "[[example]]";
        } else if in_example {
            if let Some(value) = line
                .strip_prefix("name")
                .map(str::trim)
                .and_then(|l| l.strip_prefix('='))
            {
                names.push(value.trim().trim_matches('"').to_owned());
            }
        }
    }
    Ok(names)
}

fn run_examples(server: &Path) -> Result {
    let server = server.to_string_lossy();
    // All at once (both cores busy), then each run finds its program built.
    run("cargo", &["build", "--workspace", "--examples"], &[])?;
    let mut printed = String::new();
    for name in example_names()? {
        printed.push_str(&run_captured(
            "cargo",
            &["run", "--quiet", "-p", "odm-examples", "--example", &name],
            &[(location::SERVER_ENV, &server)],
        )?);
    }
    check_transcripts(&printed)?;
    diagrams::check()
}

/// Like [`run`], also returning what the command printed on standard output (which is
/// printed as well).
fn run_captured(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<String> {
    eprintln!("xtask: $ {program} {}", args.join(" "));
    let output = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{stdout}");
    if output.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "`{program} {}` failed ({})",
            args.join(" "),
            output.status
        ))
    }
}

/// The commands the guide shows (lines such as `update products: updates [...]` in its
/// `text` blocks) are pasted from what the examples print: each must still be printed by one
/// of them, dates and the examples' database names aside, so that a change to what an operation sends cannot leave the guide
/// showing the old command.
fn check_transcripts(printed: &str) -> Result {
    const COMMANDS: [&str; 10] = [
        "find",
        "update",
        "findAndModify",
        "insert",
        "delete",
        "aggregate",
        "getMore",
        "commitTransaction",
        "abortTransaction",
        "createIndexes",
    ];
    fn normalized(line: &str) -> String {
        // `DateTime("2026-11-24T08:02:24.95Z")` and the guide's `DateTime("...")` alike.
        let mut out = String::new();
        let mut rest = line.trim();
        while let Some(at) = rest.find("DateTime(\"") {
            out.push_str(&rest[..at]);
            out.push_str("DateTime(..)");
            let after = &rest[at + "DateTime(\"".len()..];
            rest = after.find("\")").map_or("", |end| &after[end + 2..]);
        }
        out.push_str(rest);
        database_names(&out)
    }
    /// `odm_feed_3599` (an example's database, named after its process) as `odm_feed_…`.
    fn database_names(line: &str) -> String {
        let mut out = String::new();
        let mut rest = line;
        while let Some(at) = rest.find("\"odm_") {
            let name_start = at + 1;
            let name_len = rest[name_start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len() - name_start);
            let name = &rest[name_start..name_start + name_len];
            let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
            out.push_str(&rest[..name_start]);
            if stem.len() < name.len() && stem.ends_with('_') {
                out.push_str(stem);
                out.push('…');
            } else {
                out.push_str(name);
            }
            rest = &rest[name_start + name_len..];
        }
        out.push_str(rest);
        out
    }
    let is_command = |line: &str| {
        let line = line.trim();
        line.split_once(' ').is_some_and(|(name, rest)| {
            COMMANDS.contains(&name)
                && rest
                    .split_once(": ")
                    .is_some_and(|(coll, _)| !coll.is_empty() && !coll.contains(' '))
        })
    };
    let printed: std::collections::HashSet<String> = printed.lines().map(normalized).collect();
    let mut stale = Vec::new();
    let dir = root().join("book/src");
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    chapters.sort();
    for chapter in chapters {
        let text = std::fs::read_to_string(&chapter)
            .map_err(|e| format!("cannot read {}: {e}", chapter.display()))?;
        let mut in_text_block = false;
        for (i, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                in_text_block = !in_text_block && line.trim() == "```text";
                continue;
            }
            if in_text_block && is_command(line) && !printed.contains(&normalized(line)) {
                let name = chapter.file_name().unwrap_or_default().to_string_lossy();
                stale.push(format!("  book/src/{name}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    if stale.is_empty() {
        eprintln!("xtask: every command the guide shows is printed by an example");
        Ok(())
    } else {
        Err(format!(
            "the guide shows commands no example prints any more (paste the examples' \
             current output):\n{}",
            stale.join("\n")
        ))
    }
}

/// The benchmark binaries in bench/src/bin.
fn bench_names() -> Result<Vec<String>> {
    let dir = root().join("bench/src/bin");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.path()
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    Ok(names)
}

fn run_benches(server: &Path, only: Option<&String>) -> Result {
    let server = server.to_string_lossy();
    for name in bench_names()? {
        if only.is_some_and(|o| *o != name) {
            continue;
        }
        run(
            "cargo",
            &[
                "run",
                "--quiet",
                "--release",
                "-p",
                "odm-bench",
                "--bin",
                &name,
            ],
            &[(location::SERVER_ENV, &server)],
        )?;
    }
    Ok(())
}

/// Free space, in GiB, on the file system holding `path` (from `df`; `None` when unknown).
fn free_gib(path: &Path) -> Option<f64> {
    let out = Command::new("df").arg("-Pk").arg(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let kib: f64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    Some(kib / (1024.0 * 1024.0))
}

/// The test build writes about 2.5 GB (debug artifacts plus the compile-fail tests' own
/// build); say so up front rather than fail at a linker with "No space left on device".
const NEEDED_GIB: f64 = 4.0;

fn check_disk() {
    match free_gib(&root()) {
        Some(free) if free < NEEDED_GIB => eprintln!(
            "xtask: warning: only {free:.1} GiB free; a full test build needs about \
             {NEEDED_GIB:.0} GiB (remove old `target` directories or run `cargo clean`)"
        ),
        Some(free) => eprintln!("xtask: {free:.1} GiB free on disk"),
        None => {}
    }
}

/// The modules of the test suite that populate, run again under each plan.
const POPULATE_TESTS: [&str; 12] = [
    "populate",
    "populate_plans",
    "poly",
    "kinds",
    "kinds_rules",
    "hostile",
    "expanded",
    "paging",
    "reference_ring",
    "index_use",
    "tracing",
    "transactions",
];

fn run_all() -> Result {
    check_disk();
    let (server, mdbook) = install_all()?;
    let server_s = server.to_string_lossy().into_owned();
    let env = [(location::SERVER_ENV, server_s.as_str())];
    run("cargo", &["fmt", "--all", "--", "--check"], &[])?;
    run(
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    // The examples first, as programs: the console's process tests run one, and would build
    // it themselves (`-p odm-examples`, which disturbs what the runs below find built).
    run("cargo", &["build", "--workspace", "--examples"], &[])?;
    // Every target that holds tests (the examples hold none; `run_examples` runs them). Every
    // cargo command here names the whole workspace, so that the dependencies' features are
    // the same in all of them and nothing is built twice.
    run(
        "cargo",
        &["test", "--workspace", "--lib", "--bins", "--tests"],
        &env,
    )?;
    run_populate_plans(&env)?;
    run("cargo", &["test", "--workspace", "--doc"], &env)?;
    run(
        "cargo",
        &["doc", "--workspace", "--no-deps", "--all-features"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    run(&mdbook.to_string_lossy(), &["build", "book"], &[])?;
    run_examples(&server)?;
    run_package()
}

/// The tests that populate, again with every populate forced to each plan (the first run
/// lets the cost rule choose).
fn run_populate_plans(env: &[(&str, &str)]) -> Result {
    let filters: Vec<String> = POPULATE_TESTS.iter().map(|m| format!("{m}::")).collect();
    // The same packages and targets as the first run: another selection (`-p odm-tests`, or
    // `--test suite` alone) resolves the dependencies' features otherwise and builds the
    // runtime, the driver and the suite again. The filters pick the suite's modules (and the
    // few unit tests under the same names, which do not read the plan).
    let mut populate_tests = vec!["test", "--workspace", "--lib", "--bins", "--tests", "--"];
    populate_tests.extend(filters.iter().map(String::as_str));
    for plan in ["in", "lookup"] {
        let mut with_plan = env.to_vec();
        with_plan.push(("ODM_TEST_POPULATE_PLAN", plan));
        run("cargo", &populate_tests, &with_plan)?;
    }
    Ok(())
}

/// The tests that talk to a server: the runtime's unit tests, the integration suite and the
/// registry test, then the populate tests under each plan. The server is `MONGODB_URI`'s when
/// it is set (the tests read it), else the dev server; the dev server is installed either way,
/// since some tests start one of their own (a standalone server, a server that is killed).
fn run_suite(server: &Path) -> Result {
    match std::env::var("MONGODB_URI") {
        Ok(uri) if !uri.is_empty() => eprintln!("xtask: testing against MONGODB_URI"),
        _ => eprintln!("xtask: testing against the dev server"),
    }
    let server_s = server.to_string_lossy().into_owned();
    let env = [(location::SERVER_ENV, server_s.as_str())];
    run(
        "cargo",
        &["test", "-p", "mongo-odm", "--all-features", "--lib"],
        &env,
    )?;
    run(
        "cargo",
        &[
            "test",
            "-p",
            "odm-tests",
            "--test",
            "suite",
            "--test",
            "registry",
        ],
        &env,
    )?;
    run_populate_plans(&env)
}

/// The published crates, in dependency order.
const PUBLISHED: [&str; 2] = ["mongo-odm-derive", "mongo-odm"];

/// Packages the published crates as `cargo publish` would, and builds each from its package
/// (the verification): a file the build needs but the package leaves out fails here rather
/// than on crates.io. The runtime depends on the derive at its exact version, which crates.io
/// does not have until both are published: packaged together, cargo resolves it from the
/// derive's package (cargo 1.90 and later).
///
/// The verification builds the whole dependency tree again, with the features of the published
/// crates alone: it builds in a target directory of its own in the cache directory, which a
/// clone shares with the clones before it, so that only the first run on a machine pays for it.
fn run_package() -> Result {
    let target = location::cache_dir().join("package-target");
    let target = target.to_string_lossy().into_owned();
    let mut args = vec![
        "package",
        "--locked",
        "--allow-dirty",
        "--target-dir",
        target.as_str(),
    ];
    for name in PUBLISHED {
        args.extend(["-p", name]);
    }
    run("cargo", &args, &[])
}
