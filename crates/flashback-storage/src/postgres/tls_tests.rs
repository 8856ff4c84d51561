use super::*;
use std::collections::HashSet;

const HOME: &str = "/home/u/.postgresql";

fn settings(mode: Option<&str>, root: Option<&str>) -> Settings {
    Settings {
        mode: mode.map(str::to_owned),
        root_cert: root.map(str::to_owned),
        dir: Some(PathBuf::from(HOME)),
        ..Settings::default()
    }
}

fn resolve_with(s: &Settings, files: &[&str]) -> Result<TlsPlan, String> {
    let files: HashSet<PathBuf> = files.iter().map(PathBuf::from).collect();
    TlsPlan::resolve(s, &|p| files.contains(p))
}

fn resolve(mode: Option<&str>, root: Option<&str>, files: &[&str]) -> Result<TlsPlan, String> {
    resolve_with(&settings(mode, root), files)
}

/// (first mode, fallback, roots) of a plan, comparable.
fn shape(plan: &TlsPlan) -> (String, Option<String>, Roots) {
    (
        format!("{:?}", plan.first),
        plan.fallback.map(|m| format!("{m:?}")),
        plan.roots.clone(),
    )
}

fn file(path: &str) -> Roots {
    Roots::File(PathBuf::from(path))
}

#[test]
fn modes_follow_libpq() {
    let shape_of = |mode, root, files: &[&str]| shape(&resolve(mode, root, files).unwrap());
    let some = |m: &str| Some(m.to_owned());
    // The default is prefer: TLS when offered (no check), else plaintext.
    assert_eq!(
        shape_of(None, None, &[]),
        ("Prefer".into(), some("Disable"), Roots::None)
    );
    assert_eq!(resolve(None, None, &[]).unwrap().asked, SslMode::Prefer);
    assert_eq!(
        shape_of(Some("disable"), None, &[]),
        ("Disable".into(), None, Roots::None)
    );
    assert_eq!(
        shape_of(Some("allow"), None, &[]),
        ("Disable".into(), some("Require"), Roots::None)
    );
    // prefer never checks certificates, even with a root certificate at hand.
    let root = "/etc/ca.pem";
    assert_eq!(
        shape_of(Some("prefer"), Some(root), &[root]),
        ("Prefer".into(), some("Disable"), Roots::None)
    );
    assert_eq!(
        shape_of(Some("require"), None, &[]),
        ("Require".into(), None, Roots::None)
    );
    // require with a root certificate (given, or the default one) is verify-ca.
    assert_eq!(
        shape_of(Some("require"), Some(root), &[root]),
        ("VerifyCa".into(), None, file(root))
    );
    let default_root = "/home/u/.postgresql/root.crt";
    assert_eq!(
        shape_of(Some("REQUIRE"), None, &[default_root]),
        ("VerifyCa".into(), None, file(default_root))
    );
    assert_eq!(
        shape_of(Some("verify-ca"), Some(root), &[root]),
        ("VerifyCa".into(), None, file(root))
    );
    assert_eq!(
        shape_of(Some("verify-full"), None, &[default_root]),
        ("VerifyFull".into(), None, file(default_root))
    );
    // sslrootcert=system: the OS trust store, and verify-full by default.
    assert_eq!(
        shape_of(None, Some("system"), &[]),
        ("VerifyFull".into(), None, Roots::System)
    );
    assert_eq!(
        resolve(None, Some("system"), &[]).unwrap().asked,
        SslMode::VerifyFull
    );
}

#[test]
fn unusable_settings_are_one_clear_line() {
    let err = |mode, root, files: &[&str]| resolve(mode, root, files).unwrap_err();
    let e = err(Some("verify-full"), None, &[]);
    assert_eq!(
        e,
        "sslmode=verify-full needs the server's root certificate: give sslrootcert=<CA file> \
         (or sslrootcert=system for the OS trust store); /home/u/.postgresql/root.crt does not \
         exist"
    );
    assert!(err(Some("verify-ca"), None, &[]).starts_with("sslmode=verify-ca needs"));
    let no_home = Settings {
        dir: None,
        ..settings(Some("verify-ca"), None)
    };
    assert!(resolve_with(&no_home, &[])
        .unwrap_err()
        .ends_with("; no home directory"));
    assert_eq!(
        err(Some("verify-ca"), Some("/x/ca.pem"), &[]),
        "sslrootcert file \"/x/ca.pem\" does not exist"
    );
    // Stricter than libpq, which silently skips the check: a misspelt file is an error.
    assert!(err(Some("require"), Some("/x/ca.pem"), &[]).contains("does not exist"));
    assert_eq!(
        err(Some("require"), Some("system"), &[]),
        "sslrootcert=system needs sslmode=verify-full, not require (any certificate the OS \
         trusts would do)"
    );
    assert!(err(Some("verify-ca"), Some("system"), &[]).contains("not verify-ca"));
    assert_eq!(
        err(Some("sometimes"), None, &[]),
        "invalid sslmode \"sometimes\": use disable, allow, prefer, require, verify-ca or \
         verify-full"
    );
}

#[test]
fn no_tls_over_a_unix_socket_or_when_disabled() {
    // As libpq: sslmode does not apply to Unix sockets, so verify-full needs no root there.
    let s = Settings {
        socket: true,
        ..settings(Some("verify-full"), None)
    };
    let plan = resolve_with(&s, &[]).unwrap();
    assert_eq!(shape(&plan), ("Disable".into(), None, Roots::None));
    assert_eq!(plan.asked, SslMode::VerifyFull);
    // With TLS disabled, certificate files are not even looked at.
    let s = Settings {
        cert: Some("/nope.crt".into()),
        ..settings(Some("disable"), Some("/nope.pem"))
    };
    assert!(resolve_with(&s, &[]).unwrap().client.is_none());
}

