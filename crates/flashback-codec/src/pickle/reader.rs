//! The pickle machine: opcodes onto a stack of arena nodes, with a MARK stack and a memo.
//! Iterative (no recursion whatever the input), bounded by [`Limits`], never running anything.

use super::globals::{self, Call};
use super::ops::{self, Input};
use super::tree::{Ix, Node};
use super::{bigint, text, Limits, PickleError, PyValue};
use std::collections::HashMap;
use std::sync::Arc;

struct Machine<'a> {
    input: Input<'a>,
    limits: &'a Limits,
    arena: Vec<Node>,
    /// Where each node was made (errors found when the tree is built name it).
    made_at: Vec<usize>,
    stack: Vec<Ix>,
    marks: Vec<usize>,
    memo: HashMap<u64, Ix>,
    /// Objects created and entries added so far.
    objects: usize,
    proto: u8,
}

/// Read a pickle into an arena; returns it, where each node was made and the root's index.
pub(super) fn read(
    data: &[u8],
    limits: &Limits,
) -> Result<(Vec<Node>, Vec<usize>, Ix), PickleError> {
    let mut m = Machine {
        input: Input::new(data),
        limits,
        arena: Vec::new(),
        made_at: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        objects: 0,
        proto: 0,
    };
    loop {
        let Some(op) = m.input.next_op() else {
            return Err(PickleError(format!(
                "pickle: truncated at byte {} (no STOP)",
                data.len()
            )));
        };
        if op == ops::STOP {
            let root = m.pop()?;
            return Ok((m.arena, m.made_at, root));
        }
        m.step(op)?;
    }
}

impl<'a> Machine<'a> {
    fn err(&self, what: impl std::fmt::Display) -> PickleError {
        self.input.err(what)
    }

    fn count(&mut self, n: usize) -> Result<(), PickleError> {
        self.objects += n;
        if self.objects > self.limits.max_objects {
            return Err(self.err(format_args!(
                "more than {} objects",
                self.limits.max_objects
            )));
        }
        Ok(())
    }

    /// A new node, pushed.
    fn push_node(&mut self, node: Node) -> Result<(), PickleError> {
        let ix = self.add(node)?;
        self.stack.push(ix);
        Ok(())
    }

    /// A new node.
    fn add(&mut self, node: Node) -> Result<Ix, PickleError> {
        self.count(1)?;
        self.arena.push(node);
        self.made_at.push(self.input.op_at);
        Ok(self.arena.len() - 1)
    }

    fn leaf(&mut self, v: PyValue) -> Result<(), PickleError> {
        self.push_node(Node::Leaf(Arc::new(v)))
    }

    fn pop(&mut self) -> Result<Ix, PickleError> {
        match self.stack.pop() {
            Some(ix) if self.marks.last().is_none_or(|&m| self.stack.len() >= m) => Ok(ix),
            _ => Err(self.err("stack underflow")),
        }
    }

    fn top(&self) -> Result<Ix, PickleError> {
        match self.stack.last() {
            Some(&ix) if self.marks.last().is_none_or(|&m| self.stack.len() > m) => Ok(ix),
            _ => Err(self.err("stack underflow")),
        }
    }

    /// The items pushed since the last MARK, popped with it.
    fn pop_mark(&mut self) -> Result<Vec<Ix>, PickleError> {
        let Some(m) = self.marks.pop() else {
            return Err(self.err("no MARK"));
        };
        Ok(self.stack.split_off(m))
    }

    fn memo_put(&mut self, key: u64) -> Result<(), PickleError> {
        let ix = self.top()?;
        if self.memo.len() >= self.limits.max_memo && !self.memo.contains_key(&key) {
            return Err(self.err(format_args!(
                "more than {} memo entries",
                self.limits.max_memo
            )));
        }
        self.memo.insert(key, ix);
        Ok(())
    }

    fn memo_get(&mut self, key: u64) -> Result<(), PickleError> {
        match self.memo.get(&key) {
            Some(&ix) => {
                self.stack.push(ix);
                Ok(())
            }
            None => Err(self.err(format_args!("memo key {key} was never stored"))),
        }
    }

