//! `cargo xtask derive-time`: what the derive costs at compile time. Generates two crates of the
//! same 100 structs (ten modules of ten), one deriving `Model`/`Embed` with relations (a
//! reference to the previous model, a bounded many-reference to the next, an index, an embedded
//! type), the other deriving serde's traits only; then times, for each, a full `cargo check` and
//! a full debug build of the crate (its dependencies built beforehand), and an incremental
//! `cargo check` after touching one module. Medians of `DERIVE_TIME_RUNS` runs (default 3),
//! interleaved, and the ratios, of the wall-clock time and (on Linux) of the CPU time the
//! compiler used, which a busy or shared machine disturbs less.
//!
//! `cargo xtask derive-time --instructions` counts instead the instructions of one `rustc` check
//! of each crate under valgrind's cachegrind (a few minutes): a count that stays within 0.01%
//! from run to run where the clock moves by 10% on a busy or virtual machine, so that a change
//! to the derive is judged by one run of each version.
//!
//! The crates live under `target/derive-time/` with their own workspace and target directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::{root, Result};

const MODELS: usize = 100;
const MODULES: usize = 10;

/// One generated struct: `odm` says whether it derives `Model` with its relations.
fn model(i: usize, odm: bool) -> String {
    let derive = if odm {
        "#[derive(odm::Model, serde::Serialize, serde::Deserialize, Debug, Clone)]\n#[odm(collection = \"m"
            .to_owned()
            + &i.to_string()
            + "\")]"
    } else {
        "#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]".to_owned()
    };
    let embed_derive = if odm {
        "#[derive(odm::Embed, serde::Serialize, serde::Deserialize, Debug, Clone)]"
    } else {
        "#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]"
    };
    let attr = |a: &str| if odm { a.to_owned() } else { String::new() };
    let prev = (i + MODELS - 1) % MODELS;
    let next = (i + 1) % MODELS;
    let module = |n: usize| format!("crate::m{}", n / (MODELS / MODULES));
    format!(
        "{embed_derive}
pub struct Address{i} {{
    pub street: String,
    pub city: String,
    pub zip: String,
}}

{derive}
pub struct Model{i} {{
    #[serde(rename = \"_id\")]
    pub id: odm::bson::oid::ObjectId,
    {index}
    pub name: String,
    pub qty: i64,
    pub price: f64,
    pub tags: Vec<String>,
    pub note: Option<String>,
    {embed}
    pub address: Address{i},
    {reference}
    pub previous: Option<{prev_ty}>,
    {many}
    pub next: Vec<{next_ty}>,
}}
",
        index = attr("#[index]"),
        embed = attr("#[embed]"),
        reference = attr("#[reference]"),
        many = attr("#[reference(many, max = 50)]"),
        // Without odm, a reference is the id it stores.
        prev_ty = if odm {
            format!("odm::Ref<{}::Model{prev}>", module(prev))
        } else {
            "odm::bson::oid::ObjectId".to_owned()
        },
        next_ty = if odm {
            format!("odm::Ref<{}::Model{next}>", module(next))
        } else {
            "odm::bson::oid::ObjectId".to_owned()
        },
    )
}

fn write(path: &Path, text: &str) -> Result {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes the workspace of the two crates; returns its directory.
fn generate() -> Result<PathBuf> {
    let dir = root().join("target/derive-time");
    let odm = root().join("odm");
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nresolver = \"2\"\nmembers = [\"with_odm\", \"serde_only\"]\n",
    )?;
    // The project's lock file: the same dependency versions, resolved offline.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock"))
        .map_err(|e| format!("cannot copy Cargo.lock: {e}"))?;
    for (name, with_odm) in [("with_odm", true), ("serde_only", false)] {
        write(
            &dir.join(name).join("Cargo.toml"),
            &format!(
                "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\nodm = {{ package = \"mongo-odm\", path = {:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n",
                odm.to_string_lossy()
            ),
        )?;
        let mut lib = String::from("#![allow(dead_code)]\n");
        for m in 0..MODULES {
            lib.push_str(&format!("pub mod m{m};\n"));
            let mut module = String::new();
            for i in m * (MODELS / MODULES)..(m + 1) * (MODELS / MODULES) {
                module.push_str(&model(i, with_odm));
                module.push('\n');
            }
            write(&dir.join(name).join(format!("src/m{m}.rs")), &module)?;
        }
        write(&dir.join(name).join("src/lib.rs"), &lib)?;
    }
    Ok(dir)
}

/// The CPU time (user and system) of the children this process has waited for, from
/// `/proc/self/stat` (Linux; `None` elsewhere). Clock ticks are taken as 100 per second, the
/// value Linux reports to user space on every architecture it runs on.
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // cutime and cstime are the 16th and 17th fields of the line, 14th and 15th after it.
    let ticks: u64 = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// What one run took: wall-clock time, and the CPU time of cargo and the compiler.
#[derive(Clone, Copy)]
struct Took {
    wall: Duration,
    cpu: Option<Duration>,
}

