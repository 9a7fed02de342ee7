//! Which copies take from which: the next level of a cascade, the cycles the copies may form,
//! and the order in which a sweep repairs them. Reads the catalog; sends nothing.

use super::{CopyInfo, CopyKind};
use crate::catalog::Catalog;
pub(super) use crate::document::overlaps;
use crate::{Error, Result};

/// The paths of its dependent that writing `copy` changes: the copied fields of a single
/// summary, else the copy field itself.
pub(crate) fn written_paths(copy: &CopyInfo) -> Vec<String> {
    match &copy.kind {
        CopyKind::Summary { array: false, .. } => copy
            .fields
            .iter()
            .map(|(_, to)| format!("{}.{to}", copy.path))
            .collect(),
        _ => vec![copy.path.clone()],
    }
}

/// Whether `next` takes anything from `paths` of its source: a copied field, or for a latest-N
/// array one of its sort keys.
fn reads_any(next: &CopyInfo, paths: &[String]) -> bool {
    paths.iter().any(|p| {
        next.is_touched_by(p)
            || matches!(&next.kind, CopyKind::Latest { sort, .. } if sort.keys().any(|k| overlaps(k, p)))
    })
}

/// The copies taking from what `copy` writes: the next level of a cascade that writes `copy`.
pub(crate) fn next_level(catalog: &Catalog, copy: &CopyInfo) -> Vec<CopyInfo> {
    let written = written_paths(copy);
    catalog
        .copies()
        .iter()
        .filter(|next| next.source == copy.dependent && reads_any(next, &written))
        .cloned()
        .collect()
}

/// The first cycle among `copies`, as `collection.path` names, each copying the next, the
/// last the first again; `None` when copies of copies always end.
pub(crate) fn find_cycle(copies: &[CopyInfo]) -> Option<Vec<String>> {
    let next: Vec<Vec<usize>> = copies
        .iter()
        .map(|c| {
            let written = written_paths(c);
            copies
                .iter()
                .enumerate()
                .filter(|(_, n)| n.source == c.dependent && reads_any(n, &written))
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    // Depth-first, colouring: 0 unseen, 1 on the current path, 2 done.
    let mut colour = vec![0u8; copies.len()];
    let mut path: Vec<usize> = Vec::new();
    fn visit(
        i: usize,
        next: &[Vec<usize>],
        colour: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        colour[i] = 1;
        path.push(i);
        for &j in &next[i] {
            if colour[j] == 1 {
                let start = path.iter().position(|&k| k == j).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(j);
                return Some(cycle);
            }
            if colour[j] == 0 {
                if let Some(c) = visit(j, next, colour, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        colour[i] = 2;
        None
    }
    for i in 0..copies.len() {
        if colour[i] == 0 {
            if let Some(cycle) = visit(i, &next, &mut colour, &mut path) {
                // Found in the order of the cascade (each copied by the next): reversed, each
                // copies the next.
                return Some(
                    cycle
                        .into_iter()
                        .rev()
                        .map(|i| format!("{}.{}", copies[i].dependent, copies[i].path))
                        .collect(),
                );
            }
        }
    }
    None
}

/// Refuses to cascade when the copies of every linked model copy each other in a circle
/// ([`Error::CopyCycle`]); [`check_copies_in`] for a handle's [`Catalog`]. Sends nothing.
pub fn check_copies() -> Result<()> {
    check_copies_in(&Catalog::linked())
}

/// Refuses to cascade when the copies of `catalog` copy each other in a circle
/// ([`Error::CopyCycle`]). Computed once per catalog, when first asked; sends nothing.
pub fn check_copies_in(catalog: &Catalog) -> Result<()> {
    match catalog
        .copy_cycle
        .get_or_init(|| find_cycle(catalog.copies()))
    {
        None => Ok(()),
        Some(cycle) => Err(Error::CopyCycle {
            cycle: cycle.clone(),
        }),
    }
}

/// Every registered copy, each after the copies it takes from (a copy of a copy after the
/// copy), so that a sweep repairing them in this order compares each with a source it has
/// already repaired. Refused when the copies form a cycle.
pub(crate) fn in_cascade_order(catalog: &Catalog) -> Result<Vec<&CopyInfo>> {
    check_copies_in(catalog)?;
    let copies = catalog.copies();
    // Depth: 1 for a copy of an original field, one more than the deepest copy it takes from.
    fn depth(i: usize, copies: &[CopyInfo], memo: &mut [usize]) -> usize {
        if memo[i] == 0 {
            let c = &copies[i];
            let above = (0..copies.len())
                .filter(|&j| {
                    copies[j].dependent == c.source && reads_any(c, &written_paths(&copies[j]))
                })
                .map(|j| depth(j, copies, memo))
                .max()
                .unwrap_or(0);
            memo[i] = above + 1;
        }
        memo[i]
    }
    let mut memo = vec![0; copies.len()];
    let mut order: Vec<(usize, &CopyInfo)> = (0..copies.len())
        .map(|i| (depth(i, copies, &mut memo), &copies[i]))
        .collect();
    order.sort_by_key(|(d, _)| *d);
    Ok(order.into_iter().map(|(_, c)| c).collect())
}

/// Before a write that cascades `copies`: refuses it when they are copied further and the
/// registry holds a cycle, so that nothing is written. Sends nothing.
pub(crate) fn refuse_cycles(catalog: &Catalog, copies: &[CopyInfo]) -> Result<()> {
    if copies.iter().any(|c| !next_level(catalog, c).is_empty()) {
        check_copies_in(catalog)?;
    }
    Ok(())
}
