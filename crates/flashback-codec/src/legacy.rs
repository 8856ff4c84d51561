//! A static peek into pickles (the `json` serde tag is [`crate::jsvalue`]).

/// The first class a pickle refers to (`module.name`), read from its opcodes without running
/// anything. Recognises `GLOBAL` (protocols 0–3) and `STACK_GLOBAL` after two short strings
/// (protocol 4+), skipping `PROTO`, `FRAME` and `MEMOIZE`. `None` when not found quickly.
pub fn pickle_class(data: &[u8]) -> Option<String> {
    let mut i = 0;
    let mut strings: Vec<String> = Vec::new();
    for _ in 0..64 {
        let op = *data.get(i)?;
        i += 1;
        match op {
            0x80 => i += 1, // PROTO n
            0x95 => i += 8, // FRAME len
            0x94 => {}      // MEMOIZE
            0x8c => {
                // SHORT_BINUNICODE len bytes
                let n = *data.get(i)? as usize;
                let s = data.get(i + 1..i + 1 + n)?;
                strings.push(String::from_utf8(s.to_vec()).ok()?);
                i += 1 + n;
            }
            0x93 => {
                // STACK_GLOBAL
                let name = strings.pop()?;
                let module = strings.pop()?;
                return Some(format!("{module}.{name}"));
            }
            b'c' => {
                // GLOBAL "module\nname\n"
                let rest = data.get(i..)?;
                let mut parts = rest.splitn(3, |&b| b == b'\n');
                let module = std::str::from_utf8(parts.next()?).ok()?;
                let name = std::str::from_utf8(parts.next()?).ok()?;
                parts.next()?;
                return Some(format!("{module}.{name}"));
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn pickle_class_is_read_statically() {
        // protocol 4: PROTO 4, FRAME, SHORT_BINUNICODE "collections", MEMOIZE,
        // SHORT_BINUNICODE "OrderedDict", MEMOIZE, STACK_GLOBAL …
        let mut p = vec![0x80, 4, 0x95, 30, 0, 0, 0, 0, 0, 0, 0, 0x8c, 11];
        p.extend_from_slice(b"collections");
        p.extend_from_slice(&[0x94, 0x8c, 11]);
        p.extend_from_slice(b"OrderedDict");
        p.extend_from_slice(&[0x94, 0x93, 0x94, b')', b'R', b'.']);
        assert_eq!(pickle_class(&p).as_deref(), Some("collections.OrderedDict"));
        // protocol 2 GLOBAL
        assert_eq!(
            pickle_class(b"\x80\x02cdecimal\nDecimal\nq\x00").as_deref(),
            Some("decimal.Decimal")
        );
        assert_eq!(pickle_class(b"\x80\x04K\x01."), None);
        assert_eq!(pickle_class(b""), None);
    }
}
