//! The rule of polymorphic references that spans several types: a DBRef names a collection,
//! so each target of one polymorphic reference is stored in a collection of its own.

use super::names;

/// The targets of a polymorphic reference are stored in different collections. Evaluated
/// while compiling.
pub const fn distinct_targets(name: &str, targets: &[&str]) {
    let mut i = 0;
    while i < targets.len() {
        let mut j = i + 1;
        while j < targets.len() {
            if names::same(targets[i], targets[j]) {
                let message = names::Message::new()
                    .push("two targets of `")
                    .push(name)
                    .push("` are stored in `")
                    .push(targets[i])
                    .push("`: a DBRef names the collection of its target, so each target of a polymorphic reference has its own; for several kinds of one collection, reference their base (`Ref<Base>`)");
                panic!("{}", message.as_str());
            }
            j += 1;
        }
        i += 1;
    }
}
