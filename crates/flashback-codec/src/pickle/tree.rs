//! The reader's arena (nodes refer to each other by index, so a memo entry used many times is
//! one node) and its conversion into the shared [`PyValue`] tree: iterative, each node built
//! once (shared by `Arc`), a reference to a node still being built (a cycle) becoming
//! [`PyValue::Recursive`], and the depth of the result bounded exactly.

use super::{PickleError, PyValue};
use std::sync::Arc;

/// An index into the arena.
pub(super) type Ix = usize;

/// A node of the arena.
#[derive(Debug)]
pub(super) enum Node {
    /// Anything without children (scalars, strings, bytes, globals).
    Leaf(Arc<PyValue>),
    Tuple(Vec<Ix>),
    List(Vec<Ix>),
    Dict(Vec<(Ix, Ix)>),
    Set(Vec<Ix>),
    FrozenSet(Vec<Ix>),
    DefaultDict {
        factory: Ix,
        items: Vec<(Ix, Ix)>,
    },
    Object {
        module: String,
        name: String,
        args: Vec<Ix>,
        state: Option<Ix>,
        list_items: Vec<Ix>,
        dict_items: Vec<(Ix, Ix)>,
    },
}

impl Node {
    /// The leaf's value, if this is a leaf.
    pub(super) fn leaf(&self) -> Option<&PyValue> {
        match self {
            Node::Leaf(v) => Some(v),
            _ => None,
        }
    }

    /// A short kind name for messages.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Node::Leaf(v) => match **v {
                PyValue::None => "None",
                PyValue::Bool(_) => "bool",
                PyValue::Int(_) | PyValue::BigInt(_) => "int",
                PyValue::Float(_) => "float",
                PyValue::Str(_) => "str",
                PyValue::Bytes(_) => "bytes",
                PyValue::ByteArray(_) => "bytearray",
                PyValue::Global { .. } => "global",
                _ => "value",
            },
            Node::Tuple(_) => "tuple",
            Node::List(_) => "list",
            Node::Dict(_) => "dict",
            Node::Set(_) => "set",
            Node::FrozenSet(_) => "frozenset",
            Node::DefaultDict { .. } => "defaultdict",
            Node::Object { .. } => "object",
        }
    }

    /// The children, in order.
    fn children(&self) -> Vec<Ix> {
        let pairs = |p: &[(Ix, Ix)]| p.iter().flat_map(|&(k, v)| [k, v]).collect::<Vec<_>>();
        match self {
            Node::Leaf(_) => Vec::new(),
            Node::Tuple(v) | Node::List(v) | Node::Set(v) | Node::FrozenSet(v) => v.clone(),
            Node::Dict(p) => pairs(p),
            Node::DefaultDict { factory, items } => {
                let mut c = vec![*factory];
                c.extend(pairs(items));
                c
            }
            Node::Object {
                args,
                state,
                list_items,
                dict_items,
                ..
            } => {
                let mut c = args.clone();
                c.extend(state.iter().copied());
                c.extend(list_items.iter().copied());
                c.extend(pairs(dict_items));
                c
            }
        }
    }
}

enum Built {
    Unvisited,
    InProgress,
    /// The node and the height of its subtree.
    Done(Arc<PyValue>, usize),
}

/// Build the tree of `root`, no deeper than `max_depth` levels (`made_at`: where each node was
/// made, for the error).
pub(super) fn build(
    arena: &[Node],
    made_at: &[usize],
    root: Ix,
    max_depth: usize,
) -> Result<Arc<PyValue>, PickleError> {
    let too_deep = |ix: Ix| {
        PickleError(format!(
            "pickle: nested deeper than {max_depth} levels (the value made at byte {})",
            made_at.get(ix).copied().unwrap_or(0)
        ))
    };
    let mut built: Vec<Built> = Vec::with_capacity(arena.len());
    built.resize_with(arena.len(), || Built::Unvisited);
    // (node, its children, how many of them are built)
    let mut stack: Vec<(Ix, Vec<Ix>, usize)> = Vec::new();
    let push = |ix: Ix, stack: &mut Vec<(Ix, Vec<Ix>, usize)>, built: &mut Vec<Built>| {
        built[ix] = Built::InProgress;
        stack.push((ix, arena[ix].children(), 0));
    };
    push(root, &mut stack, &mut built);
    if max_depth == 0 {
        return Err(too_deep(root));
    }
    while let Some((ix, kids, pos)) = stack.last_mut() {
        if let Some(&kid) = kids.get(*pos) {
            *pos += 1;
            let depth = stack.len();
            match &built[kid] {
                Built::Unvisited => {
                    if depth + 1 > max_depth {
                        return Err(too_deep(kid));
                    }
                    push(kid, &mut stack, &mut built);
                }
                Built::Done(_, height) if depth + height > max_depth => return Err(too_deep(kid)),
                _ => {}
            }
            continue;
        }
        let ix = *ix;
        let mut height = 1;
        let mut get = |i: Ix| match &built[i] {
            Built::Done(v, h) => {
                height = height.max(h + 1);
                v.clone()
            }
            _ => Arc::new(PyValue::Recursive),
        };
        let value = match &arena[ix] {
            Node::Leaf(v) => v.clone(),
            Node::Tuple(v) => Arc::new(PyValue::Tuple(v.iter().map(|&i| get(i)).collect())),
            Node::List(v) => Arc::new(PyValue::List(v.iter().map(|&i| get(i)).collect())),
            Node::Set(v) => Arc::new(PyValue::Set(v.iter().map(|&i| get(i)).collect())),
            Node::FrozenSet(v) => Arc::new(PyValue::FrozenSet(v.iter().map(|&i| get(i)).collect())),
            Node::Dict(p) => Arc::new(PyValue::Dict(
                p.iter().map(|&(k, v)| (get(k), get(v))).collect(),
            )),
            Node::DefaultDict { factory, items } => {
                let factory = get(*factory);
                let items = items.iter().map(|&(k, v)| (get(k), get(v))).collect();
                Arc::new(PyValue::DefaultDict { factory, items })
            }
            Node::Object {
                module,
                name,
                args,
                state,
                list_items,
                dict_items,
            } => {
                let args = args.iter().map(|&i| get(i)).collect();
                let state = state.map(&mut get);
                let list_items = list_items.iter().map(|&i| get(i)).collect();
                let dict_items = dict_items.iter().map(|&(k, v)| (get(k), get(v))).collect();
                Arc::new(PyValue::Object {
                    module: module.clone(),
                    name: name.clone(),
                    args,
                    state,
                    list_items,
                    dict_items,
                })
            }
        };
        built[ix] = Built::Done(value, height);
        stack.pop();
    }
    match std::mem::replace(&mut built[root], Built::Unvisited) {
        Built::Done(v, _) => Ok(v),
        _ => Err(PickleError("pickle: the result was never built".into())),
    }
}
