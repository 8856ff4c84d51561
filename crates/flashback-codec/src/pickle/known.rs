//! Classes whose pickled form is not the form jsonplus writes for them, shown as jsonplus
//! writes them: datetimes, UUIDs, `zoneinfo`, `deque`, `re.Pattern`, IPv4 addresses and
//! LangGraph's `Send` and `Command`.

use super::convert::{string, Walk};
use super::time::{iso_datetime, naive_iso, timedelta, uuid_hex};
use super::PyValue;
use crate::value::{ObjectForm, PyObject, Value};
use std::sync::Arc;

/// The fields of `langgraph.types.Command` (a slotted dataclass: its state is their values).
const COMMAND_FIELDS: [&str; 4] = ["graph", "update", "resume", "goto"];

/// A field of an object's state: `{'k': …}`, or `(dict or None, {slots})`.
fn slot<'a>(state: &'a PyValue, key: &str) -> Option<&'a Arc<PyValue>> {
    match state {
        PyValue::Tuple(parts) => parts.iter().find_map(|p| p.get(key)),
        dict => dict.get(key),
    }
}

impl Walk {
    /// The jsonplus form of an object of a known class (`m.n`), if this is one.
    pub(super) fn known(
        &mut self,
        v: &PyValue,
        m: &str,
        n: &str,
        args: &[Arc<PyValue>],
        depth: usize,
    ) -> Option<Value> {
        let obj = |form, payload| Some(PyObject::value(form, m, n, payload, None));
        let state = match v {
            PyValue::Object { state, .. } => state.as_deref(),
            _ => None,
        };
        match (m, n) {
            ("datetime", "datetime") => match iso_datetime(v) {
                Some(iso) => Some(PyObject::value(
                    ObjectForm::Method,
                    m,
                    n,
                    string(&iso),
                    Some(string("fromisoformat")),
                )),
                // A tzinfo whose offset is not in the pickle (a ZoneInfo): the local time and
                // the zone, by keyword.
                None => {
                    let local = naive_iso(v)?;
                    let tz = args.get(1).map_or(Value::Nil, |t| self.value(t, depth));
                    let fields = vec![(string("local"), string(&local)), (string("tzinfo"), tz)];
                    obj(ObjectForm::KwArgs, Value::Map(fields))
                }
            },
            ("datetime", "date") => {
                let iso = iso_datetime(v)?;
                let parts = iso
                    .split('-')
                    .filter_map(|p| p.parse().ok())
                    .map(Value::Int);
                obj(ObjectForm::PosArgs, Value::Array(parts.collect()))
            }
            ("datetime", "time") => {
                let iso = iso_datetime(v)?;
                Some(self.time(v, &iso, depth))
            }
            ("datetime", "timedelta") if timedelta(v).is_some() => {
                let mut parts: Vec<Value> = args.iter().map(|a| self.value(a, depth)).collect();
                parts.resize(3, Value::Int(0));
                obj(ObjectForm::PosArgs, Value::Array(parts))
            }
            ("datetime", "timezone") => {
                let payload = self.seq(args, depth);
                obj(ObjectForm::PosArgs, payload)
            }
            ("uuid", "UUID") => obj(ObjectForm::SingleArg, string(&uuid_hex(v)?)),
            ("zoneinfo", "ZoneInfo._unpickle") => {
                let key = args.first().map_or(Value::Nil, |a| self.value(a, depth));
                Some(PyObject::value(
                    ObjectForm::SingleArg,
                    m,
                    "ZoneInfo",
                    key,
                    None,
                ))
            }
            ("re", "_compile") => {
                let payload = self.seq(args, depth);
                Some(PyObject::value(
                    ObjectForm::PosArgs,
                    m,
                    "compile",
                    payload,
                    None,
                ))
            }
            ("ipaddress", "IPv4Address") => match args.first().and_then(|a| a.as_int()) {
                Some(ip) => {
                    let ip = std::net::Ipv4Addr::from(u32::try_from(ip).ok()?);
                    obj(ObjectForm::SingleArg, string(&ip.to_string()))
                }
                None => None,
            },
            ("collections", "deque") => {
                let PyValue::Object { list_items, .. } = v else {
                    return None;
                };
                let mut items: Vec<Arc<PyValue>> = args
                    .first()
                    .and_then(|a| a.as_seq())
                    .unwrap_or_default()
                    .to_vec();
                items.extend(list_items.iter().cloned());
                let payload = self.seq(&items, depth);
                obj(ObjectForm::SingleArg, payload)
            }
            ("langgraph.types", "Send") => {
                let state = state?;
                let field = |k| slot(state, k).cloned();
                let mut parts = vec![field("node")?, field("arg")?];
                if let Some(t) = field("timeout").filter(|t| !t.is_none()) {
                    parts.push(t.clone());
                }
                let payload = self.seq(&parts, depth);
                obj(ObjectForm::PosArgs, payload)
            }
            ("langgraph.types", "Command") => {
                let values = state?.as_seq()?;
                if values.len() != COMMAND_FIELDS.len() {
                    return None;
                }
                let fields = COMMAND_FIELDS
                    .iter()
                    .zip(values)
                    .map(|(k, v)| (string(k), self.value(v, depth)))
                    .collect();
                obj(ObjectForm::KwArgs, Value::Map(fields))
            }
            _ => None,
        }
    }

    /// A `datetime.time` as jsonplus writes it: its fields by keyword.
    fn time(&mut self, v: &PyValue, iso: &str, depth: usize) -> Value {
        let PyValue::Object {
            module, name, args, ..
        } = v
        else {
            return Value::Nil;
        };
        let clock: Vec<&str> = iso[..8].split(':').collect();
        let int = |s: &str| Value::Int(s.parse().unwrap_or(0));
        let micro = iso
            .get(9..15)
            .filter(|_| iso.as_bytes().get(8) == Some(&b'.'))
            .map_or(Value::Int(0), int);
        let fold = args
            .first()
            .and_then(|a| a.as_bytes())
            .is_some_and(|b| b.first().is_some_and(|h| h & 0x80 != 0));
        let tz = args.get(1).map_or(Value::Nil, |t| self.value(t, depth));
        let fields = vec![
            (string("hour"), int(clock[0])),
            (string("minute"), int(clock[1])),
            (string("second"), int(clock[2])),
            (string("microsecond"), micro),
            (string("tzinfo"), tz),
            (string("fold"), Value::Int(i64::from(fold))),
        ];
        PyObject::value(ObjectForm::KwArgs, module, name, Value::Map(fields), None)
    }
}
