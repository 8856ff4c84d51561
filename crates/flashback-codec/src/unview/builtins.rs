//! Revivers for the builtin and library types the view writes as `$type` objects:
//! `builtins.float` specials (nan, inf), `builtins.dict` with `$items`, and `numpy.ndarray`.

use super::walker::{float_like, Unview};
use super::UnviewError;
use crate::value::{NdArray, Str, Value};
use serde_json::{Map, Value as Json};

impl Unview {
    /// `{"$type": "json.number", "$value": "<a JSON number>"}`: the number that text holds
    /// (kept as its text when no 64-bit integer or float64 holds it).
    pub(super) fn number_text(&self, obj: &Map<String, Json>) -> Result<Value, UnviewError> {
        self.only_keys(obj, &["$type", "$value"])?;
        match obj.get("$value") {
            Some(Json::String(s)) if crate::jsvalue::is_number(s) => Ok(crate::jsvalue::number(s)),
            _ => self.err(format!(
                "{} needs \"$value\": a JSON number as text, such as \"1e400\"",
                crate::view::NUMBER_TYPE
            )),
        }
    }

    pub(super) fn special_float(
        &self,
        obj: &Map<String, Json>,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        self.only_keys(obj, &["$type", "$value"])?;
        let f = match obj.get("$value") {
            Some(Json::String(s)) => match s.as_str() {
                "nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                other => {
                    return self.err(format!(
                        "expected \"nan\", \"inf\" or \"-inf\", got {other:?}"
                    ))
                }
            },
            Some(Json::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            _ => return self.err("builtins.float needs \"$value\": \"nan\" | \"inf\" | \"-inf\""),
        };
        // Keep the exact NaN bits of the template (Python writes the canonical NaN).
        if f.is_nan() {
            match template {
                Some(Value::Float(t)) if t.is_nan() => return Ok(Value::Float(*t)),
                Some(Value::Float32(t)) if t.is_nan() => return Ok(Value::Float32(*t)),
                _ => {}
            }
        }
        Ok(float_like(f, template))
    }

    pub(super) fn items(
        &mut self,
        obj: &Map<String, Json>,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        self.only_keys(obj, &["$type", "$items"])?;
        let Some(Json::Array(items)) = obj.get("$items") else {
            return self.err("builtins.dict needs \"$items\": [[key, value], …]");
        };
        let t_entries = match template {
            Some(Value::Map(t)) => Some(t.as_slice()),
            _ => None,
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let segment = format!("{}[{i}]", self.key_segment("$items"));
            let entry = self.at(&segment, |u| {
                let Some([k, v]) = item
                    .as_array()
                    .map(Vec::as_slice)
                    .and_then(|a| <&[Json; 2]>::try_from(a).ok())
                else {
                    return u.err("expected a [key, value] pair");
                };
                let t_pos = t_entries.and_then(|t| t.get(i));
                let key = u.index(0, |u| u.value(k, t_pos.map(|(tk, _)| tk)))?;
                // The template entry with the same key (usually the one at the same position).
                let t_val = match t_pos {
                    Some((tk, tv)) if *tk == key => Some(tv),
                    _ => t_entries
                        .and_then(|t| t.iter().find(|(tk, _)| *tk == key).map(|(_, tv)| tv)),
                };
                let value = u.index(1, |u| u.value(v, t_val))?;
                Ok((key, value))
            })?;
            out.push(entry);
        }
        Ok(Value::Map(out))
    }

    pub(super) fn ndarray(&self, obj: &Map<String, Json>) -> Result<Value, UnviewError> {
        self.only_keys(
            obj,
            &["$type", "dtype", "shape", "order", "base64", "values"],
        )?;
        let dtype = match obj.get("dtype") {
            Some(Json::String(s)) => Str::from(s.as_str()),
            _ => return self.err("numpy.ndarray needs \"dtype\" (a string such as \"<f8\")"),
        };
        let shape = match obj.get("shape") {
            Some(Json::Array(dims)) => dims.iter().map(Json::as_u64).collect::<Option<Vec<u64>>>(),
            _ => None,
        };
        let Some(shape) = shape else {
            return self.err("numpy.ndarray needs \"shape\" (a list of non-negative integers)");
        };
        let order = match obj.get("order") {
            Some(Json::String(s)) => Str::from(s.as_str()),
            _ => return self.err("numpy.ndarray needs \"order\" (\"C\" or \"F\")"),
        };
        let data = self.base64(obj, "base64")?;
        let arr = NdArray {
            dtype,
            shape,
            order,
            data,
        };
        if let Some(values) = obj.get("values") {
            if crate::numpy::values(&arr).as_ref() != Some(values) {
                return self.err(
                    "numpy.ndarray \"values\" do not match \"base64\" (values are shown for reading only; edit the base64 buffer, or drop \"values\")",
                );
            }
        }
        Ok(Value::NdArray(Box::new(arr)))
    }
}
