//! Floats in the JSON view: a JSON number, or for the values JSON has no number for
//! `{"$type": "builtins.float", "$value": "nan" | "inf" | "-inf"}` (the view of values and of
//! numpy arrays alike).

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Number, Value as Json};

const FLOAT_TYPE: &str = "builtins.float";

/// A float: a JSON number, or `{"$type": "builtins.float", "$value": "nan" | "inf" | "-inf"}`.
pub(crate) fn float_view(f: f64) -> Json {
    match Number::from_f64(f) {
        Some(n) => Json::Number(n),
        None => serde_json::to_value(Float(f)).unwrap_or(Json::Null),
    }
}

/// The name of a float JSON has no number for (`nan`, `inf`, `-inf`).
fn float_name(f: f64) -> Option<&'static str> {
    if f.is_finite() {
        None
    } else if f.is_nan() {
        Some("nan")
    } else if f > 0.0 {
        Some("inf")
    } else {
        Some("-inf")
    }
}

/// A float: a JSON number, or `{"$type": "builtins.float", "$value": "nan" | "inf" | "-inf"}`.
pub(super) struct Float(pub(super) f64);

impl Serialize for Float {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match float_name(self.0) {
            None => s.serialize_f64(self.0),
            Some(name) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("$type", FLOAT_TYPE)?;
                m.serialize_entry("$value", name)?;
                m.end()
            }
        }
    }
}
