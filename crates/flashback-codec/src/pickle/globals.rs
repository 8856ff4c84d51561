//! Known globals: Python 2 names read as Python 3's (and back, for protocol 2), and the few
//! reductions whose meaning is fixed, which become the values they denote. Everything else
//! applied stays an opaque [`Node::Object`]: named, never run.

use super::tree::{Ix, Node};
use super::PyValue;
use std::sync::Arc;

/// Python 2 modules as Python 3 reads them (`_compat_pickle.IMPORT_MAPPING`, the ones a
/// protocol-2 pickle of today's objects names).
const IMPORTS: &[(&str, &str)] = &[
    ("__builtin__", "builtins"),
    ("copy_reg", "copyreg"),
    ("Queue", "queue"),
    ("SocketServer", "socketserver"),
    ("ConfigParser", "configparser"),
    ("repr", "reprlib"),
    ("cPickle", "pickle"),
    ("UserDict", "collections"),
    ("UserList", "collections"),
    ("exceptions", "builtins"),
];

/// Python 2 names that moved (`_compat_pickle.NAME_MAPPING`, and the reverse pickling uses).
const NAMES: &[(&str, &str, &str, &str)] = &[
    ("__builtin__", "xrange", "builtins", "range"),
    ("__builtin__", "reduce", "functools", "reduce"),
    ("__builtin__", "intern", "sys", "intern"),
    ("__builtin__", "unichr", "builtins", "chr"),
    ("__builtin__", "unicode", "builtins", "str"),
    ("__builtin__", "long", "builtins", "int"),
    ("itertools", "izip", "builtins", "zip"),
    ("itertools", "imap", "builtins", "map"),
    ("itertools", "ifilter", "builtins", "filter"),
    ("UserDict", "IterableUserDict", "collections", "UserDict"),
];

/// Exceptions protocol 2 writes under Python 2's `exceptions` module, by the same name.
const EXCEPTIONS: &str = "ArithmeticError AssertionError AttributeError BaseException BufferError \
BytesWarning DeprecationWarning EOFError EnvironmentError Exception FloatingPointError \
FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError IndexError \
KeyError KeyboardInterrupt LookupError MemoryError NameError NotImplementedError OSError \
OverflowError PendingDeprecationWarning ReferenceError RuntimeError RuntimeWarning \
StopIteration SyntaxError SyntaxWarning SystemError SystemExit TabError TypeError \
UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError \
UnicodeWarning UserWarning ValueError Warning ZeroDivisionError";

/// Exceptions protocol 2 writes as Python 2's `exceptions.OSError`.
const OS_ERRORS: &str = "BrokenPipeError ChildProcessError ConnectionAbortedError \
ConnectionError ConnectionRefusedError ConnectionResetError FileExistsError \
FileNotFoundError InterruptedError IsADirectoryError NotADirectoryError PermissionError \
ProcessLookupError TimeoutError";

/// A protocol 0–2 global's name as Python 3 reads it.
pub(super) fn py3_name(module: String, name: String) -> (String, String) {
    if let Some(&(_, _, m, n)) = NAMES.iter().find(|e| e.0 == module && e.1 == name) {
        return (m.into(), n.into());
    }
    match IMPORTS.iter().find(|e| e.0 == module) {
        Some(&(_, m)) => (m.into(), name),
        None => (module, name),
    }
}

/// A global's name as protocol 2 writes it (`fix_imports`).
pub(super) fn py2_name<'a>(module: &'a str, name: &'a str) -> (&'a str, &'a str) {
    if let Some(&(m, n, _, _)) = NAMES.iter().find(|e| e.2 == module && e.3 == name) {
        return (m, n);
    }
    if module == "builtins" {
        if EXCEPTIONS.split(' ').any(|e| e == name) {
            return ("exceptions", name);
        }
        if OS_ERRORS.split(' ').any(|e| e == name) {
            return ("exceptions", "OSError");
        }
        if name == "ModuleNotFoundError" {
            return ("exceptions", "ImportError");
        }
    }
    match IMPORTS[..6].iter().find(|e| e.1 == module) {
        Some(&(m, _)) => (m, name),
        None => (module, name),
    }
}

/// How a callable was applied.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Call {
    /// `REDUCE`, `INST`, `OBJ`: `callable(*args)`.
    Reduce,
    /// `NEWOBJ`, `NEWOBJ_EX`: `cls.__new__(cls, *args)`.
    New,
}

fn leaf(v: PyValue) -> Node {
    Node::Leaf(Arc::new(v))
}

fn object(module: String, name: String, args: Vec<Ix>) -> Node {
    Node::Object {
        module,
        name,
        args,
        state: None,
        list_items: Vec::new(),
        dict_items: Vec::new(),
    }
}

/// Text encoded with one of the codecs protocol 2 uses for bytes, if it can be.
fn encode(text: &str, codec: &str) -> Option<Vec<u8>> {
    match codec.to_ascii_lowercase().replace('_', "-").as_str() {
        "latin1" | "latin-1" | "iso-8859-1" | "iso8859-1" | "l1" => text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect(),
        "utf-8" | "utf8" | "ascii" if codec != "ascii" || text.is_ascii() => {
            Some(text.as_bytes().to_vec())
        }
        _ => None,
    }
}

