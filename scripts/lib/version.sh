# Shared by scripts/release and tests/packaging/run.sh (source it): Flashback's version, which
# lives in one place, `version` under [workspace.package] in Cargo.toml.
#
#   workspace_version    prints it

workspace_version() {
    awk '/^\[/ { section = $0 }
         section == "[workspace.package]" && /^version *=/ { gsub(/^version *= *"|".*$/, ""); print; exit }' \
        Cargo.toml
}