#[test]
fn client_certificates() {
    let with = |cert: Option<&str>, key: Option<&str>| Settings {
        cert: cert.map(str::to_owned),
        key: key.map(str::to_owned),
        ..settings(Some("require"), None)
    };
    let pair = |c: &str, k: &str| Some((PathBuf::from(c), PathBuf::from(k)));
    let plan = resolve_with(&with(Some("/c.crt"), Some("/c.key")), &["/c.crt", "/c.key"]);
    assert_eq!(plan.unwrap().client, pair("/c.crt", "/c.key"));
    // The defaults in ~/.postgresql, when the certificate is there.
    let (dc, dk) = (
        "/home/u/.postgresql/postgresql.crt",
        "/home/u/.postgresql/postgresql.key",
    );
    assert_eq!(
        resolve_with(&with(None, None), &[dc, dk]).unwrap().client,
        pair(dc, dk)
    );
    assert_eq!(resolve_with(&with(None, None), &[dk]).unwrap().client, None);
    assert_eq!(
        resolve_with(&with(Some("/c.crt"), None), &["/c.crt", dk])
            .unwrap()
            .client,
        pair("/c.crt", dk)
    );
    let err = |s: &Settings, files: &[&str]| resolve_with(s, files).unwrap_err();
    assert_eq!(
        err(&with(Some("/c.crt"), None), &["/c.crt"]),
        format!("sslkey file {dk:?} does not exist")
    );
    assert_eq!(
        err(&with(Some("/c.crt"), Some("/c.key")), &["/c.key"]),
        "sslcert file \"/c.crt\" does not exist"
    );
    assert_eq!(
        err(&with(None, Some("/c.key")), &["/c.key"]),
        "sslkey=\"/c.key\" is given without sslcert (the client certificate)"
    );
}

#[test]
fn settings_come_from_the_url() {
    let s = Settings::read(
        "postgres://u:pw@h/db?sslmode=prefer&ssl-mode=verify-full&sslrootcert=%2Ftmp%2Fmy+ca.pem\
         &sslcert=/c.crt&ssl-key=/c.key",
        false,
    );
    assert_eq!(s.mode.as_deref(), Some("verify-full"));
    assert_eq!(s.root_cert.as_deref(), Some("/tmp/my ca.pem"));
    assert_eq!(s.cert.as_deref(), Some("/c.crt"));
    assert_eq!(s.key.as_deref(), Some("/c.key"));
    let s = Settings::read("postgres://h/db?ssl-ca=system", true);
    assert_eq!(s.root_cert.as_deref(), Some("system"));
    assert!(s.socket);
    assert_eq!(s.unsupported, None);
    let unsupported = |url: &str| Settings::read(url, false).unsupported;
    assert_eq!(
        unsupported("postgres://h?sslcrl=/x.crl").as_deref(),
        Some("sslcrl")
    );
    assert_eq!(
        unsupported("postgres://h?sslnegotiation=direct").as_deref(),
        Some("sslnegotiation=direct")
    );
    assert_eq!(unsupported("postgres://h?sslnegotiation=postgres"), None);
    // Not silently ignored where TLS is used.
    let s = Settings {
        unsupported: Some("sslpassword".into()),
        ..settings(Some("require"), None)
    };
    assert_eq!(
        resolve_with(&s, &[]).unwrap_err(),
        "sslpassword is not supported (Flashback takes sslmode, sslrootcert, sslcert and an \
         unencrypted sslkey)"
    );
    let s = Settings {
        unsupported: Some("sslcrl".into()),
        ..settings(Some("disable"), None)
    };
    assert!(resolve_with(&s, &[]).is_ok());
}

#[test]
fn files_are_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let (ca, crt, pk) = (
        write("ca.pem", &cert.pem()),
        write("c.crt", &cert.pem()),
        write("c.key", &key.serialize_pem()),
    );
    let junk = write("junk.pem", "not a certificate");
    let plan = |roots: Roots, client: Option<(PathBuf, PathBuf)>| TlsPlan {
        asked: SslMode::VerifyFull,
        first: PgSslMode::VerifyFull,
        fallback: None,
        roots,
        client,
    };
    let options = PgConnectOptions::new_without_pgpass();
    let apply = |p: TlsPlan| p.apply(options.clone()).map(|o| o.get_ssl_mode());
    assert!(matches!(
        apply(plan(
            Roots::File(ca.clone()),
            Some((crt.clone(), pk.clone()))
        )),
        Ok(PgSslMode::VerifyFull)
    ));
    assert!(apply(plan(Roots::System, None)).is_ok());
    let err = apply(plan(Roots::File(junk.clone()), None)).unwrap_err();
    assert_eq!(
        err,
        format!(
            "sslrootcert file {:?} holds no PEM certificate",
            junk.display()
        )
    );
    let err = apply(plan(
        Roots::File(ca.clone()),
        Some((crt.clone(), junk.clone())),
    ));
    assert!(err
        .unwrap_err()
        .contains("holds no unencrypted PEM private key"));
    let err = apply(plan(Roots::File(ca), Some((junk.clone(), pk)))).unwrap_err();
    assert!(err.starts_with("sslcert file"), "{err}");
    let gone = dir.path().join("gone.pem");
    let err = apply(plan(Roots::File(gone), None)).unwrap_err();
    assert!(err.starts_with("cannot read sslrootcert file"), "{err}");
}
