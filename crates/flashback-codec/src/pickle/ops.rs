//! Pickle opcodes and the input cursor: every read is checked against the bytes left before
//! anything is allocated, and every error names the byte offset.

use super::PickleError;

pub(super) const MARK: u8 = b'(';
pub(super) const STOP: u8 = b'.';
pub(super) const POP: u8 = b'0';
pub(super) const POP_MARK: u8 = b'1';
pub(super) const DUP: u8 = b'2';
pub(super) const FLOAT: u8 = b'F';
pub(super) const INT: u8 = b'I';
pub(super) const BININT: u8 = b'J';
pub(super) const BININT1: u8 = b'K';
pub(super) const LONG: u8 = b'L';
pub(super) const BININT2: u8 = b'M';
pub(super) const NONE: u8 = b'N';
pub(super) const PERSID: u8 = b'P';
pub(super) const BINPERSID: u8 = b'Q';
pub(super) const REDUCE: u8 = b'R';
pub(super) const STRING: u8 = b'S';
pub(super) const BINSTRING: u8 = b'T';
pub(super) const SHORT_BINSTRING: u8 = b'U';
pub(super) const UNICODE: u8 = b'V';
pub(super) const BINUNICODE: u8 = b'X';
pub(super) const APPEND: u8 = b'a';
pub(super) const BUILD: u8 = b'b';
pub(super) const GLOBAL: u8 = b'c';
pub(super) const DICT: u8 = b'd';
pub(super) const EMPTY_DICT: u8 = b'}';
pub(super) const APPENDS: u8 = b'e';
pub(super) const GET: u8 = b'g';
pub(super) const BINGET: u8 = b'h';
pub(super) const INST: u8 = b'i';
pub(super) const LONG_BINGET: u8 = b'j';
pub(super) const LIST: u8 = b'l';
pub(super) const EMPTY_LIST: u8 = b']';
pub(super) const OBJ: u8 = b'o';
pub(super) const PUT: u8 = b'p';
pub(super) const BINPUT: u8 = b'q';
pub(super) const LONG_BINPUT: u8 = b'r';
pub(super) const SETITEM: u8 = b's';
pub(super) const TUPLE: u8 = b't';
pub(super) const EMPTY_TUPLE: u8 = b')';
pub(super) const SETITEMS: u8 = b'u';
pub(super) const BINFLOAT: u8 = b'G';
pub(super) const PROTO: u8 = 0x80;
pub(super) const NEWOBJ: u8 = 0x81;
pub(super) const EXT1: u8 = 0x82;
pub(super) const EXT2: u8 = 0x83;
pub(super) const EXT4: u8 = 0x84;
pub(super) const TUPLE1: u8 = 0x85;
pub(super) const TUPLE2: u8 = 0x86;
pub(super) const TUPLE3: u8 = 0x87;
pub(super) const NEWTRUE: u8 = 0x88;
pub(super) const NEWFALSE: u8 = 0x89;
pub(super) const LONG1: u8 = 0x8a;
pub(super) const LONG4: u8 = 0x8b;
pub(super) const BINBYTES: u8 = b'B';
pub(super) const SHORT_BINBYTES: u8 = b'C';
pub(super) const SHORT_BINUNICODE: u8 = 0x8c;
pub(super) const BINUNICODE8: u8 = 0x8d;
pub(super) const BINBYTES8: u8 = 0x8e;
pub(super) const EMPTY_SET: u8 = 0x8f;
pub(super) const ADDITEMS: u8 = 0x90;
pub(super) const FROZENSET: u8 = 0x91;
pub(super) const NEWOBJ_EX: u8 = 0x92;
pub(super) const STACK_GLOBAL: u8 = 0x93;
pub(super) const MEMOIZE: u8 = 0x94;
pub(super) const FRAME: u8 = 0x95;
pub(super) const BYTEARRAY8: u8 = 0x96;
pub(super) const NEXT_BUFFER: u8 = 0x97;
pub(super) const READONLY_BUFFER: u8 = 0x98;

