//! A safe pickle reader and a protocol-2 writer, for the pickles LangGraph keeps: the
//! `langgraph dev` server's `.langgraph_api/*.pckl` files (`PersistentDict`, protocol 2) and
//! serde values tagged `pickle` (`cloudpickle.dumps`, protocol 5).
//!
//! ```text
//!  bytes ──loads──▶ PyValue (Arc tree, shared memo entries shared) ──to_value──▶ Value (view)
//!                        └──dumps2──▶ protocol-2 bytes (CPython's opcodes)
//! ```
//!
//! The reader **never imports or executes anything**: a global is only its name
//! ([`PyValue::Global`]), and applying one (`REDUCE`, `NEWOBJ`, `BUILD`, …) gives an opaque
//! [`PyValue::Object`] (class path, arguments, state) — except for a few reductions whose
//! meaning is fixed ([`globals`]: `_codecs.encode(s, 'latin1')` is bytes, `builtins.set(list)`
//! a set, `collections.defaultdict`, `OrderedDict`, `copyreg.__newobj__`, …), which become the
//! values they denote. `PERSID`/`BINPERSID`, `NEXT_BUFFER` and the extension registry
//! (`EXT1/2/4`) are refused. It is bounded ([`Limits`]): nesting depth, objects, memo entries;
//! every declared length is checked against the input left before anything is allocated; an
//! error is one line naming the byte offset.

mod bigint;
mod convert;
mod globals;
mod known;
mod ops;
mod reader;
mod text;
mod time;
mod tree;
mod writer;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hostile;
#[cfg(test)]
mod tests_writer;

use std::fmt;
use std::sync::Arc;

pub use convert::{to_value, RECURSIVE, TRUNCATED};
pub use time::{iso_datetime, uuid_string};
pub use writer::dumps2;

/// A Python value read from a pickle. Containers hold their items as [`Arc`]s: a memo entry
/// referenced many times is one shared node.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An `int` that fits in `i64`.
    Int(i64),
    /// An `int` beyond `i64`, as its decimal digits (with a leading `-` when negative).
    BigInt(String),
    /// A `float`.
    Float(f64),
    /// A `str` (a lone surrogate is read as U+FFFD; Python 2 `str` opcodes are read as Latin-1).
    Str(String),
    /// A `bytes`.
    Bytes(Vec<u8>),
    /// A `bytearray`.
    ByteArray(Vec<u8>),
    /// A `tuple`.
    Tuple(Vec<Arc<PyValue>>),
    /// A `list`.
    List(Vec<Arc<PyValue>>),
    /// A `dict` (or an `OrderedDict`), in stored order.
    Dict(Vec<(Arc<PyValue>, Arc<PyValue>)>),
    /// A `set`.
    Set(Vec<Arc<PyValue>>),
    /// A `frozenset`.
    FrozenSet(Vec<Arc<PyValue>>),
    /// A `collections.defaultdict`: its factory (a [`PyValue::Global`], or `None`) and items.
    DefaultDict {
        /// The default factory.
        factory: Arc<PyValue>,
        /// The items, in stored order.
        items: Vec<(Arc<PyValue>, Arc<PyValue>)>,
    },
    /// A global (a class or a function), by name only: never imported.
    Global {
        /// The module, with Python 2 names mapped to Python 3 (`__builtin__` → `builtins`).
        module: String,
        /// The (possibly dotted) name.
        name: String,
    },
    /// A class or callable applied (`REDUCE`, `NEWOBJ`, `INST`, …), never run: what it was
    /// called with and what was set on it afterwards.
    Object {
        /// The class's (or callable's) module.
        module: String,
        /// The class's (or callable's) name.
        name: String,
        /// The positional arguments.
        args: Vec<Arc<PyValue>>,
        /// The `BUILD` state (`__setstate__` argument or `__dict__` update), if any.
        state: Option<Arc<PyValue>>,
        /// Items appended to it (`APPEND(S)`, `ADDITEMS`).
        list_items: Vec<Arc<PyValue>>,
        /// Items set on it (`SETITEM(S)`).
        dict_items: Vec<(Arc<PyValue>, Arc<PyValue>)>,
    },
    /// A reference to a container that was still being built (a cycle).
    Recursive,
}

impl PyValue {
    /// The text of a [`PyValue::Str`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes of a [`PyValue::Bytes`] or [`PyValue::ByteArray`].
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            PyValue::Bytes(b) | PyValue::ByteArray(b) => Some(b),
            _ => None,
        }
    }

    /// The value of a [`PyValue::Int`] (a `bool` is not an int here).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            PyValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The items of a [`PyValue::Dict`] or a [`PyValue::DefaultDict`].
    pub fn as_items(&self) -> Option<&[(Arc<PyValue>, Arc<PyValue>)]> {
        match self {
            PyValue::Dict(items) | PyValue::DefaultDict { items, .. } => Some(items),
            _ => None,
        }
    }

    /// The items of a [`PyValue::Tuple`] or a [`PyValue::List`].
    pub fn as_seq(&self) -> Option<&[Arc<PyValue>]> {
        match self {
            PyValue::Tuple(items) | PyValue::List(items) => Some(items),
            _ => None,
        }
    }

    /// Whether this is `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, PyValue::None)
    }

    /// `module.name` of a [`PyValue::Object`] or a [`PyValue::Global`].
    pub fn class_path(&self) -> Option<String> {
        match self {
            PyValue::Object { module, name, .. } | PyValue::Global { module, name } => {
                Some(format!("{module}.{name}"))
            }
            _ => None,
        }
    }

    /// The value of `key` (a string) in a dict.
    pub(crate) fn get(&self, key: &str) -> Option<&Arc<PyValue>> {
        self.as_items()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }
}

/// Bounds on what [`loads`] builds. The default depth is msgpack's ([`crate::msgpack::MAX_DEPTH`],
/// 256): the tree, its view and [`dumps2`] are walked recursively, within a thread's stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of containers and objects in the result.
    pub max_depth: usize,
    /// Most objects created and container entries added.
    pub max_objects: usize,
    /// Most memo entries.
    pub max_memo: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: crate::msgpack::MAX_DEPTH,
            max_objects: 5_000_000,
            max_memo: 2_000_000,
        }
    }
}

/// Why a pickle could not be read: one line, starting `pickle: `, naming the byte offset
/// where it could.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleError(pub String);

impl fmt::Display for PickleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PickleError {}

/// Most nodes of a stored pickle's view, counted on the expanded tree ([`to_value`]).
pub const SHOWN_NODES: usize = 500_000;

/// A stored `pickle` value as the view shows it: [`to_value`] of [`loads`] with the default
/// [`Limits`] and [`SHOWN_NODES`] — the same as the Python object stored as msgpack.
pub fn shown(data: &[u8]) -> Result<crate::value::Value, PickleError> {
    Ok(to_value(&loads(data, &Limits::default())?, SHOWN_NODES))
}

/// Read a pickle (protocols 0–5) into a [`PyValue`], without importing or running anything.
pub fn loads(data: &[u8], limits: &Limits) -> Result<PyValue, PickleError> {
    let (arena, made_at, root) = reader::read(data, limits)?;
    let tree = tree::build(&arena, &made_at, root, limits.max_depth)?;
    // The root is never shared by anything else once the arena is gone.
    Ok(Arc::try_unwrap(tree).unwrap_or_else(|shared| (*shared).clone()))
}
