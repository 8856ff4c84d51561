//! The paged view of a channel value: a page of a long list viewed item by item (the rest is
//! never turned into JSON), long strings folded to their start, length and path, and a search
//! over every item, one item's view at a time.

use crate::error::{ApiError, ApiResult};
use crate::types::{count, ChannelPage, PageHit, DEFAULT_FOLD, MAX_HITS};
use flashback_codec::{units, view, view_decoded, Decoded, Value, ViewOptions};
use flashback_engine::search::{search_at, Needle};
use flashback_engine::watch::{KeyPath, Segment};
use flashback_storage::CheckpointTuple;
use serde_json::{json, Map, Value as Json};

/// Characters a folded string keeps.
const HEAD_CHARS: usize = 120;

/// What a page asks for.
pub(crate) struct Ask<'a> {
    pub offset: u32,
    pub limit: u32,
    /// Fold strings longer than this (`0`: none).
    pub fold: u32,
    pub needle: Option<&'a Needle>,
    pub opts: ViewOptions,
}

/// A page's content.
#[derive(Debug, Default)]
pub(crate) struct Body {
    pub total: Option<u32>,
    pub items: Vec<Json>,
    pub value: Option<Json>,
    pub folded: u32,
    pub hits: Vec<PageHit>,
    pub hit_count: u32,
}

/// Whether a checkpoint holds a list left undecoded under the decode budget (a paged detail
/// reads it again within the request's budget).
pub(crate) fn has_big_lists(tuple: &CheckpointTuple) -> bool {
    tuple
        .checkpoint
        .channel_values
        .iter()
        .any(|(_, v)| crate::rawpage::is_big_list(v))
}

/// A channel's view in a paged detail: a list longer than `page` as its first `page` items
/// (with what the whole holds), long strings in those items folded.
pub(crate) fn detail_view(
    channel: &str,
    v: &Decoded,
    page: u32,
    opts: ViewOptions,
) -> (Json, Option<ChannelPage>) {
    if let Decoded::Msgpack(Value::Array(items)) = v {
        if items.len() > page as usize {
            let (shown, info) = first_page(channel, items.len(), |i| view(&items[i], opts), page);
            return (shown, Some(info));
        }
    }
    // Any other value is sent whole, as without `page`: the app clips a long string itself and
    // unfolds it in place (the decode budget already stands in for an enormous one).
    (view_decoded(v, opts).unwrap_or(Json::Null), None)
}

/// The first `page` items of a channel's list of `len` items (`item(i)` viewing one), long
/// strings folded, with what the whole holds.
pub(crate) fn first_page(
    channel: &str,
    len: usize,
    item: impl Fn(usize) -> Json,
    page: u32,
) -> (Json, ChannelPage) {
    let at = KeyPath {
        channel: channel.to_owned(),
        steps: Vec::new(),
    };
    let mut folded = 0;
    let shown = (0..len.min(page as usize))
        .map(|i| fold(item(i), &child(&at, i), DEFAULT_FOLD, &mut folded))
        .collect();
    let info = ChannelPage {
        channel: channel.to_owned(),
        total: count(len),
        offset: 0,
        limit: page,
    };
    (Json::Array(shown), info)
}

/// The page `ask` names of the value at `path` inside the channel value `value`.
pub(crate) fn page(value: &Decoded, path: &KeyPath, ask: &Ask) -> ApiResult<Body> {
    if let Decoded::TooLarge { bytes, kind, .. } = value {
        return Err(ApiError::invalid(format!(
            "channel {:?} is too large to page: {} ({kind}) over the decode budget (setting max_value_mb)",
            path.channel,
            units::bytes(*bytes)
        )));
    }
    if let Decoded::Msgpack(Value::Array(items)) = value {
        return list_at(items.len(), |i| view(&items[i], ask.opts), path, ask);
    }
    let whole = view_decoded(value, ask.opts).unwrap_or(Json::Null);
    let found = path.resolve(&whole).ok_or_else(|| nothing_at(path))?;
    Ok(at_json(found.clone(), path, ask))
}

/// The page `ask` names of the value at `path` in a channel holding a list of `len` items,
/// `item(i)` viewing one (only the items a page or search needs are viewed).
pub(crate) fn list_at(
    len: usize,
    item: impl Fn(usize) -> Json,
    path: &KeyPath,
    ask: &Ask,
) -> ApiResult<Body> {
    match path.steps.first() {
        None => Ok(list_page(len, item, path, ask)),
        Some(Segment::Index(i)) => {
            let i = index(len, *i).ok_or_else(|| nothing_at(path))?;
            let rest = KeyPath {
                channel: path.channel.clone(),
                steps: path.steps[1..].to_vec(),
            };
            let item = item(i);
            let found = rest.resolve(&item).ok_or_else(|| nothing_at(path))?;
            Ok(at_json(found.clone(), path, ask))
        }
        Some(Segment::Key(_)) => Err(nothing_at(path)),
    }
}

fn nothing_at(path: &KeyPath) -> ApiError {
    ApiError::not_found(format!("nothing at {path} in this checkpoint"))
}

/// A list index (negative from the end) within `len`.
fn index(len: usize, i: i64) -> Option<usize> {
    let n = i64::try_from(len).ok()?;
    let i = if i < 0 { n + i } else { i };
    usize::try_from(i).ok().filter(|&i| i < len)
}

