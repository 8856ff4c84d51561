//! Ext payloads: LangGraph's extension types (ext 0–5 Python objects, 6 numpy arrays,
//! 7 DeltaChannel snapshots) decoded into typed values, or kept raw with the reason.

use crate::value::{NdArray, ObjectForm, PyObject, RawExt, Value};
use std::sync::Arc;

/// Decode an ext payload, `read` reading it as one msgpack document (the reader's). Never fails:
/// a payload that does not parse is kept raw with the reason.
pub(super) fn decode_ext(
    code: i8,
    data: &[u8],
    read: impl FnOnce() -> Result<Value, String>,
) -> Value {
    let raw = |error: String| {
        Value::RawExt(Box::new(RawExt {
            code,
            data: data.to_vec(),
            error,
        }))
    };
    if !(0..=7).contains(&code) {
        return raw(format!("unknown msgpack ext code {code}"));
    }
    let doc = match read() {
        Ok(doc) => doc,
        Err(e) => return raw(e),
    };
    let result = match code {
        7 => Ok(Value::DeltaSnapshot(Box::new(doc))),
        6 => ndarray(doc),
        _ => object(code, doc),
    };
    result.unwrap_or_else(raw)
}

fn object(code: i8, doc: Value) -> Result<Value, String> {
    let form = ObjectForm::from_code(code).ok_or_else(|| format!("unknown ext code {code}"))?;
    let Value::Array(mut items) = doc else {
        return Err(format!("ext {code} payload is not an array"));
    };
    if !(3..=4).contains(&items.len()) {
        return Err(format!(
            "ext {code} payload has {} elements, expected 3 or 4",
            items.len()
        ));
    }
    let extra = if items.len() == 4 { items.pop() } else { None };
    let payload = items.pop().unwrap_or(Value::Nil);
    let name = items.pop();
    let module = items.pop();
    match (module, name) {
        (Some(Value::Str(module)), Some(Value::Str(name))) => {
            Ok(Value::Object(Arc::new(PyObject {
                form,
                module,
                name,
                payload,
                extra,
            })))
        }
        _ => Err(format!(
            "ext {code} payload does not start with module and class names"
        )),
    }
}

fn ndarray(doc: Value) -> Result<Value, String> {
    let bad = || "ext 6 (numpy) payload is not [dtype, shape, order, buffer]".to_string();
    let Value::Array(items) = doc else {
        return Err(bad());
    };
    let [Value::Str(dtype), Value::Array(shape), Value::Str(order), Value::Bin(data)] =
        <[Value; 4]>::try_from(items).map_err(|_| bad())?
    else {
        return Err(bad());
    };
    let shape = shape
        .iter()
        .map(|d| match d {
            Value::Int(i) if *i >= 0 => Ok(*i as u64),
            Value::UInt(u) => Ok(*u),
            _ => Err(bad()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::NdArray(Box::new(NdArray {
        dtype,
        shape,
        order,
        data,
    })))
}
