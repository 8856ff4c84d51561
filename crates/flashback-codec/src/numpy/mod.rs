//! Reading numpy buffers (ext 6: `[dtype.str, shape, order, buffer]`) into the nested
//! `values` lists of the JSON view, as `np.frombuffer(buf, dtype).reshape(shape, order=order)`
//! reads them.
//!
//! Hostile arrays cost only what their bytes justify: at most [`MAX_NDIM`] dimensions (numpy's
//! own limit), element counts in checked arithmetic, the buffer exactly `itemsize × count`
//! bytes, nesting built bottom-up without recursion, and no more nested lists than twice the
//! elements plus [`SPARE_LISTS`] (a shape like `[1000000000, 0]` has no values rather than a
//! billion empty lists). Whatever does not pass has no `values`; the view still shows its
//! dtype, shape and bytes.

mod dtype;
mod element;

use crate::value::NdArray;
use serde_json::Value as Json;

/// The most dimensions an array can have (numpy 2's `NPY_MAXDIMS`; numpy refuses more).
pub const MAX_NDIM: usize = 64;

/// Nested lists allowed beyond twice the element count: room for empty arrays of modest
/// shapes (`(1000, 0)` is 1,001 lists of nothing).
pub const SPARE_LISTS: usize = 65_536;

/// Element values as nested lists following `shape` (a scalar for a 0-d array); see
/// `docs/json-view.md` for the dtypes shown. `None` when the dtype has no known layout, the
/// order is not `C`/`F`/`A`, the shape has more than [`MAX_NDIM`] dimensions or too many
/// nested lists, the buffer is not exactly `itemsize × count` bytes, or an element is not a
/// value of its dtype.
pub fn values(arr: &NdArray) -> Option<Json> {
    let dtype = dtype::parse(&arr.dtype)?;
    if arr.shape.len() > MAX_NDIM {
        return None;
    }
    let dims = arr
        .shape
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<Vec<usize>>>()?;
    let count = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    if count.checked_mul(dtype.size)? != arr.data.len() {
        return None;
    }
    let fortran = match arr.order.as_str() {
        "C" | "A" => false,
        "F" => true,
        _ => return None,
    };
    // Lists are built down to the first zero-length dimension (whose lists are empty).
    let levels = dims
        .iter()
        .position(|&d| d == 0)
        .map_or(dims.len(), |z| z + 1);
    let mut lists = 0usize;
    let mut width = 1usize;
    for &d in &dims[..levels] {
        lists = lists.checked_add(width)?;
        width = width.checked_mul(d)?;
    }
    if lists > count.saturating_mul(2).saturating_add(SPARE_LISTS) {
        return None;
    }

    let mut items = if count == 0 {
        // `levels - 1` is the zero dimension: that many empty lists, grouped above it.
        let empties = dims[..levels - 1].iter().product::<usize>();
        vec![Json::Array(Vec::new()); empties]
    } else if fortran {
        fortran_elements(&dtype, &dims, count, &arr.data)?
    } else {
        arr.data
            .chunks_exact(dtype.size)
            .map(|chunk| element::element(&dtype, chunk))
            .collect::<Option<Vec<Json>>>()?
    };
    let top = if count == 0 { levels - 1 } else { dims.len() };
    for &n in dims[..top].iter().rev() {
        // Every dimension above `top` is at least 1.
        let mut grouped = Vec::with_capacity(items.len() / n.max(1));
        let mut rest = items.into_iter();
        loop {
            let chunk: Vec<Json> = rest.by_ref().take(n).collect();
            if chunk.is_empty() {
                break;
            }
            grouped.push(Json::Array(chunk));
        }
        items = grouped;
    }
    items.pop()
}

/// Elements in C (row-major) order of their multi-index, read from a column-major buffer.
fn fortran_elements(
    dtype: &dtype::Dtype,
    dims: &[usize],
    count: usize,
    data: &[u8],
) -> Option<Vec<Json>> {
    // Column-major strides (in elements); each is at most `count`.
    let mut strides = Vec::with_capacity(dims.len());
    let mut stride = 1usize;
    for &d in dims {
        strides.push(stride);
        stride = stride.checked_mul(d)?;
    }
    let mut index = vec![0usize; dims.len()];
    let mut offset = 0usize;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let start = offset.checked_mul(dtype.size)?;
        let chunk = data.get(start..start.checked_add(dtype.size)?)?;
        out.push(element::element(dtype, chunk)?);
        // Advance the multi-index, last dimension fastest.
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            offset += strides[k];
            if index[k] < dims[k] {
                break;
            }
            offset -= dims[k] * strides[k];
            index[k] = 0;
        }
    }
    Some(out)
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
            values(&arr("<f8", &[2, 3], "F", f8.clone())),
            Some(json!([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]))
        );
        assert_eq!(
            values(&arr("<f8", &[3, 1, 2], "F", f8)),
            Some(json!([[[1.0, 4.0]], [[2.0, 5.0]], [[3.0, 6.0]]]))
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
            values(&arr("<f8", &[], "C", 2.5f64.to_le_bytes().to_vec())),
            Some(json!(2.5)),
            "0-d array"
        );
        assert_eq!(
            values(&arr("<f8", &[2], "C", vec![0; 3])),
            None,
            "short buffer"
        );
        assert_eq!(values(&arr("<f8", &[1], "K", vec![0; 8])), None, "order");
    }

    #[test]
    fn zero_size_shapes() {
        assert_eq!(values(&arr("<f8", &[0], "C", vec![])), Some(json!([])));
        assert_eq!(values(&arr("<f8", &[0, 5], "C", vec![])), Some(json!([])));
        assert_eq!(
            values(&arr("<f8", &[3, 0], "C", vec![])),
            Some(json!([[], [], []]))
        );
        assert_eq!(
            values(&arr("<f8", &[2, 2, 0, 7], "F", vec![])),
            Some(json!([[[], []], [[], []]]))
        );
        // A billion empty lists, or a zero-size item, show no values at all.
        assert_eq!(values(&arr("<f8", &[1_000_000_000, 0], "C", vec![])), None);
        assert_eq!(values(&arr("|S0", &[u64::MAX], "C", vec![])), None);
        assert_eq!(values(&arr("<f8", &[u64::MAX, 0], "C", vec![])), None);
    }
}
