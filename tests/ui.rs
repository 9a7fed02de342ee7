//! Compile-fail tests: each file under `ui/<category>/` is one misuse of the derives or of the
//! typed paths, and its `.stderr` is the error the user sees. Regenerate the expected output
//! with `TRYBUILD=overwrite cargo test -p odm-tests --test ui`, then read every changed file.
//! `UI_GLOB=ui/index/*.rs` runs one category only.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail(std::env::var("UI_GLOB").as_deref().unwrap_or("ui/**/*.rs"));
}
