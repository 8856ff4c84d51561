//! Redaction: case-insensitive key globs, the walk that replaces values under matching keys
//! with [`REDACTED`], and the withholding of opaque payloads (their base64 becomes
//! [`WITHHELD`]) that might hold a secret or a redacted key.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{Map, Value as Json};

/// What replaces a value under a redacted key.
pub const REDACTED: &str = "[redacted]";

/// What replaces an opaque payload (base64) that might hold a secret or a redacted key.
pub const WITHHELD: &str = "[withheld]";

/// Case-insensitive glob matching of keys, and the walk that redacts values.
pub(super) struct Redactor {
    patterns: Vec<Vec<char>>,
    /// Per pattern, its lowercase literal pieces (between wildcards), for scanning opaque bytes.
    literals: Vec<Vec<Vec<u8>>>,
}

impl Redactor {
    pub(super) fn new(patterns: &[String]) -> Self {
        let patterns: Vec<Vec<char>> = patterns
            .iter()
            .map(|p| p.to_lowercase().chars().collect())
            .collect();
        let literals = patterns
            .iter()
            .map(|p| {
                let s: String = p.iter().collect();
                s.split(['*', '?'])
                    .filter(|piece| !piece.is_empty())
                    .map(|piece| piece.as_bytes().to_vec())
                    .collect()
            })
            .collect();
        Redactor { patterns, literals }
    }

    pub(super) fn matches(&self, key: &str) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let key: Vec<char> = key.to_lowercase().chars().collect();
        self.patterns.iter().any(|p| glob_match(p, &key))
    }

    /// Redact in place. `view`: the value is a JSON view (its `$` markers are not keys).
    pub(super) fn apply(&self, v: &mut Json, view: bool) {
        match v {
            Json::Array(items) => items.iter_mut().for_each(|i| self.apply(i, view)),
            Json::Object(m) => {
                let is_dict =
                    view && m.get("$type").and_then(Json::as_str) == Some("builtins.dict");
                if view {
                    self.withhold_opaque(m);
                    if is_dict {
                        if let Some(Json::Array(items)) = m.get_mut("$items") {
                            for item in items.iter_mut() {
                                if let Json::Array(pair) = item {
                                    if let [k, val] = pair.as_mut_slice() {
                                        if k.as_str().is_some_and(|k| self.matches(k)) {
                                            *val = Json::String(REDACTED.to_owned());
                                        } else {
                                            self.apply(k, view);
                                            self.apply(val, view);
                                        }
                                        continue;
                                    }
                                }
                                self.apply(item, view);
                            }
                        }
                    }
                }
                // A plain dict's keys are all data (`$defs` included); a typed value's `$` keys
                // are markers.
                let marked = view && flashback_codec::view::is_marked(m);
                for (k, val) in m.iter_mut() {
                    let key = if view {
                        if let Some(rest) = k.strip_prefix("$$") {
                            Some(format!("${rest}"))
                        } else if marked && k.starts_with('$') {
                            None
                        } else {
                            Some(k.clone())
                        }
                    } else {
                        Some(k.clone())
                    };
                    match key {
                        Some(key) if self.matches(&key) => {
                            *val = Json::String(REDACTED.to_owned());
                        }
                        _ if is_dict && k == "$items" => {} // handled above
                        _ => self.apply(val, view),
                    }
                }
            }
            _ => {}
        }
    }

    /// Pickle blobs and undecodable values keep their raw bytes as base64; withhold them when
    /// the bytes might hold a secret or a redacted key.
    fn withhold_opaque(&self, m: &mut Map<String, Json>) {
        let field = if m.get("$opaque") == Some(&Json::Bool(true)) {
            "base64"
        } else if m.contains_key("$error") {
            "raw_base64"
        } else {
            return;
        };
        let Some(Json::String(b64)) = m.get(field) else {
            return;
        };
        let Ok(bytes) = B64.decode(b64.as_bytes()) else {
            return;
        };
        let lower = bytes.to_ascii_lowercase();
        let secret = contains(&bytes, b"SecretStr") || contains(&bytes, b"SecretBytes");
        let redacted = self
            .literals
            .iter()
            .any(|pieces| !pieces.is_empty() && pieces.iter().all(|p| contains(&lower, p)));
        if secret || redacted {
            m.insert(field.to_owned(), Json::String(WITHHELD.to_owned()));
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

/// `*` any run (also empty), `?` one character; both sides already lowercased.
fn glob_match(pat: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pat.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pat[p.min(pat.len())..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn glob(p: &str, k: &str) -> bool {
        Redactor::new(&[p.to_owned()]).matches(k)
    }

    #[test]
    fn glob_patterns() {
        assert!(glob("api_key", "API_KEY"));
        assert!(!glob("api_key", "my_api_key"));
        assert!(glob("*key*", "my_API_KEY_2"));
        assert!(glob("*key", "apikey"));
        assert!(!glob("*key", "keys"));
        assert!(glob("k?y", "kEy"));
        assert!(!glob("k?y", "ky"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXXbYYbc"));
        assert!(!glob("a*b*c", "aXXbYYb"));
        assert!(glob("ÉTÉ*", "été_2024"));
        assert!(!Redactor::new(&[]).matches("anything"));
    }

    #[test]
    fn redaction_in_views_and_opaque_payloads() {
        let r = Redactor::new(&["token".to_owned(), "$ref".to_owned()]);
        let mut v = json!({
            "$type": "m.Model",
            "Token": "abc",
            "$$ref": "x",
            "$value": {"token": 1},
            "$items": [["token", 2]],
            "list": [{"token": 3}, {"$type": "builtins.dict", "$items": [["token", 4], [1, {"token": 5}]]}],
            "blob": {"$type": "pickle", "$opaque": true, "size": 3,
                      "base64": B64.encode(b"..pydantic.types\nSecretStr..")},
            "raw": {"$error": "bad", "$type": "msgpack", "raw_base64": B64.encode(b"\xa5TOKEN\x01")},
            "fine": {"$error": "bad", "$type": "msgpack", "raw_base64": B64.encode(b"harmless")}
        });
        r.apply(&mut v, true);
        assert_eq!(
            v,
            json!({
                "$type": "m.Model",
                "Token": REDACTED,
                "$$ref": REDACTED,
                "$value": {"token": REDACTED},
                "$items": [["token", 2]],
                "list": [{"token": REDACTED}, {"$type": "builtins.dict", "$items": [["token", REDACTED], [1, {"token": REDACTED}]]}],
                "blob": {"$type": "pickle", "$opaque": true, "size": 3, "base64": WITHHELD},
                "raw": {"$error": "bad", "$type": "msgpack", "raw_base64": WITHHELD},
                "fine": {"$error": "bad", "$type": "msgpack", "raw_base64": B64.encode(b"harmless")}
            })
        );
        // Metadata (plain JSON): `$` keys are ordinary keys.
        let mut m = json!({"$ref": 1, "a": {"TOKEN": [1]}});
        r.apply(&mut m, false);
        assert_eq!(m, json!({"$ref": REDACTED, "a": {"TOKEN": REDACTED}}));
    }
}