/// The opcode's name, for messages (empty for an unknown opcode).
pub(super) fn name(op: u8) -> &'static str {
    match op {
        MARK => "MARK",
        STOP => "STOP",
        POP => "POP",
        POP_MARK => "POP_MARK",
        DUP => "DUP",
        FLOAT => "FLOAT",
        INT => "INT",
        BININT => "BININT",
        BININT1 => "BININT1",
        LONG => "LONG",
        BININT2 => "BININT2",
        NONE => "NONE",
        PERSID => "PERSID",
        BINPERSID => "BINPERSID",
        REDUCE => "REDUCE",
        STRING => "STRING",
        BINSTRING => "BINSTRING",
        SHORT_BINSTRING => "SHORT_BINSTRING",
        UNICODE => "UNICODE",
        BINUNICODE => "BINUNICODE",
        APPEND => "APPEND",
        BUILD => "BUILD",
        GLOBAL => "GLOBAL",
        DICT => "DICT",
        EMPTY_DICT => "EMPTY_DICT",
        APPENDS => "APPENDS",
        GET => "GET",
        BINGET => "BINGET",
        INST => "INST",
        LONG_BINGET => "LONG_BINGET",
        LIST => "LIST",
        EMPTY_LIST => "EMPTY_LIST",
        OBJ => "OBJ",
        PUT => "PUT",
        BINPUT => "BINPUT",
        LONG_BINPUT => "LONG_BINPUT",
        SETITEM => "SETITEM",
        TUPLE => "TUPLE",
        EMPTY_TUPLE => "EMPTY_TUPLE",
        SETITEMS => "SETITEMS",
        BINFLOAT => "BINFLOAT",
        PROTO => "PROTO",
        NEWOBJ => "NEWOBJ",
        EXT1 => "EXT1",
        EXT2 => "EXT2",
        EXT4 => "EXT4",
        TUPLE1 => "TUPLE1",
        TUPLE2 => "TUPLE2",
        TUPLE3 => "TUPLE3",
        NEWTRUE => "NEWTRUE",
        NEWFALSE => "NEWFALSE",
        LONG1 => "LONG1",
        LONG4 => "LONG4",
        BINBYTES => "BINBYTES",
        SHORT_BINBYTES => "SHORT_BINBYTES",
        SHORT_BINUNICODE => "SHORT_BINUNICODE",
        BINUNICODE8 => "BINUNICODE8",
        BINBYTES8 => "BINBYTES8",
        EMPTY_SET => "EMPTY_SET",
        ADDITEMS => "ADDITEMS",
        FROZENSET => "FROZENSET",
        NEWOBJ_EX => "NEWOBJ_EX",
        STACK_GLOBAL => "STACK_GLOBAL",
        MEMOIZE => "MEMOIZE",
        FRAME => "FRAME",
        BYTEARRAY8 => "BYTEARRAY8",
        NEXT_BUFFER => "NEXT_BUFFER",
        READONLY_BUFFER => "READONLY_BUFFER",
        _ => "",
    }
}

/// The input and where the reader is in it.
pub(super) struct Input<'a> {
    data: &'a [u8],
    pos: usize,
    /// Where the current opcode starts (errors name it).
    pub(super) op_at: usize,
    /// The current opcode.
    pub(super) op: u8,
}

impl<'a> Input<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Input {
            data,
            pos: 0,
            op_at: 0,
            op: 0,
        }
    }

    /// An error at the current opcode.
    pub(super) fn err(&self, what: impl fmt::Display) -> PickleError {
        match name(self.op) {
            "" => PickleError(format!("pickle: {what} at byte {}", self.op_at)),
            op => PickleError(format!("pickle: {what} at byte {} ({op})", self.op_at)),
        }
    }

    /// How many bytes are left.
    pub(super) fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The error for a read of `n` bytes with `left` left.
    pub(super) fn truncated(&self, n: u64, left: usize) -> PickleError {
        PickleError(format!(
            "pickle: truncated at byte {} ({} wants {n} bytes, {left} left)",
            self.op_at,
            name(self.op)
        ))
    }

    /// The next opcode, `None` at the end of the input.
    pub(super) fn next_op(&mut self) -> Option<u8> {
        let op = *self.data.get(self.pos)?;
        self.op_at = self.pos;
        self.op = op;
        self.pos += 1;
        Some(op)
    }

    /// `n` bytes (checked against what is left before anything is allocated).
    pub(super) fn take(&mut self, n: u64) -> Result<&'a [u8], PickleError> {
        let left = self.left();
        if n > left as u64 {
            return Err(self.truncated(n, left));
        }
        let s = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    pub(super) fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u16(&mut self) -> Result<u16, PickleError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(super) fn u32(&mut self) -> Result<u32, PickleError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn u64(&mut self) -> Result<u64, PickleError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A line ending with `\n` (without it), as the text opcodes of protocols 0–1 have.
    pub(super) fn line(&mut self) -> Result<&'a [u8], PickleError> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == b'\n') {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(PickleError(format!(
                "pickle: truncated at byte {} ({} wants a line ending in \\n, {} bytes left)",
                self.op_at,
                name(self.op),
                rest.len()
            ))),
        }
    }

    /// A line as UTF-8 text (module and class names).
    pub(super) fn text_line(&mut self) -> Result<String, PickleError> {
        let line = self.line()?;
        String::from_utf8(line.to_vec()).map_err(|_| self.err("a name that is not UTF-8"))
    }
}

use std::fmt;