/// Runs `cargo <args>` in `dir`, returning how long it took.
fn cargo(dir: &Path, args: &[&str], incremental: bool) -> Result<Took> {
    let cpu_before = children_cpu();
    let started = Instant::now();
    let out = Command::new("cargo")
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env("CARGO_INCREMENTAL", if incremental { "1" } else { "0" })
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo {}` failed in {}:\n{}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let wall = started.elapsed();
    let cpu = children_cpu()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    Ok(Took { wall, cpu })
}

/// Makes cargo see `file` as changed.
fn touch(file: &Path) -> Result {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    std::fs::write(file, text).map_err(|e| format!("{}: {e}", file.display()))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

pub(crate) fn run() -> Result {
    let runs: usize = std::env::var("DERIVE_TIME_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(3);
    let dir = generate()?;
    eprintln!("xtask: building the dependencies of the generated crates once");
    for name in ["with_odm", "serde_only"] {
        cargo(&dir, &["check", "-p", name], false)?;
        cargo(&dir, &["build", "-p", name], false)?;
    }
    let lines = |name: &str| -> usize {
        (0..MODULES)
            .filter_map(|m| {
                std::fs::read_to_string(dir.join(name).join(format!("src/m{m}.rs"))).ok()
            })
            .map(|t| t.lines().count())
            .sum()
    };
    println!(
        "{MODELS} models in {MODULES} modules: with_odm {} source lines, serde_only {}",
        lines("with_odm"),
        lines("serde_only")
    );
    type Step<'a> = (&'a str, &'a [&'a str], bool, &'a str);
    let steps: [Step<'_>; 3] = [
        ("full cargo check", &["check", "-p"], false, "src/lib.rs"),
        ("full debug build", &["build", "-p"], false, "src/lib.rs"),
        (
            "incremental check, one module touched",
            &["check", "-p"],
            true,
            "src/m3.rs",
        ),
    ];
    for (what, args, incremental, file) in steps {
        let mut times: [Vec<Took>; 2] = [Vec::new(), Vec::new()];
        if incremental {
            // The incremental cache, filled once.
            for name in ["with_odm", "serde_only"] {
                cargo(&dir, &[args[0], args[1], name], true)?;
            }
        }
        for r in 0..runs {
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let name = ["with_odm", "serde_only"][i];
                touch(&dir.join(name).join(file))?;
                times[i].push(cargo(&dir, &[args[0], args[1], name], incremental)?);
            }
        }
        let [odm, serde] = times
            .clone()
            .map(|t| median(t.iter().map(|t| t.wall).collect()));
        println!(
            "{what:<40} with_odm {:>6.2} s   serde_only {:>6.2} s   ratio {:.2} (target <= 1.3)",
            odm.as_secs_f64(),
            serde.as_secs_f64(),
            odm.as_secs_f64() / serde.as_secs_f64()
        );
        let cpu = times.map(|t| {
            t.iter()
                .map(|t| t.cpu)
                .collect::<Option<Vec<_>>>()
                .map(median)
        });
        if let [Some(odm), Some(serde)] = cpu {
            println!(
                "{:<40} with_odm {:>6.2} s   serde_only {:>6.2} s   ratio {:.2} (CPU time)",
                "",
                odm.as_secs_f64(),
                serde.as_secs_f64(),
                odm.as_secs_f64() / serde.as_secs_f64()
            );
        }
    }
    Ok(())
}

/// The instructions of one `rustc` check of each crate, counted by cachegrind (the compiler
/// runs as cargo's wrapper of the workspace's crates, the generated two alone).
pub(crate) fn instructions() -> Result {
    let dir = generate()?;
    eprintln!("xtask: building the dependencies of the generated crates once");
    for name in ["with_odm", "serde_only"] {
        cargo(&dir, &["check", "-p", name], false)?;
    }
    let wrapper = dir.join("cachegrind.sh");
    // Only the generated crate's compilation runs under valgrind (cargo asks the compiler
    // other things through the wrapper too).
    write(
        &wrapper,
        "#!/bin/sh\ncase \"$*\" in\n  *\"--crate-name $ODM_CACHEGRIND_CRATE \"*) exec valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=\"$ODM_CACHEGRIND_OUT\" \"$@\" ;;\n  *) exec \"$@\" ;;\nesac\n",
    )?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", wrapper.display()))?;
    }
    let mut counts = Vec::new();
    for name in ["with_odm", "serde_only"] {
        touch(&dir.join(name).join("src/lib.rs"))?;
        let out_file = dir.join(format!("cachegrind.{name}.out"));
        let out = Command::new("cargo")
            .args(["check", "--offline", "-p", name])
            .current_dir(&dir)
            .env("CARGO_INCREMENTAL", "0")
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env("RUSTC_WORKSPACE_WRAPPER", &wrapper)
            .env("ODM_CACHEGRIND_CRATE", name)
            .env("ODM_CACHEGRIND_OUT", &out_file)
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`cargo check -p {name}` under cachegrind failed (is valgrind installed?):\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let text = std::fs::read_to_string(&out_file)
            .map_err(|e| format!("{}: {e}", out_file.display()))?;
        let count: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("summary:"))
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| format!("{}: no summary line", out_file.display()))?;
        counts.push(count);
    }
    println!(
        "full cargo check, instructions: with_odm {:.2} G   serde_only {:.2} G   ratio {:.3} (target <= 1.3)",
        counts[0] as f64 / 1e9,
        counts[1] as f64 / 1e9,
        counts[0] as f64 / counts[1] as f64
    );
    Ok(())
}
