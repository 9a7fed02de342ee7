//! Rules of references: their type, their target, their delete rule, their other side.

use syn::ext::IdentExt;
use syn::Type;

use super::super::attr::{OnDelete, ReferenceAttr};
use super::super::shape::ref_inner;
use super::super::types::plain_value_type;
use super::super::{Container, Derive, Field, Shape};
use crate::ctxt::Ctxt;

/// Whether a reference field's type fits its attribute: `Ref<T>` or `Option<Ref<T>>` for
/// `#[reference]` and `#[parent]`, `Vec<Ref<T>>` for `#[reference(many)]`.
pub(super) fn reference_shape_fits(f: &Field<'_>, r: &ReferenceAttr) -> bool {
    if r.poly.is_some() {
        return match (r.many.is_some(), f.shape) {
            (false, Shape::Plain) => ref_inner(f.ty).is_none(),
            (false, Shape::Option(inner)) | (true, Shape::Vec(inner)) => ref_inner(inner).is_none(),
            _ => false,
        };
    }
    match (r.parent, r.many.is_some(), f.shape) {
        (_, false, Shape::Plain) => ref_inner(f.ty).is_some(),
        (_, false, Shape::Option(inner)) => ref_inner(inner).is_some(),
        (false, true, Shape::Vec(inner)) => ref_inner(inner).is_some(),
        _ => false,
    }
}

/// `#[reference]` holds `Ref<T>` or `Option<Ref<T>>`; `#[reference(many)]` holds `Vec<Ref<T>>`;
/// `#[parent]` holds `Ref<T>` or `Option<Ref<T>>`.
pub(super) fn check_reference_shape(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        // A copy that is also a reference is reported by `check_copy_alone`.
        if r.malformed || reference_shape_fits(f, r) || f.denormalize.is_some() {
            continue;
        }
        let refs = f.ref_target().is_some();
        if r.poly.is_some() {
            let message = match (r.many.is_some(), f.shape) {
                _ if refs => "`poly` holds an enum of references to several models (deriving `PolyRef`); a `Ref<T>` references one model: remove `poly`",
                (true, _) => "`#[reference(poly, many)]` holds an array of polymorphic references: `Vec<Subject>`, where `Subject` derives `PolyRef`",
                (false, _) => "an array of polymorphic references is `#[reference(poly, many, max = N)]`",
            };
            cx.error_spanned_by(f.ty, message);
            continue;
        }
        let message = match (r.parent, r.many.is_some(), f.shape) {
            (true, _, Shape::Vec(_)) => "`#[parent]` holds one reference to the parent (`Ref<Parent>` or `Option<Ref<Parent>>`); an array of references is `#[reference(many, max = N)]`".to_owned(),
            (true, _, _) => "`#[parent]` holds one reference to the parent: `Ref<Parent>` or `Option<Ref<Parent>>`".to_owned(),
            (false, true, Shape::Plain | Shape::Option(_)) if refs => "`#[reference(many)]` holds an array of references, `Vec<Ref<Target>>`; for one reference, remove `many`".to_owned(),
            (false, true, _) => "`#[reference(many)]` holds an array of references: `Vec<Ref<Target>>`".to_owned(),
            (false, false, Shape::Vec(_)) if refs => "an array of references is `#[reference(many, max = N)]`".to_owned(),
            // A struct where its reference belongs: name the fix.
            (false, false, Shape::Plain) if matches!(f.ty, Type::Path(_)) && plain_value_type(f.ty).is_none() => {
                let ty = f.ty;
                let ty = quote::quote!(#ty).to_string().replace(' ', "");
                format!("`#[reference]` holds a reference, not the document itself: `Ref<{ty}>`, stored as the referenced document's `_id`")
            }
            (false, false, _) => "`#[reference]` holds a reference, stored as the referenced document's `_id`: `Ref<Target>` or `Option<Ref<Target>>` (`Vec<Ref<Target>>` with `many`)".to_owned(),
        };
        cx.error_spanned_by(f.ty, message);
    }
}

/// A polymorphic reference, or one stored as DBRefs, is one-way: a two-way reference keeps
/// plain ids on both sides. DBRef storage (`#[serde(with = "odm::dbref")]`) is for a
/// `#[reference]`: a `#[parent]` is found by the parent's id.
pub(super) fn check_dbref_references(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let r = f.reference.as_ref();
        if let (Some(_), Some(inv)) = (r.and_then(|r| r.poly), r.and_then(|r| r.inverse.as_ref())) {
            cx.error_spanned_by(inv, "a polymorphic reference is one-way: `inverse` pairs a reference with a single model's field; remove `inverse`");
        }
        let Some(span) = f.dbref else { continue };
        match r {
            None => cx.error_at(span, "`odm::dbref` stores a reference as a DBRef: the field needs `#[reference]` (on `Ref<T>`, `Option<Ref<T>>` or `Vec<Ref<T>>`)"),
            Some(r) if r.parent => cx.error_at(span, "a `#[parent]` is stored as the parent's id, which `children` and `reassign` query: DBRef storage is for a `#[reference]`"),
            Some(r) if r.poly.is_some() => cx.error_at(span, "a polymorphic reference is always stored as DBRefs: remove `#[serde(with = \"odm::dbref\")]`"),
            Some(r) if r.inverse.is_some() => cx.error_at(span, "a two-way reference keeps plain ids on both sides: remove `#[serde(with = \"odm::dbref\")]` or `inverse`"),
            Some(_) => {}
        }
    }
}

