//! The pickle reader on any bytes: `loads` never panics (nor overflows the stack, nor allocates
//! past the input's size); what it reads is shown (`to_value` with a node budget, the JSON view,
//! datetime/uuid text) and written back (`dumps2`) without panicking; and a tree without
//! objects written by `dumps2` reads back equal.
#![no_main]

use flashback_codec::pickle::{self, Limits, PyValue};
use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;
use std::sync::Arc;

/// Whether the tree holds an object, a cycle, or a global Python 2 names differently (those
/// read back as themselves only as their protocol-2 names). Walked as a DAG: shared nodes once.
fn plain(v: &PyValue, seen: &mut HashSet<usize>) -> bool {
    let kids: Vec<&Arc<PyValue>> = match v {
        PyValue::Object { .. } | PyValue::Recursive => return false,
        PyValue::Global { module, name } => {
            // Python 2's names read as Python 3's, and names protocol 2 writes lossily as
            // CPython does (`FileNotFoundError` as `exceptions.OSError`).
            let py2 = matches!(
                module.as_str(),
                "__builtin__"
                    | "copy_reg"
                    | "Queue"
                    | "SocketServer"
                    | "ConfigParser"
                    | "repr"
                    | "cPickle"
                    | "UserDict"
                    | "UserList"
                    | "exceptions"
                    | "itertools"
            );
            let lossy = module == "builtins"
                && (name.ends_with("Error")
                    || matches!(
                        name.as_str(),
                        "xrange" | "reduce" | "intern" | "unichr" | "unicode" | "long"
                    ));
            return !py2 && !lossy;
        }
        PyValue::Tuple(v) | PyValue::List(v) | PyValue::Set(v) | PyValue::FrozenSet(v) => {
            v.iter().collect()
        }
        PyValue::Dict(p) => p.iter().flat_map(|(k, v)| [k, v]).collect(),
        PyValue::DefaultDict { factory, items } => std::iter::once(factory)
            .chain(items.iter().flat_map(|(k, v)| [k, v]))
            .collect(),
        _ => return true,
    };
    kids.into_iter()
        .all(|k| !seen.insert(Arc::as_ptr(k) as usize) || plain(k, seen))
}

/// Structural equality (NaN equal to NaN), comparing at most `budget` nodes.
fn same(a: &PyValue, b: &PyValue, budget: &mut usize) -> bool {
    if *budget == 0 {
        return true;
    }
    *budget -= 1;
    let seq = |x: &[Arc<PyValue>], y: &[Arc<PyValue>], budget: &mut usize| {
        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q, budget))
    };
    let pairs = |x: &[(Arc<PyValue>, Arc<PyValue>)],
                 y: &[(Arc<PyValue>, Arc<PyValue>)],
                 budget: &mut usize| {
        x.len() == y.len()
            && x.iter()
                .zip(y)
                .all(|((k, v), (l, w))| same(k, l, budget) && same(v, w, budget))
    };
    match (a, b) {
        (PyValue::Float(x), PyValue::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (PyValue::Tuple(x), PyValue::Tuple(y))
        | (PyValue::List(x), PyValue::List(y))
        | (PyValue::Set(x), PyValue::Set(y))
        | (PyValue::FrozenSet(x), PyValue::FrozenSet(y)) => seq(x, y, budget),
        (PyValue::Dict(x), PyValue::Dict(y)) => pairs(x, y, budget),
        (
            PyValue::DefaultDict {
                factory: f,
                items: x,
            },
            PyValue::DefaultDict {
                factory: g,
                items: y,
            },
        ) => same(f, g, budget) && pairs(x, y, budget),
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(v) = pickle::loads(data, &Limits::default()) else {
        return;
    };
    let shown = pickle::to_value(&v, 10_000);
    let _ = flashback_codec::view(&shown, flashback_codec::ViewOptions::default());
    let _ = (
        pickle::iso_datetime(&v),
        pickle::uuid_string(&v),
        v.class_path(),
    );
    let Ok(bytes) = pickle::dumps2(&v) else {
        return;
    };
    if plain(&v, &mut HashSet::new()) {
        let back = pickle::loads(&bytes, &Limits::default()).expect("dumps2's output reads");
        assert!(
            same(&v, &back, &mut 100_000),
            "read back differs:\n{v:.2000?}\n{back:.2000?}"
        );
    }
});
