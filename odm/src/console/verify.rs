//! `verify` and `repair`: every sweep the catalog calls for, a summary table and the bad
//! documents.

use std::future::Future;
use std::pin::Pin;

use bson::Bson;
use clap::Args;
use serde_json::{json, Value};

use super::report::{json_of, table, Report};
use crate::denormalize::CopyReport;
use crate::relations::{InverseIssue, InverseReport};
use crate::subset::SubsetReport;
use crate::tree::{TreeIssue, TreeReport};
use crate::{Odm, Result};

#[derive(Args, Debug)]
pub(super) struct SweepArgs {
    /// Documents read per batch by the sweep of copies.
    #[arg(long, default_value_t = 500)]
    batch_size: usize,
    /// The bad documents listed at most (every one is counted; all of them with `--json`).
    #[arg(long, default_value_t = 50)]
    show: usize,
}

type SubsetSweep =
    for<'a> fn(&'a Odm, bool) -> Pin<Box<dyn Future<Output = Result<SubsetReport>> + Send + 'a>>;

/// The sweep of one subset pair, named to the console with its type.
#[derive(Clone, Copy)]
pub(super) struct SubsetViews {
    sweep: SubsetSweep,
}

impl std::fmt::Debug for SubsetViews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SubsetViews")
    }
}

fn subset_sweep<D: crate::subset::Subset>(
    odm: &Odm,
    repair: bool,
) -> Pin<Box<dyn Future<Output = Result<SubsetReport>> + Send + '_>> {
    Box::pin(async move {
        let pair = odm.subset::<D>();
        if repair {
            pair.repair().await
        } else {
            pair.verify().await
        }
    })
}

impl SubsetViews {
    pub(super) fn of<D: crate::subset::Subset>() -> Self {
        SubsetViews {
            sweep: subset_sweep::<D>,
        }
    }
}

/// One line of the summary: what was swept, how many documents, problems, repairs.
struct Line {
    check: String,
    checked: u64,
    problems: u64,
    repaired: u64,
}

/// One document found wrong.
struct Bad {
    check: String,
    collection: String,
    id: Bson,
    /// The field at fault, when there is one (`parts.name`, `ancestors`).
    path: Option<String>,
    detail: String,
}

/// Sweeps (and repairs); a repair is followed by a verifying sweep, whose findings (what the
/// repair could not fix, or what changed meanwhile) decide the exit code.
pub(super) async fn sweep(
    odm: &Odm,
    subsets: &[SubsetViews],
    args: &SweepArgs,
    repair: bool,
) -> Result<Report> {
    let (lines, bad) = collect(odm, subsets, args, repair).await?;
    let left = if repair {
        Some(collect(odm, subsets, args, false).await?.1)
    } else {
        None
    };
    Ok(summary(&lines, &bad, left.as_deref(), args.show))
}

