//! Reading numpy buffers into nested JSON lists (for simple numeric dtypes).

use crate::value::NdArray;
use serde_json::{Number, Value as Json};

/// Element values as nested lists following `shape`, for dtype kinds `b i u f` (item sizes
/// 1/2/4/8 for ints, 4/8 for floats). `None` for other dtypes or a buffer of the wrong size.
pub fn values(arr: &NdArray) -> Option<Json> {
    let dtype = arr.dtype.as_bytes();
    if dtype.len() < 3 {
        return None;
    }
    let little = match dtype[0] {
        b'<' | b'|' | b'=' => true,
        b'>' => false,
        _ => return None,
    };
    let kind = dtype[1];
    let size: usize = std::str::from_utf8(&dtype[2..]).ok()?.parse().ok()?;
    let count: usize = arr
        .shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize))?;
    if count.checked_mul(size)? != arr.data.len() {
        return None;
    }
    let read = |i: usize| -> Option<Json> {
        let chunk = &arr.data[i * size..(i + 1) * size];
        let mut buf = [0u8; 8];
        if little {
            buf[..size].copy_from_slice(chunk);
        } else {
            for (j, b) in chunk.iter().rev().enumerate() {
                buf[j] = *b;
            }
        }
        let raw = u64::from_le_bytes(buf);
        Some(match (kind, size) {
            (b'b', 1) => Json::Bool(raw != 0),
            (b'u', 1 | 2 | 4 | 8) => Json::Number(raw.into()),
            (b'i', 1 | 2 | 4 | 8) => {
                let shift = 64 - 8 * size as u32;
                Json::Number((((raw << shift) as i64) >> shift).into())
            }
            (b'f', 4) => float(f32::from_bits(raw as u32) as f64),
            (b'f', 8) => float(f64::from_bits(raw)),
            _ => return None,
        })
    };
    let flat = (0..count).map(read).collect::<Option<Vec<_>>>()?;
    // Element at multi-index idx lives at the C or F linear offset.
    let shape: Vec<usize> = arr.shape.iter().map(|&d| d as usize).collect();
    let fortran = arr.order == "F";
    Some(nest(&flat, &shape, 0, &mut Vec::new(), fortran))
}

fn float(f: f64) -> Json {
    Number::from_f64(f).map_or_else(|| Json::String(f.to_string()), Json::Number)
}

fn nest(flat: &[Json], shape: &[usize], dim: usize, idx: &mut Vec<usize>, fortran: bool) -> Json {
    if dim == shape.len() {
        let mut offset = 0;
        let mut stride = 1;
        let dims: Box<dyn Iterator<Item = usize>> = if fortran {
            Box::new(0..shape.len())
        } else {
            Box::new((0..shape.len()).rev())
        };
        for d in dims {
            offset += idx[d] * stride;
            stride *= shape[d];
        }
        return flat.get(offset).cloned().unwrap_or(Json::Null);
    }
    let mut items = Vec::with_capacity(shape[dim]);
    for i in 0..shape[dim] {
        idx.push(i);
        items.push(nest(flat, shape, dim + 1, idx, fortran));
        idx.pop();
    }
    Json::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arr(dtype: &str, shape: &[u64], order: &str, data: Vec<u8>) -> NdArray {
        NdArray {
            dtype: dtype.into(),
            shape: shape.to_vec(),
            order: order.into(),
            data,
        }
    }

    #[test]
    fn c_and_f_order_and_dtypes() {
        let f8: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        assert_eq!(
            values(&arr("<f8", &[2, 3], "C", f8.clone())),
            Some(json!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        );
        assert_eq!(
            values(&arr("<f8", &[2, 3], "F", f8)),
            Some(json!([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]))
        );
        let i4: Vec<u8> = [-1i32, 7].iter().flat_map(|i| i.to_le_bytes()).collect();
        assert_eq!(values(&arr("<i4", &[2], "C", i4)), Some(json!([-1, 7])));
        let be: Vec<u8> = 258u16.to_be_bytes().to_vec();
        assert_eq!(values(&arr(">u2", &[1], "C", be)), Some(json!([258])));
        assert_eq!(
            values(&arr("|b1", &[2], "C", vec![0, 1])),
            Some(json!([false, true]))
        );
        assert_eq!(
            values(&arr("<U3", &[1], "C", vec![0; 12])),
            None,
            "unicode dtype"
        );
        assert_eq!(
            values(&arr("<f8", &[2], "C", vec![0; 3])),
            None,
            "short buffer"
        );
    }
}