fn child(at: &KeyPath, i: usize) -> KeyPath {
    let mut p = at.clone();
    p.steps
        .push(Segment::Index(i64::try_from(i).unwrap_or(i64::MAX)));
    p
}

/// The page of a value already in JSON: a list is paged, anything else is the value.
fn at_json(found: Json, path: &KeyPath, ask: &Ask) -> Body {
    match found {
        Json::Array(items) => list_page(items.len(), |i| items[i].clone(), path, ask),
        other => {
            let mut folded = 0;
            let value = fold(other, path, ask.fold, &mut folded);
            Body {
                value: Some(value),
                folded,
                ..Body::default()
            }
        }
    }
}

/// A page of a list of `len` items, `item(i)` viewing one; with a needle, every item searched.
fn list_page(len: usize, item: impl Fn(usize) -> Json, path: &KeyPath, ask: &Ask) -> Body {
    let mut body = Body {
        total: Some(count(len)),
        ..Body::default()
    };
    let from = (ask.offset as usize).min(len);
    let to = from.saturating_add(ask.limit as usize).min(len);
    for i in from..to {
        let v = fold(item(i), &child(path, i), ask.fold, &mut body.folded);
        body.items.push(v);
    }
    if let Some(needle) = ask.needle {
        for i in 0..len {
            let at = child(path, i);
            let found = search_at(&at, &item(i), needle, 1);
            let Some(hit) = found.hits.into_iter().next() else {
                continue;
            };
            body.hit_count += 1;
            if body.hits.len() < MAX_HITS as usize {
                body.hits.push(PageHit {
                    index: count(i),
                    path: hit.path,
                    snippet: hit.snippet,
                });
            }
        }
    }
    body
}

/// `v` with every string longer than `max` characters (`0`: none) replaced by
/// `{"$folded": {"chars", "path"}, "$type": "builtins.str", "$value": its start}`.
pub(crate) fn fold(v: Json, at: &KeyPath, max: u32, folded: &mut u32) -> Json {
    if max == 0 {
        return v;
    }
    let mut at = at.clone();
    fold_in(v, &mut at, max as usize, folded, 0)
}

fn fold_in(v: Json, at: &mut KeyPath, max: usize, folded: &mut u32, depth: usize) -> Json {
    // The view is at most the codec's depth; deeper, nothing is folded (never recursion
    // without bound).
    if depth > 300 {
        return v;
    }
    match v {
        Json::String(s) if s.len() > max && s.chars().count() > max => {
            *folded += 1;
            let head: String = s.chars().take(HEAD_CHARS).collect();
            json!({
                "$folded": {"chars": s.chars().count(), "path": at.to_string()},
                "$type": "builtins.str",
                "$value": head,
            })
        }
        Json::Array(items) => Json::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, x)| {
                    at.steps
                        .push(Segment::Index(i64::try_from(i).unwrap_or(i64::MAX)));
                    let out = fold_in(x, at, max, folded, depth + 1);
                    at.steps.pop();
                    out
                })
                .collect(),
        ),
        Json::Object(o) => {
            let mut out = Map::with_capacity(o.len());
            for (k, x) in o {
                // A field named `$x` is written `$$x`; its path names it `$x`.
                let name = k.strip_prefix('$').filter(|r| r.starts_with('$'));
                at.steps
                    .push(Segment::Key(name.map_or_else(|| k.clone(), str::to_owned)));
                let x = fold_in(x, at, max, folded, depth + 1);
                at.steps.pop();
                out.insert(k, x);
            }
            Json::Object(out)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> KeyPath {
        KeyPath::parse(p).unwrap()
    }

    #[test]
    fn folds_long_strings_with_their_path() {
        let v = json!({"content": ["short", {"image_url": {"url": "x".repeat(50)}}]});
        let mut n = 0;
        let out = fold(v, &path("messages[3]"), 10, &mut n);
        assert_eq!(n, 1);
        let f = &out["content"][1]["image_url"]["url"];
        assert_eq!(f["$folded"]["chars"], 50);
        assert_eq!(f["$folded"]["path"], "messages[3].content[1].image_url.url");
        assert_eq!(out["content"][0], "short");
        let mut none = 0;
        let same = fold(json!("x".repeat(50)), &path("a"), 0, &mut none);
        assert_eq!((same, none), (json!("x".repeat(50)), 0));
    }

    #[test]
    fn a_page_past_the_end_is_empty_and_hits_cover_the_whole_list() {
        let items: Vec<Json> = (0..10)
            .map(|i| json!({"text": format!("item {i}")}))
            .collect();
        let needle = Needle::new("ITEM 7").unwrap();
        let ask = Ask {
            offset: 20,
            limit: 5,
            fold: 0,
            needle: Some(&needle),
            opts: ViewOptions::default(),
        };
        let body = at_json(Json::Array(items), &path("log"), &ask);
        assert_eq!(body.total, Some(10));
        assert!(body.items.is_empty());
        assert_eq!(body.hit_count, 1);
        assert_eq!(body.hits[0].index, 7);
        assert_eq!(body.hits[0].path, "log[7].text");
    }
}
