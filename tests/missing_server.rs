//! Without a server binary the harness fails with an error that names the install command.
//! (Its own test binary: it sets the environment before any server is started.)

#[test]
fn a_missing_server_binary_is_a_clear_error_naming_the_install_command() {
    // SAFETY-free in edition 2021; this binary runs this one test only, so nothing reads the
    // environment concurrently.
    std::env::set_var("ODM_TEST_SERVER", "/nonexistent/secantusd-rs");
    std::env::remove_var("MONGODB_URI");
    let err = odm::testing::local_server().unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, odm::Error::TestServer(_)), "{message}");
    assert!(
        message.contains("ODM_TEST_SERVER names /nonexistent/secantusd-rs"),
        "{message}"
    );
    let install = odm::testing::install_command();
    assert!(
        install.starts_with(
            "cargo install secantus-mdb --version =0.5.3-beta.196 --ignore-rust-version --root "
        ),
        "{install}"
    );

    std::env::remove_var("ODM_TEST_SERVER");
    std::env::set_var("PATH", "/nonexistent");
    std::env::set_var("XDG_CACHE_HOME", "/nonexistent-cache");
    let message = odm::testing::find_binary().unwrap_err();
    assert!(message.contains("is not installed"), "{message}");
    assert!(
        message.contains(&odm::testing::install_command()),
        "{message}"
    );
    assert!(message.contains("MONGODB_URI"), "{message}");
}
