# Sourced by the interop scripts. pg_admin URL SQL...: statements with autocommit, through
# psycopg from the venv ($python).
pg_admin() {
    "$python" - "$@" <<'PY'
import sys
import psycopg

url, *statements = sys.argv[1:]
with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
    for s in statements:
        conn.execute(s)
PY
}
