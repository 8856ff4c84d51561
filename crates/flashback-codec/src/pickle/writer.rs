//! `dumps2`: a protocol-2 pickler writing exactly the opcodes CPython's C pickler writes, so
//! that a tree without shared nodes gives the bytes of `pickle.dumps(obj, 2)`. A node shared
//! (the same `Arc`) is written once and fetched from the memo after, as CPython does for the
//! same object.

use super::globals::py2_name;
use super::{bigint, PickleError, PyValue};
use std::collections::HashMap;
use std::sync::Arc;

/// CPython's batch size for `APPENDS` and `SETITEMS`.
const BATCH: usize = 1000;
/// Deepest nesting written, [`super::Limits`]'s default (a hand-built deeper tree is refused,
/// not a stack overflow).
const MAX_DEPTH: usize = crate::msgpack::MAX_DEPTH;

/// Write a value as a protocol-2 pickle (see the module docs). Objects are written as
/// `GLOBAL` + arguments + `REDUCE`, or — with no arguments but a state — as `GLOBAL`,
/// `EMPTY_TUPLE`, `NEWOBJ` (`cls.__new__(cls)`, what protocol 2 writes for an object reduced
/// by `copyreg.__newobj__`: pydantic models, UUIDs, dataclasses, `Item`s), then their items and
/// `BUILD` state. [`PyValue::Recursive`] cannot be written.
pub fn dumps2(v: &PyValue) -> Result<Vec<u8>, PickleError> {
    let mut w = Writer {
        out: vec![0x80, 2],
        memo: HashMap::new(),
        globals: HashMap::new(),
        next: 0,
    };
    w.value(v, None, 0)?;
    w.out.push(b'.');
    Ok(w.out)
}

/// `GLOBAL` names are lines: a name with a newline (possible from protocol 4's
/// `STACK_GLOBAL`) cannot be written in protocol 2.
fn one_line(module: &str, name: &str) -> Result<(), PickleError> {
    if module.contains('\n') || name.contains('\n') || module.is_empty() {
        return Err(PickleError(format!(
            "pickle: cannot write the global {:.60?} in protocol 2",
            format!("{module}.{name}")
        )));
    }
    Ok(())
}

struct Writer {
    out: Vec<u8>,
    /// Shared nodes written, by address: their memo index.
    memo: HashMap<usize, u32>,
    /// Globals written (CPython memoizes the class object), by name.
    globals: HashMap<(String, String), u32>,
    next: u32,
}

impl Writer {
    /// `BINPUT`/`LONG_BINPUT` of the next memo index; returns it.
    fn put(&mut self) -> u32 {
        let i = self.next;
        self.next += 1;
        match u8::try_from(i) {
            Ok(b) => self.out.extend([b'q', b]),
            Err(_) => {
                self.out.push(b'r');
                self.out.extend(i.to_le_bytes());
            }
        }
        i
    }

    fn get(&mut self, i: u32) {
        match u8::try_from(i) {
            Ok(b) => self.out.extend([b'h', b]),
            Err(_) => {
                self.out.push(b'j');
                self.out.extend(i.to_le_bytes());
            }
        }
    }

    /// Memoize the node just written when it is shared.
    fn remember(&mut self, node: Option<&Arc<PyValue>>) {
        let i = self.put();
        if let Some(a) = node {
            self.memo.insert(Arc::as_ptr(a) as usize, i);
        }
    }

    fn global(&mut self, module: &str, name: &str) {
        let key = (module.to_owned(), name.to_owned());
        if let Some(&i) = self.globals.get(&key) {
            return self.get(i);
        }
        if module.is_empty() {
            // The constant (single-object) string `name`.
            self.str(name, None);
            self.globals.insert(key, self.next - 1);
            return;
        }
        let (m, n) = py2_name(module, name);
        self.out.push(b'c');
        self.out.extend(m.as_bytes());
        self.out.push(b'\n');
        self.out.extend(n.as_bytes());
        self.out.push(b'\n');
        let i = self.put();
        self.globals.insert(key, i);
    }

    fn int(&mut self, i: i64) {
        match i {
            0..=0xff => self.out.extend([b'K', i as u8]),
            0x100..=0xffff => {
                self.out.push(b'M');
                self.out.extend((i as u16).to_le_bytes());
            }
            _ if i32::try_from(i).is_ok() => {
                self.out.push(b'J');
                self.out.extend((i as i32).to_le_bytes());
            }
            _ => self.long(&i.to_string()),
        }
    }

