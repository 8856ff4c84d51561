//! Integration tests: they need a PostgreSQL server (or initdb/pg_ctl) and skip without one
//! unless CI=true or FLASHBACK_REQUIRE_PG=1.

use flashback_testkit::{load_sql_dump, pg_or_skip};
use sqlx::Connection as _;

#[tokio::test]
async fn database_answers_and_accepts_a_table() {
    let pg = pg_or_skip!();
    let mut conn = pg.connect().await.expect("connect");
    let one: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut conn)
        .await
        .expect("SELECT 1");
    assert_eq!(one, 1);
    let current: String = sqlx::query_scalar("SELECT current_database()")
        .fetch_one(&mut conn)
        .await
        .expect("current_database");
    assert_eq!(current, pg.database());
    sqlx::raw_sql("CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL)")
        .execute(&mut conn)
        .await
        .expect("create table");
    sqlx::query("INSERT INTO t VALUES ($1, $2)")
        .bind(1_i32)
        .bind("héllo")
        .execute(&mut conn)
        .await
        .expect("insert");
    let name: String = sqlx::query_scalar("SELECT name FROM t WHERE id = 1")
        .fetch_one(&mut conn)
        .await
        .expect("select");
    assert_eq!(name, "héllo");
    let encoding: String = sqlx::query_scalar("SHOW server_encoding")
        .fetch_one(&mut conn)
        .await
        .expect("encoding");
    assert_eq!(encoding, "UTF8");
}

#[tokio::test]
async fn two_calls_give_two_databases_and_drop_removes_them() {
    let a = pg_or_skip!();
    let b = pg_or_skip!();
    assert_ne!(a.url(), b.url());
    assert_ne!(a.database(), b.database());

    let mut conn_b = b.connect().await.expect("connect b");
    sqlx::raw_sql("CREATE TABLE only_in_b (x int)")
        .execute(&mut conn_b)
        .await
        .expect("create in b");
    let mut conn_a = a.connect().await.expect("connect a");
    let in_a: Option<String> = sqlx::query_scalar("SELECT to_regclass('only_in_b')::text")
        .fetch_one(&mut conn_a)
        .await
        .expect("to_regclass");
    assert_eq!(in_a, None, "a table made in b is visible in a");

    // Dropping b (with a connection still open) removes its database.
    let b_name = b.database().to_owned();
    drop(b);
    let exists: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_database WHERE datname = $1")
        .bind(&b_name)
        .fetch_one(&mut conn_a)
        .await
        .expect("pg_database");
    assert_eq!(exists, 0, "{b_name} still exists after drop");
    assert!(conn_b.ping().await.is_err(), "b's connection survived");
}

#[tokio::test]
async fn load_sql_dump_runs_a_multi_statement_script() {
    let pg = pg_or_skip!();
    let script = "\
\\restrict 0123456789abcdef
SET statement_timeout = 0;
SELECT pg_catalog.set_config('search_path', '', false);
CREATE TABLE public.items (id integer NOT NULL, body jsonb, data bytea);
INSERT INTO public.items VALUES (1, '{\"a\": 1}', '\\x0001ff');
INSERT INTO public.items VALUES (2, NULL, NULL);
-- a comment; with a semicolon
ALTER TABLE ONLY public.items ADD CONSTRAINT items_pkey PRIMARY KEY (id);
\\unrestrict 0123456789abcdef
";
    load_sql_dump(pg.url(), script).await.expect("load");
    let mut conn = pg.connect().await.expect("connect");
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM public.items")
        .fetch_one(&mut conn)
        .await
        .expect("count");
    assert_eq!(count, 2);
    let data: Vec<u8> = sqlx::query_scalar("SELECT data FROM public.items WHERE id = 1")
        .fetch_one(&mut conn)
        .await
        .expect("bytea");
    assert_eq!(data, vec![0x00, 0x01, 0xff]);

    // A failing statement is reported.
    assert!(
        load_sql_dump(pg.url(), "INSERT INTO public.missing VALUES (1);")
            .await
            .is_err()
    );
}

/// Round trip through the real `pg_dump --inserts`, when pg_dump is installed and can dump
/// this server (it refuses servers newer than itself).
#[tokio::test]
async fn load_sql_dump_accepts_pg_dump_inserts_output() {
    let source = pg_or_skip!();
    let target = pg_or_skip!();
    let mut conn = source.connect().await.expect("connect");
    sqlx::raw_sql(
        "CREATE TABLE t (id int PRIMARY KEY, s text, j jsonb); \
         INSERT INTO t VALUES (1, 'it''s', '{\"k\": [1, 2]}'), (2, E'line\\nbreak', NULL);",
    )
    .execute(&mut conn)
    .await
    .expect("seed");
    let output = match std::process::Command::new("pg_dump")
        .args(["--inserts", "--no-owner", "--no-privileges", source.url()])
        .output()
    {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            eprintln!(
                "pg_dump failed, part skipped: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            return;
        }
        Err(e) => {
            eprintln!("no pg_dump, part skipped: {e}");
            return;
        }
    };
    let dump = String::from_utf8(output.stdout).expect("utf-8 dump");
    load_sql_dump(target.url(), &dump).await.expect("load dump");
    let mut conn = target.connect().await.expect("connect target");
    let rows: Vec<(i32, String)> = sqlx::query_as("SELECT id, s FROM public.t ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .expect("rows");
    assert_eq!(
        rows,
        vec![(1, "it's".to_owned()), (2, "line\nbreak".to_owned())]
    );
}