    fn decimal_key(&self, line: &[u8]) -> Result<u64, PickleError> {
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| self.err("a memo key that is not a number"))
    }

    /// A length, as bytes the input still has.
    fn sized(&mut self, n: u64) -> Result<&'a [u8], PickleError> {
        self.input.take(n)
    }

    fn global(&mut self, module: String, name: String) -> Result<(), PickleError> {
        let (module, name) = if self.proto < 3 {
            globals::py3_name(module, name)
        } else {
            (module, name)
        };
        self.leaf(PyValue::Global { module, name })
    }

    fn apply(&mut self, callable: Ix, args: Vec<Ix>, call: Call) -> Result<(), PickleError> {
        let node =
            globals::apply(&mut self.arena, callable, args, call).map_err(|e| self.err(e))?;
        // `apply` may add a leaf (a defaultdict's None factory).
        while self.made_at.len() < self.arena.len() {
            self.made_at.push(self.input.op_at);
        }
        self.push_node(node)
    }

    /// The items of a tuple node (REDUCE's and NEWOBJ's arguments).
    fn tuple_items(&self, ix: Ix) -> Result<Vec<Ix>, PickleError> {
        match &self.arena[ix] {
            Node::Tuple(v) | Node::List(v) => Ok(v.clone()),
            other => Err(self.err(format_args!("arguments that are a {}", other.kind()))),
        }
    }

    fn append(&mut self, target: Ix, items: Vec<Ix>) -> Result<(), PickleError> {
        self.count(items.len())?;
        match &mut self.arena[target] {
            Node::List(v) | Node::Set(v) => v.extend(items),
            Node::Object { list_items, .. } => list_items.extend(items),
            other => {
                let kind = other.kind();
                return Err(self.err(format_args!("adding items to a {kind}")));
            }
        }
        Ok(())
    }

    fn set_items(&mut self, target: Ix, flat: Vec<Ix>) -> Result<(), PickleError> {
        if !flat.len().is_multiple_of(2) {
            return Err(self.err("an odd number of keys and values"));
        }
        self.count(flat.len() / 2)?;
        let pairs = flat.chunks(2).map(|p| (p[0], p[1]));
        match &mut self.arena[target] {
            Node::Dict(d) | Node::DefaultDict { items: d, .. } => d.extend(pairs),
            Node::Object { dict_items, .. } => dict_items.extend(pairs),
            other => {
                let kind = other.kind();
                return Err(self.err(format_args!("setting items on a {kind}")));
            }
        }
        Ok(())
    }

    fn build(&mut self, state: Ix) -> Result<(), PickleError> {
        let target = self.top()?;
        match &mut self.arena[target] {
            Node::Object { state: s, .. } => {
                *s = Some(state);
                Ok(())
            }
            other => {
                let kind = other.kind();
                Err(self.err(format_args!("BUILD on a {kind}")))
            }
        }
    }

    fn step(&mut self, op: u8) -> Result<(), PickleError> {
        use ops::*;
        match op {
            PROTO => {
                self.proto = self.input.u8()?;
                if self.proto > 5 {
                    return Err(self.err(format_args!("unsupported protocol {}", self.proto)));
                }
            }
            FRAME => {
                let n = self.input.u64()?;
                // Frames only group opcodes; a frame longer than the input is a truncation.
                let left = self.input.left();
                if n > left as u64 {
                    return Err(self.input.truncated(n, left));
                }
            }
            MARK => {
                if self.marks.len() >= self.limits.max_depth {
                    return Err(self.err(format_args!(
                        "more than {} nested MARKs",
                        self.limits.max_depth
                    )));
                }
                self.marks.push(self.stack.len());
            }
            POP => {
                if self.marks.last() == Some(&self.stack.len()) {
                    // Popping a MARK (as CPython does).
                    self.marks.pop();
                } else {
                    self.pop()?;
                }
            }
            POP_MARK => {
                self.pop_mark()?;
            }
            DUP => {
                let ix = self.top()?;
                self.stack.push(ix);
            }
            NONE => self.leaf(PyValue::None)?,
            NEWTRUE => self.leaf(PyValue::Bool(true))?,
            NEWFALSE => self.leaf(PyValue::Bool(false))?,
            BININT => {
                let v = self.input.u32()? as i32;
                self.leaf(PyValue::Int(i64::from(v)))?
            }
            BININT1 => {
                let v = self.input.u8()?;
                self.leaf(PyValue::Int(i64::from(v)))?
            }
            BININT2 => {
                let v = self.input.u16()?;
                self.leaf(PyValue::Int(i64::from(v)))?
            }
            LONG1 | LONG4 => {
                let n = if op == LONG1 {
                    u64::from(self.input.u8()?)
                } else {
                    u64::from(self.input.u32()?)
                };
                let bytes = self.sized(n)?;
                if bytes.len() > bigint::MAX_LONG_BYTES {
                    return Err(self.err(format_args!(
                        "an int of {} bytes (more than {})",
                        bytes.len(),
                        bigint::MAX_LONG_BYTES
                    )));
                }
                let v = bigint::from_le(bytes);
                self.leaf(v)?
            }
            INT | LONG => {
                let line = self.input.line()?;
                let v = text::int_line(line, op == INT).map_err(|e| self.err(e))?;
                self.leaf(v)?
            }
            FLOAT => {
                let line = self.input.line()?;
                let v = text::float_line(line).map_err(|e| self.err(e))?;
                self.leaf(PyValue::Float(v))?
            }
            BINFLOAT => {
                let v = f64::from_bits(u64::from_be_bytes(self.input.u64()?.to_le_bytes()));
                self.leaf(PyValue::Float(v))?
            }
            STRING => {
                let line = self.input.line()?;
                let bytes = text::string_line(line).map_err(|e| self.err(e))?;
                self.leaf(PyValue::Str(text::latin1(&bytes)))?
            }
            BINSTRING | SHORT_BINSTRING => {
                let n = if op == BINSTRING {
                    u64::from(self.input.u32()?)
                } else {
                    u64::from(self.input.u8()?)
                };
                let s = text::latin1(self.sized(n)?);
                self.leaf(PyValue::Str(s))?
            }
            UNICODE => {
                let line = self.input.line()?;
                let s = text::raw_unicode_escape(line);
                self.leaf(PyValue::Str(s))?
            }
            BINUNICODE | SHORT_BINUNICODE | BINUNICODE8 => {
                let n = match op {
                    SHORT_BINUNICODE => u64::from(self.input.u8()?),
                    BINUNICODE => u64::from(self.input.u32()?),
                    _ => self.input.u64()?,
                };
                let bytes = self.sized(n)?;
                let s = String::from_utf8_lossy(bytes).into_owned();
                self.leaf(PyValue::Str(s))?
            }
            BINBYTES | SHORT_BINBYTES | BINBYTES8 | BYTEARRAY8 => {
                let n = match op {
                    SHORT_BINBYTES => u64::from(self.input.u8()?),
                    BINBYTES => u64::from(self.input.u32()?),
                    _ => self.input.u64()?,
                };
                let bytes = self.sized(n)?.to_vec();
                self.leaf(if op == BYTEARRAY8 {
                    PyValue::ByteArray(bytes)
                } else {
                    PyValue::Bytes(bytes)
                })?
            }
            EMPTY_TUPLE => self.push_node(Node::Tuple(Vec::new()))?,
            TUPLE1 | TUPLE2 | TUPLE3 => {
                let n = usize::from(op - TUPLE1 + 1);
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop()?);
                }
                items.reverse();
                self.push_node(Node::Tuple(items))?
            }
            TUPLE => {
                let items = self.pop_mark()?;
                self.push_node(Node::Tuple(items))?
            }
            EMPTY_LIST => self.push_node(Node::List(Vec::new()))?,
            LIST => {
                let items = self.pop_mark()?;
                self.push_node(Node::List(items))?
            }
            EMPTY_DICT => self.push_node(Node::Dict(Vec::new()))?,
            DICT => {
                let flat = self.pop_mark()?;
                let ix = self.add(Node::Dict(Vec::new()))?;
                self.stack.push(ix);
                self.set_items(ix, flat)?
            }
            EMPTY_SET => self.push_node(Node::Set(Vec::new()))?,
            FROZENSET => {
                let items = self.pop_mark()?;
                self.push_node(Node::FrozenSet(items))?
            }
            APPEND => {
                let item = self.pop()?;
                let target = self.top()?;
                self.append(target, vec![item])?
            }
            APPENDS | ADDITEMS => {
                let items = self.pop_mark()?;
                let target = self.top()?;
                self.append(target, items)?
            }
            SETITEM => {
                let v = self.pop()?;
                let k = self.pop()?;
                let target = self.top()?;
                self.set_items(target, vec![k, v])?
            }
            SETITEMS => {
                let flat = self.pop_mark()?;
                let target = self.top()?;
                self.set_items(target, flat)?
            }
            PUT => {
                let line = self.input.line()?;
                let key = self.decimal_key(line)?;
                self.memo_put(key)?
            }
            BINPUT => {
                let key = self.input.u8()?;
                self.memo_put(u64::from(key))?
            }
            LONG_BINPUT => {
                let key = self.input.u32()?;
                self.memo_put(u64::from(key))?
            }
            MEMOIZE => {
                let key = self.memo.len() as u64;
                self.memo_put(key)?
            }
            GET => {
                let line = self.input.line()?;
                let key = self.decimal_key(line)?;
                self.memo_get(key)?
            }
            BINGET => {
                let key = self.input.u8()?;
                self.memo_get(u64::from(key))?
            }
            LONG_BINGET => {
                let key = self.input.u32()?;
                self.memo_get(u64::from(key))?
            }
            GLOBAL => {
                let module = self.input.text_line()?;
                let name = self.input.text_line()?;
                self.global(module, name)?
            }
            STACK_GLOBAL => {
                let name = self.pop()?;
                let module = self.pop()?;
                let as_str = |ix: Ix| self.arena[ix].leaf().and_then(PyValue::as_str);
                let (Some(module), Some(name)) = (as_str(module), as_str(name)) else {
                    return Err(self.err("a global named by something other than strings"));
                };
                let (module, name) = (module.to_owned(), name.to_owned());
                self.leaf(PyValue::Global { module, name })?
            }
            REDUCE => {
                let args = self.pop()?;
                let callable = self.pop()?;
                let args = self.tuple_items(args)?;
                self.apply(callable, args, Call::Reduce)?
            }
            NEWOBJ => {
                let args = self.pop()?;
                let cls = self.pop()?;
                let args = self.tuple_items(args)?;
                self.apply(cls, args, Call::New)?
            }
            NEWOBJ_EX => {
                let kwargs = self.pop()?;
                let args = self.pop()?;
                let cls = self.pop()?;
                let mut args = self.tuple_items(args)?;
                if !matches!(&self.arena[kwargs], Node::Dict(d) if d.is_empty()) {
                    args.push(kwargs);
                }
                self.apply(cls, args, Call::New)?
            }
            INST => {
                let module = self.input.text_line()?;
                let name = self.input.text_line()?;
                let args = self.pop_mark()?;
                self.global(module, name)?;
                let cls = self.pop()?;
                self.apply(cls, args, Call::Reduce)?
            }
            OBJ => {
                let mut items = self.pop_mark()?;
                if items.is_empty() {
                    return Err(self.err("OBJ without a class"));
                }
                let cls = items.remove(0);
                self.apply(cls, items, Call::Reduce)?
            }
            BUILD => {
                let state = self.pop()?;
                self.build(state)?
            }
            READONLY_BUFFER => {
                self.top()?;
            }
            PERSID | BINPERSID => {
                return Err(self.err(
                    "a persistent id (the pickle refers to objects kept outside it; not supported)",
                ))
            }
            NEXT_BUFFER => {
                return Err(
                    self.err("an out-of-band buffer (pickled with buffer_callback; not supported)")
                )
            }
            EXT1 | EXT2 | EXT4 => {
                return Err(
                    self.err("an extension registry code (copyreg.add_extension; not supported)")
                )
            }
            other => return Err(self.err(format_args!("unknown opcode 0x{other:02x}"))),
        }
        Ok(())
    }
}