    fn long(&mut self, digits: &str) {
        let bytes = bigint::to_le(digits).unwrap_or_default();
        match u8::try_from(bytes.len()) {
            Ok(n) => self.out.extend([0x8a, n]),
            Err(_) => {
                self.out.push(0x8b);
                self.out.extend((bytes.len() as u32).to_le_bytes());
            }
        }
        self.out.extend(bytes);
    }

    /// A `BINUNICODE` and its memo entry.
    fn str(&mut self, s: &str, node: Option<&Arc<PyValue>>) {
        self.out.push(b'X');
        self.out.extend((s.len() as u32).to_le_bytes());
        self.out.extend(s.as_bytes());
        self.remember(node);
    }

    /// A str: CPython's empty string is one object, written once and fetched after (by value),
    /// and so is a one-character Latin-1 string made from bytes (`text_of_bytes`); any other
    /// is its own object (shared by `Arc`).
    fn text(&mut self, s: &str, node: Option<&Arc<PyValue>>, text_of_bytes: bool) {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (None, _) => self.global("", s),
            (Some(c), None) if text_of_bytes && u32::from(c) < 256 => self.global("", s),
            _ => self.str(s, node),
        }
    }

    /// Bytes as protocol 2 writes them: `_codecs.encode(latin1 text, 'latin1')`, `bytes()`
    /// when empty.
    fn bytes(&mut self, b: &[u8], node: Option<&Arc<PyValue>>) {
        if b.is_empty() {
            self.global("builtins", "bytes");
            self.out.push(b')');
        } else {
            self.global("_codecs", "encode");
            let text: String = b.iter().map(|&c| char::from(c)).collect();
            self.text(&text, None, true);
            // CPython's "latin1" is one constant object: written once, then fetched.
            self.global("", "latin1");
            self.out.push(0x86);
            self.put();
        }
        self.out.push(b'R');
        self.remember(node);
    }

    /// A tuple of already-known parts: `)`, `TUPLE1-3` or `MARK … TUPLE`, memoized.
    fn tuple(
        &mut self,
        items: &[Arc<PyValue>],
        node: Option<&Arc<PyValue>>,
        depth: usize,
    ) -> Result<(), PickleError> {
        if items.is_empty() {
            self.out.push(b')');
            return Ok(());
        }
        if items.len() > 3 {
            self.out.push(b'(');
        }
        for i in items {
            self.value(i, Some(i), depth)?;
        }
        self.out.push(match items.len() {
            1 => 0x85,
            2 => 0x86,
            3 => 0x87,
            _ => b't',
        });
        self.remember(node);
        Ok(())
    }

    /// Items of an exact list (`batch_list_exact`): one → `APPEND`, else `MARK … APPENDS`
    /// batches.
    fn list_items(&mut self, items: &[Arc<PyValue>], depth: usize) -> Result<(), PickleError> {
        if items.len() == 1 {
            self.value(&items[0], Some(&items[0]), depth)?;
            self.out.push(b'a');
            return Ok(());
        }
        for batch in items.chunks(BATCH) {
            self.out.push(b'(');
            for i in batch {
                self.value(i, Some(i), depth)?;
            }
            self.out.push(b'e');
        }
        Ok(())
    }

    /// Items from an iterator (`batch_list`/`batch_dict`: a lone last item → `APPEND`/`SETITEM`).
    fn iter_items<T>(
        &mut self,
        items: &[T],
        mut one: impl FnMut(&mut Self, &T) -> Result<(), PickleError>,
        single: u8,
        many: u8,
    ) -> Result<(), PickleError> {
        for batch in items.chunks(BATCH) {
            if batch.len() == 1 {
                one(self, &batch[0])?;
                self.out.push(single);
            } else {
                self.out.push(b'(');
                for i in batch {
                    one(self, i)?;
                }
                self.out.push(many);
            }
        }
        Ok(())
    }

    fn pair(
        &mut self,
        (k, v): &(Arc<PyValue>, Arc<PyValue>),
        depth: usize,
    ) -> Result<(), PickleError> {
        self.value(k, Some(k), depth)?;
        self.value(v, Some(v), depth)
    }

    /// Items of an exact dict (`batch_dict_exact`): one → `SETITEM`, else `MARK … SETITEMS`
    /// batches, with an empty last batch when the count is a multiple of 1000.
    fn dict_items(
        &mut self,
        items: &[(Arc<PyValue>, Arc<PyValue>)],
        depth: usize,
    ) -> Result<(), PickleError> {
        if items.is_empty() {
            return Ok(());
        }
        if items.len() == 1 {
            self.pair(&items[0], depth)?;
            self.out.push(b's');
            return Ok(());
        }
        let mut rest = items;
        loop {
            let n = rest.len().min(BATCH);
            self.out.push(b'(');
            for p in &rest[..n] {
                self.pair(p, depth)?;
            }
            self.out.push(b'u');
            rest = &rest[n..];
            if n < BATCH {
                return Ok(());
            }
        }
    }

    /// `cls(arg)` for a set-like value: `GLOBAL`, a list of the items, `TUPLE1`, `REDUCE`.
    fn reduce_list(
        &mut self,
        module: &str,
        name: &str,
        items: &[Arc<PyValue>],
        node: Option<&Arc<PyValue>>,
        depth: usize,
    ) -> Result<(), PickleError> {
        self.global(module, name);
        self.out.push(b']');
        self.put();
        if !items.is_empty() {
            self.list_items(items, depth)?;
        }
        self.out.extend([0x85]);
        self.put();
        self.out.push(b'R');
        self.remember(node);
        Ok(())
    }

    fn value(
        &mut self,
        v: &PyValue,
        node: Option<&Arc<PyValue>>,
        depth: usize,
    ) -> Result<(), PickleError> {
        if depth >= MAX_DEPTH {
            return Err(PickleError(format!(
                "pickle: cannot write a value nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let depth = depth + 1;
        if let Some(&i) = node.and_then(|a| self.memo.get(&(Arc::as_ptr(a) as usize))) {
            self.get(i);
            return Ok(());
        }
        match v {
            PyValue::None => self.out.push(b'N'),
            PyValue::Bool(b) => self.out.push(if *b { 0x88 } else { 0x89 }),
            PyValue::Int(i) => self.int(*i),
            PyValue::BigInt(d) => {
                if bigint::to_le(d).is_none() {
                    return Err(PickleError(format!("pickle: {d:.40?} is not an integer")));
                }
                self.long(d)
            }
            PyValue::Float(f) => {
                self.out.push(b'G');
                self.out.extend(f.to_bits().to_be_bytes());
            }
            PyValue::Str(s) => self.text(s, node, false),
            PyValue::Bytes(b) => self.bytes(b, node),
            PyValue::ByteArray(b) => {
                self.global("builtins", "bytearray");
                if !b.is_empty() {
                    self.bytes(b, None);
                    self.out.push(0x85);
                    self.put();
                } else {
                    self.out.push(b')');
                }
                self.out.push(b'R');
                self.remember(node);
            }
            PyValue::Tuple(items) => self.tuple(items, node, depth)?,
            PyValue::List(items) => {
                self.out.push(b']');
                self.remember(node);
                if !items.is_empty() {
                    self.list_items(items, depth)?;
                }
            }
            PyValue::Dict(items) => {
                self.out.push(b'}');
                self.remember(node);
                self.dict_items(items, depth)?;
            }
            PyValue::Set(items) => self.reduce_list("builtins", "set", items, node, depth)?,
            PyValue::FrozenSet(items) => {
                self.reduce_list("builtins", "frozenset", items, node, depth)?
            }
            PyValue::DefaultDict { factory, items } => {
                self.global("collections", "defaultdict");
                if factory.is_none() {
                    self.out.push(b')');
                } else {
                    self.tuple(std::slice::from_ref(factory), None, depth)?;
                }
                self.out.push(b'R');
                self.remember(node);
                self.iter_items(items, |w, p| w.pair(p, depth), b's', b'u')?;
            }
            PyValue::Global { module, name } => {
                one_line(module, name)?;
                self.global(module, name)
            }
            PyValue::Object {
                module,
                name,
                args,
                state,
                list_items,
                dict_items,
            } => {
                one_line(module, name)?;
                self.global(module, name);
                if args.is_empty() && state.is_some() {
                    // `copyreg.__newobj__(cls)`, as protocol 2 writes an object with a state.
                    self.out.extend([b')', 0x81]);
                } else {
                    self.tuple(args, None, depth)?;
                    self.out.push(b'R');
                }
                self.remember(node);
                self.iter_items(list_items, |w, i| w.value(i, Some(i), depth), b'a', b'e')?;
                self.iter_items(dict_items, |w, p| w.pair(p, depth), b's', b'u')?;
                if let Some(s) = state {
                    self.value(s, Some(s), depth)?;
                    self.out.push(b'b');
                }
            }
            PyValue::Recursive => {
                return Err(PickleError(
                    "pickle: cannot write a reference to a container being built (a cycle)".into(),
                ))
            }
        }
        Ok(())
    }
}