async fn collect(
    odm: &Odm,
    subsets: &[SubsetViews],
    args: &SweepArgs,
    repair: bool,
) -> Result<(Vec<Line>, Vec<Bad>)> {
    let mut lines = Vec::new();
    let mut bad = Vec::new();
    let copies = odm
        .verify_copies()
        .batch_size(args.batch_size)
        .repair(repair)
        .await?;
    copies_lines(&copies, &mut lines, &mut bad);
    let mut trees: Vec<(&'static str, crate::tree::TreeInfo)> = Vec::new();
    for e in odm.catalog().models() {
        if let Some(info) = e.tree {
            if !trees.iter().any(|(c, _)| *c == e.collection) {
                trees.push((e.collection, info));
            }
        }
    }
    for (collection, info) in trees {
        let report = crate::tree::sweep(odm, collection, info, repair).await?;
        tree_lines(collection, info, &report, &mut lines, &mut bad);
    }
    for s in subsets {
        let report = (s.sweep)(odm, repair).await?;
        subset_lines(&report, &mut lines, &mut bad);
    }
    Ok((lines, bad))
}

fn copies_lines(report: &CopyReport, lines: &mut Vec<Line>, bad: &mut Vec<Bad>) {
    let inverse_repairs: u64 = report.two_way.iter().map(|(_, r)| r.parents_repaired).sum();
    lines.push(Line {
        check: "copies".to_owned(),
        checked: report.documents_checked,
        problems: (report.issues.len() + report.bad_documents.len()) as u64,
        repaired: report.repairs.saturating_sub(inverse_repairs),
    });
    for i in &report.issues {
        let detail = if i.source_missing {
            format!(
                "{} is {} (source {} no longer exists)",
                i.path, i.found, i.source
            )
        } else {
            format!(
                "{} is {} (source {} has {})",
                i.path, i.found, i.source, i.expected
            )
        };
        bad.push(Bad {
            check: "copies".to_owned(),
            collection: i.collection.to_owned(),
            id: i.id.clone(),
            path: Some(i.path.clone()),
            detail,
        });
    }
    for b in &report.bad_documents {
        bad.push(Bad {
            check: "copies".to_owned(),
            collection: b.collection.to_owned(),
            id: b.id.clone(),
            path: Some(b.path.clone()),
            detail: format!("not checked or repaired: {}", b.reason),
        });
    }
    for (pair, r) in &report.two_way {
        inverse_lines(pair, r, lines, bad);
    }
}

fn inverse_lines(pair: &str, r: &InverseReport, lines: &mut Vec<Line>, bad: &mut Vec<Bad>) {
    let check = format!("two-way {pair}");
    lines.push(Line {
        check: check.clone(),
        checked: r.parents_checked,
        problems: r.issues.len() as u64,
        repaired: r.parents_repaired,
    });
    let parents_side = pair.rsplit(' ').next().unwrap_or_default();
    let (parents, inverse) = parents_side.split_once('.').unwrap_or((parents_side, ""));
    for issue in &r.issues {
        let (parent, detail) = match issue {
            InverseIssue::MissingFromParent { parent, child } => (
                parent,
                format!("does not list the child {child} that names it"),
            ),
            InverseIssue::ExtraInParent { parent, child } => (
                parent,
                format!("lists the child {child}, which does not name it"),
            ),
        };
        bad.push(Bad {
            check: check.clone(),
            collection: parents.to_owned(),
            id: parent.clone(),
            path: (!inverse.is_empty()).then(|| inverse.to_owned()),
            detail,
        });
    }
}

fn tree_lines(
    collection: &str,
    info: crate::tree::TreeInfo,
    r: &TreeReport,
    lines: &mut Vec<Line>,
    bad: &mut Vec<Bad>,
) {
    let check = format!("tree {collection}");
    lines.push(Line {
        check: check.clone(),
        checked: r.checked,
        problems: r.issues.len() as u64,
        repaired: r.repaired,
    });
    for issue in &r.issues {
        let (id, path, detail) = match issue {
            TreeIssue::WrongAncestors {
                id,
                stored,
                expected,
            } => (
                id.clone(),
                info.ancestors,
                format!("ancestors {} instead of {}", list(stored), list(expected)),
            ),
            TreeIssue::MissingParent { id, parent, .. } => (
                id.clone(),
                info.parent,
                format!("its parent {parent} does not exist"),
            ),
            TreeIssue::Cycle { ids } => (
                ids.first().cloned().unwrap_or(Bson::Null),
                info.parent,
                format!("on a cycle of parents {} (not repaired)", list(ids)),
            ),
        };
        bad.push(Bad {
            check: check.clone(),
            collection: collection.to_owned(),
            id,
            path: Some(path.to_owned()),
            detail,
        });
    }
}

fn subset_lines(r: &SubsetReport, lines: &mut Vec<Line>, bad: &mut Vec<Bad>) {
    let check = format!("subset {} / {}", r.main, r.details);
    lines.push(Line {
        check: check.clone(),
        checked: 0,
        problems: (r.details_without_main.len() + r.main_without_details.len()) as u64,
        repaired: r.deleted,
    });
    for id in &r.details_without_main {
        bad.push(Bad {
            check: check.clone(),
            collection: r.details.to_owned(),
            id: id.clone(),
            path: None,
            detail: format!("details without their {} document", r.main),
        });
    }
    for id in &r.main_without_details {
        bad.push(Bad {
            check: check.clone(),
            collection: r.main.to_owned(),
            id: id.clone(),
            path: None,
            detail: format!("no details in {} (not repaired)", r.details),
        });
    }
}

fn list(ids: &[Bson]) -> String {
    let shown: Vec<String> = ids.iter().map(Bson::to_string).collect();
    format!("[{}]", shown.join(", "))
}

fn summary(lines: &[Line], bad: &[Bad], left: Option<&[Bad]>, show: usize) -> Report {
    let rows: Vec<Vec<String>> = lines
        .iter()
        .map(|l| {
            vec![
                l.check.clone(),
                l.checked.to_string(),
                l.problems.to_string(),
                l.repaired.to_string(),
            ]
        })
        .collect();
    let mut text = table(&["check", "checked", "problems", "repaired"], &rows);
    list_bad(&mut text, "bad documents", bad, show);
    if let Some(left) = left {
        if left.is_empty() {
            text.push_str("\nverified again: nothing left to repair\n");
        } else {
            list_bad(&mut text, "still wrong when verified again", left, show);
        }
    }
    let repaired: u64 = lines.iter().map(|l| l.repaired).sum();
    let mut json = json!({
        "command": if left.is_some() { "repair" } else { "verify" },
        "clean": bad.is_empty(),
        "repaired": repaired,
        "checks": lines.iter().map(|l| json!({
            "check": l.check, "checked": l.checked, "problems": l.problems, "repaired": l.repaired,
        })).collect::<Vec<_>>(),
        "bad_documents": bad.iter().map(bad_json).collect::<Vec<_>>(),
    });
    if let Some(left) = left {
        json["left"] = left.iter().map(bad_json).collect();
    }
    let problems = !left.unwrap_or(bad).is_empty();
    Report::new(text, json, problems)
}

fn list_bad(text: &mut String, title: &str, bad: &[Bad], show: usize) {
    if bad.is_empty() {
        return;
    }
    text.push_str(&format!("\n{title}:\n"));
    for b in bad.iter().take(show) {
        text.push_str(&format!(
            "  {} {} {}: {}\n",
            b.check, b.collection, b.id, b.detail
        ));
    }
    if bad.len() > show {
        text.push_str(&format!("  ... and {} more\n", bad.len() - show));
    }
}

fn bad_json(b: &Bad) -> Value {
    json!({
        "check": b.check,
        "collection": b.collection,
        "id": json_of(&b.id),
        "path": b.path,
        "detail": b.detail,
    })
}
