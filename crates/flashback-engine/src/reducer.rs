//! The reducers LangGraph ships, applied to decoded values: what the rebuild check
//! ([`crate::merge::rebuild_report`]), DeltaChannel rebuilds ([`crate::delta`]) and repairs
//! ([`crate::repair`]) replay writes with.

use flashback_codec::Value;
use serde::{Deserialize, Serialize};

/// A reducer LangGraph ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Reducer {
    /// `LastValue`: the last write wins.
    LastValue,
    /// `operator.add` on lists.
    ListAppend,
    /// `add_messages`: append, replace by id, `RemoveMessage` deletes.
    AddMessages,
    /// `{**old, **new}`.
    DictMerge,
}

impl Reducer {
    /// Every reducer, with the names `--reducer` takes.
    pub const NAMES: [(&'static str, Reducer); 4] = [
        ("append", Reducer::ListAppend),
        ("add_messages", Reducer::AddMessages),
        ("merge", Reducer::DictMerge),
        ("last", Reducer::LastValue),
    ];

    /// The short name (`append`, `add_messages`, `merge`, `last`).
    pub fn short_name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, r)| *r == self)
            .map(|(n, _)| *n)
            .unwrap_or("last")
    }
}

impl std::str::FromStr for Reducer {
    type Err = String;

    /// A short name, or the serialized one (`list_append`, `dict_merge`, `last_value`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, r)| *r)
            .or(match s {
                "list_append" => Some(Reducer::ListAppend),
                "dict_merge" => Some(Reducer::DictMerge),
                "last_value" => Some(Reducer::LastValue),
                _ => None,
            })
            .ok_or_else(|| {
                format!("unknown reducer {s:?}: use append, add_messages, merge or last")
            })
    }
}

/// State keys LangChain's agents (`create_agent` middleware, deepagents) declare, by name: the
/// reducer each has. Anything else is read from its values.
const KNOWN: [(&str, Reducer); 6] = [
    ("messages", Reducer::AddMessages),
    ("todos", Reducer::LastValue),
    ("structured_response", Reducer::LastValue),
    ("files", Reducer::DictMerge),
    ("thread_model_call_count", Reducer::LastValue),
    ("thread_tool_call_count", Reducer::LastValue),
];

/// The reducer of a state key LangChain's agents declare, by its name.
pub(crate) fn known_reducer(channel: &str) -> Option<Reducer> {
    KNOWN.iter().find(|(c, _)| *c == channel).map(|(_, r)| *r)
}

/// In tie-break order: `add_messages` (which only accepts messages) before plain list append,
/// so a message list that never exercised replacement is still reported as `add_messages`.
pub(crate) const REDUCERS: [Reducer; 4] = [
    Reducer::LastValue,
    Reducer::AddMessages,
    Reducer::ListAppend,
    Reducer::DictMerge,
];

pub(crate) fn apply(reducer: Reducer, current: Option<&Value>, writes: &[&Value]) -> Option<Value> {
    let mut cur = current.cloned();
    for w in writes {
        cur = Some(match reducer {
            Reducer::LastValue => (*w).clone(),
            Reducer::ListAppend => {
                let (Some(Value::Array(mut xs)), Value::Array(ys)) =
                    (cur.clone().or(Some(Value::Array(vec![]))), w)
                else {
                    return None;
                };
                xs.extend(ys.iter().cloned());
                Value::Array(xs)
            }
            Reducer::AddMessages => {
                let mut xs = match cur.clone() {
                    Some(Value::Array(xs)) => xs,
                    None => Vec::new(),
                    _ => return None,
                };
                let new: Vec<Value> = match w {
                    Value::Array(ys) => ys.clone(),
                    other => vec![(*other).clone()],
                };
                // add_messages takes messages (objects), not arbitrary items.
                if !new.iter().all(|m| matches!(m, Value::Object(_))) {
                    return None;
                }
                for m in new {
                    let is_remove = matches!(&m, Value::Object(o) if o.name == "RemoveMessage");
                    let key = item_key(&m);
                    match xs.iter().position(|x| item_key(x) == key) {
                        Some(i) if is_remove => {
                            xs.remove(i);
                        }
                        Some(i) => xs[i] = m,
                        None if is_remove => return None,
                        None => xs.push(m),
                    }
                }
                Value::Array(xs)
            }
            Reducer::DictMerge => {
                let (Some(Value::Map(mut xs)), Value::Map(ys)) =
                    (cur.clone().or(Some(Value::Map(vec![]))), w)
                else {
                    return None;
                };
                for (k, v) in ys {
                    match xs.iter_mut().find(|(x, _)| x == k) {
                        Some((_, old)) => *old = v.clone(),
                        None => xs.push((k.clone(), v.clone())),
                    }
                }
                Value::Map(xs)
            }
        });
    }
    cur
}

/// Identity of a list item: a message's `id` when it has one, else the whole value.
pub(crate) fn item_key(v: &Value) -> String {
    if let Value::Object(o) = v {
        if let Some(Value::Str(id)) = o.payload.get("id") {
            return format!("id:{id}");
        }
    }
    format!("{v:?}")
}