/// A reference targets a model: a plain value (`Ref<String>`) cannot be referenced. (A target
/// that is a struct but not a model is reported by the compiler, at the field's type.)
pub(super) fn check_reference_target(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let (Some(r), Some(target)) = (&f.reference, f.ref_target()) else {
            continue;
        };
        if r.malformed || !reference_shape_fits(f, r) || f.is_id() {
            continue;
        }
        if let Some(what) = plain_value_type(target) {
            cx.error_spanned_by(
                target,
                format!("a reference targets a model (a struct that derives `Model`, stored in its own collection), and {what}: store the value itself without `Ref` and without `#[reference]`"),
            );
        }
    }
}

/// A `Ref<T>` on a model is managed by the ODM only with `#[reference]` or `#[parent]`:
/// without one it would be stored, but have no index, no delete rule, no two-way update and
/// no populate. The syntax is enough to tell (`Ref<T>`, also `odm::Ref<T>`, inside `Option`
/// or `Vec`); a plain id (`author_id: ObjectId`) is the way to keep an id the ODM ignores.
pub(super) fn check_ref_has_attribute(cx: &Ctxt, cont: &Container<'_>) {
    if cont.derive != Derive::Model {
        return;
    }
    for f in &cont.fields {
        // The id and copies have rules of their own; a skipped field is never stored.
        if f.reference.is_some() || f.denormalize.is_some() || f.is_id() || f.skipped {
            continue;
        }
        // A tree's parent and ancestors are the tree's.
        if !mentions_ref(f.ty) || super::super::tree::ref_rule_exempt(cont, f) {
            continue;
        }
        let attr = match f.shape {
            Shape::Vec(_) => "`#[reference(many, max = N)]`",
            _ => "`#[reference]` (or `#[parent]` on a child's reference to its parent)",
        };
        cx.error_spanned_by(
            f.ty,
            format!("a `Ref` field needs {attr}: without it the ODM does not index it, apply a delete rule or populate it. To keep an id the ODM ignores, store the id itself (`{}_id: ObjectId`)", f.ident.unraw()),
        );
    }
}

/// Whether `Ref<..>` appears anywhere in the type (by the last path segment).
pub(super) fn mentions_ref(ty: &Type) -> bool {
    match ty {
        Type::Path(tp) => tp.path.segments.iter().any(|seg| {
            let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
                return false;
            };
            (seg.ident == "Ref" && args.args.len() == 1)
                || args
                    .args
                    .iter()
                    .any(|a| matches!(a, syn::GenericArgument::Type(t) if mentions_ref(t)))
        }),
        Type::Paren(p) => mentions_ref(&p.elem),
        Type::Group(g) => mentions_ref(&g.elem),
        Type::Array(a) => mentions_ref(&a.elem),
        Type::Tuple(t) => t.elems.iter().any(mentions_ref),
        _ => false,
    }
}

/// A field is embedded or referenced, not both; a reference is stored.
pub(super) fn check_reference_alone(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        if f.embed.is_some() {
            cx.error_spanned_by(
                &r.tokens,
                "a field is either embedded or referenced: remove `#[embed]` or the reference",
            );
        }
        if f.skipped {
            cx.error_spanned_by(
                &r.tokens,
                "this field is skipped by serde, so the reference is never stored",
            );
        }
    }
}

/// `_id` is the document's own value, never a reference to another document. (In an
/// embedded summary a `Ref` stored as `_id` names the summarized source: allowed there.)
pub(super) fn check_id_not_a_reference(cx: &Ctxt, cont: &Container<'_>) {
    if matches!(cont.derive, Derive::Embed) {
        return;
    }
    for f in cont.fields.iter().filter(|f| f.is_id()) {
        const MESSAGE: &str = "`_id` cannot be a reference: it is the document's own id. To share another document's id (one-to-one), declare its id type here (`id: ObjectId`) and store the same value";
        match &f.reference {
            Some(r) => cx.error_spanned_by(&r.tokens, MESSAGE),
            None if f.ref_target().is_some() => cx.error_spanned_by(f.ty, MESSAGE),
            None => {}
        }
    }
}

/// `nullify` clears an optional reference; `pull` removes an id from an array.
pub(super) fn check_delete_rule_fits(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        let Some((rule, span)) = r.on_delete else {
            continue;
        };
        // A field of the wrong type is reported by its own rule.
        if !reference_shape_fits(f, r) {
            continue;
        }
        match (rule, f.shape) {
            (OnDelete::Nullify, Shape::Option(_)) | (OnDelete::Pull, Shape::Vec(_)) => {}
            (OnDelete::Nullify, Shape::Vec(_)) => cx.error_at(span, "`nullify` sets a single reference to null; to remove the id from an array of references, use `on_delete = \"pull\"`"),
            (OnDelete::Nullify, _) => cx.error_at(span, "`nullify` sets the reference to null, which needs an `Option<Ref<T>>` field (or use `cascade` or `restrict`)"),
            (OnDelete::Pull, _) => cx.error_at(span, "`pull` removes an id from an array; this field holds one reference (use `nullify` on an `Option`, or `cascade` or `restrict`)"),
            _ => {}
        }
    }
}

/// A two-way reference pairs an array on the "one" side (`#[reference(many, inverse)]`) with a
/// single reference on the "many" side (`#[parent(inverse)]`); a single `#[reference]` has no
/// inverse.
pub(super) fn check_inverse_side(cx: &Ctxt, cont: &Container<'_>) {
    for f in &cont.fields {
        let Some(r) = &f.reference else { continue };
        if let (Some(lit), false, None, false) = (&r.inverse, r.parent, r.many, r.malformed) {
            cx.error_spanned_by(
                lit,
                "a two-way reference is an array on one side and a `#[parent]` on the other: use `#[reference(many, inverse = ...)]` here, or `#[parent(inverse = ...)]` on a child",
            );
        }
    }
}
