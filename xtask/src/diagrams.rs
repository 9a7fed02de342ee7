//! The diagrams the guide shows (`book/src/diagrams/<example>.mmd`) are what the examples
//! that declare the models print when run with `--diagram` (`odm::diagram::mermaid` of the
//! models linked into them): `check` fails when a committed diagram is no longer what its
//! example prints, `write` writes them again.

use std::path::PathBuf;
use std::process::Command;

use crate::{root, Result};

/// The examples whose diagram the guide shows.
const EXAMPLES: [&str; 2] = ["parts_catalog", "library"];

/// The committed diagram of `example`.
fn committed(example: &str) -> PathBuf {
    root()
        .join("book/src/diagrams")
        .join(format!("{example}.mmd"))
}

/// What `example` prints with `--diagram` (which needs no server).
fn printed(example: &str) -> Result<String> {
    let args = [
        "run",
        "--quiet",
        "-p",
        "odm-examples",
        "--example",
        example,
        "--",
        "--diagram",
    ];
    eprintln!("xtask: $ cargo {}", args.join(" "));
    let output = Command::new("cargo")
        .args(args)
        .current_dir(root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("the example {example} failed to print its diagram"));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("{example} printed no text: {e}"))
}

/// Fails, naming them, when a committed diagram differs from what its example prints.
pub fn check() -> Result {
    let mut stale = Vec::new();
    for example in EXAMPLES {
        let path = committed(example);
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        if on_disk != printed(example)? {
            stale.push(format!("  book/src/diagrams/{example}.mmd"));
        }
    }
    if stale.is_empty() {
        eprintln!("xtask: every diagram the guide shows is what its example prints");
        Ok(())
    } else {
        Err(format!(
            "these diagrams are not what their example prints (write them again with \
             `cargo xtask diagrams`):\n{}",
            stale.join("\n")
        ))
    }
}

/// Writes each committed diagram from what its example prints.
pub fn write() -> Result {
    for example in EXAMPLES {
        let path = committed(example);
        std::fs::write(&path, printed(example)?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("xtask: wrote {}", path.display());
    }
    Ok(())
}