/// The class (module, name) an applied callable names: a global's own name, or a class made by
/// cloudpickle (`_make_skeleton_class(type, name, bases, {'__module__': …}, …)`,
/// `_make_skeleton_enum(bases, name, qualname, members, module, …)`) by the name it is given.
pub(super) fn class_name(arena: &[Node], ix: Ix) -> Option<(String, String)> {
    let str_at = |args: &[Ix], i: usize| -> Option<String> {
        Some(arena[*args.get(i)?].leaf()?.as_str()?.to_owned())
    };
    match &arena[ix] {
        Node::Leaf(g) => match &**g {
            PyValue::Global { module, name } => Some((module.clone(), name.clone())),
            _ => None,
        },
        Node::Object {
            module, name, args, ..
        } => {
            if module.starts_with("cloudpickle") {
                if name == "_make_skeleton_class" {
                    let class = str_at(args, 1)?;
                    let m = args.get(3).and_then(|&d| match &arena[d] {
                        Node::Dict(items) => items.iter().find_map(|&(k, v)| {
                            (arena[k].leaf()?.as_str()? == "__module__")
                                .then(|| arena[v].leaf()?.as_str().map(str::to_owned))?
                        }),
                        _ => None,
                    });
                    return Some((m.unwrap_or_else(|| "__main__".into()), class));
                }
                if name == "_make_skeleton_enum" {
                    let class = str_at(args, 1)?;
                    let m = str_at(args, 4).unwrap_or_else(|| "__main__".into());
                    return Some((m, class));
                }
            }
            Some((module.clone(), name.clone()))
        }
        _ => None,
    }
}

/// `callable(*args)` (or `cls.__new__(cls, *args)`) as a node, never run.
pub(super) fn apply(
    arena: &mut Vec<Node>,
    callable: Ix,
    args: Vec<Ix>,
    call: Call,
) -> Result<Node, String> {
    let Some((module, name)) = class_name(arena, callable) else {
        return Err(format!("applying a {}", arena[callable].kind()));
    };
    if call == Call::New || !matches!(arena[callable], Node::Leaf(_)) {
        return Ok(object(module, name, args));
    }
    let leaf_at = |i: usize| args.get(i).and_then(|&a| arena[a].leaf());
    let str_at = |i: usize| leaf_at(i).and_then(PyValue::as_str);
    let seq_at = |i: usize| match args.get(i).map(|&a| &arena[a]) {
        Some(Node::List(v) | Node::Tuple(v)) => Some(v.clone()),
        _ => None,
    };
    let known = match (module.as_str(), name.as_str(), args.len()) {
        ("_codecs", "encode", 2) => match (str_at(0), str_at(1)) {
            (Some(s), Some(codec)) => encode(s, codec).map(|b| leaf(PyValue::Bytes(b))),
            _ => None,
        },
        ("builtins", "bytes" | "bytearray", 0..=2) => {
            let bytes = match (leaf_at(0), str_at(1)) {
                (None, None) if args.is_empty() => Some(Vec::new()),
                (Some(PyValue::Bytes(b)), None) => Some(b.clone()),
                (Some(PyValue::Str(s)), Some(codec)) => encode(s, codec),
                _ => None,
            };
            bytes.map(|b| match name.as_str() {
                "bytes" => leaf(PyValue::Bytes(b)),
                _ => leaf(PyValue::ByteArray(b)),
            })
        }
        ("builtins", "set" | "frozenset", 0..=1) => {
            let items = if args.is_empty() {
                Some(Vec::new())
            } else {
                seq_at(0)
            };
            items.map(|v| match name.as_str() {
                "set" => Node::Set(v),
                _ => Node::FrozenSet(v),
            })
        }
        ("collections", "OrderedDict", 0) => Some(Node::Dict(Vec::new())),
        ("collections", "defaultdict", 0..=1) => {
            let factory = match args.first() {
                Some(&f) => f,
                None => {
                    arena.push(leaf(PyValue::None));
                    arena.len() - 1
                }
            };
            Some(Node::DefaultDict {
                factory,
                items: Vec::new(),
            })
        }
        ("copyreg", "_reconstructor", 3) => {
            let state_none = matches!(leaf_at(2), Some(PyValue::None));
            class_name(arena, args[0])
                .map(|(m, n)| object(m, n, if state_none { vec![] } else { vec![args[2]] }))
        }
        ("copyreg", "__newobj__", 1..) => {
            class_name(arena, args[0]).map(|(m, n)| object(m, n, args[1..].to_vec()))
        }
        ("copyreg", "__newobj_ex__", 3) => match class_name(arena, args[0]) {
            Some((m, n)) => {
                let mut a = seq_at(1).unwrap_or_default();
                if !matches!(&arena[args[2]], Node::Dict(d) if d.is_empty()) {
                    a.push(args[2]);
                }
                Some(object(m, n, a))
            }
            None => None,
        },
        ("builtins", "getattr", 2) => match (leaf_at(0), str_at(1)) {
            (Some(PyValue::Global { module, name }), Some(attr)) => Some(leaf(PyValue::Global {
                module: module.clone(),
                name: format!("{name}.{attr}"),
            })),
            _ => None,
        },
        _ => None,
    };
    Ok(known.unwrap_or_else(|| object(module, name, args)))
}
