//! One tool call: the arguments checked against the tool's schema, the request built (the
//! server's `db` handle added), the command called through the table, and the answer bounded —
//! a page of its main list, values folded only when over the budget — with the CLI's human
//! text first. Every failure is the CLI's one line, as a tool error.

use super::bound::{self, CHARS_PER_TOKEN, DEFAULT_TOKENS, MAX_TOKENS};
use super::schema;
use super::table::{self, Answer};
use super::tools::{Access, Shape, ToolSpec};
use super::{dry, jobs, render, Door};
use flashback_api::{ApiError, ErrorCode, KeyPath, ThreadActivityRequest, ThreadSummary};
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;

/// What a tool call returns, before it becomes the protocol's result.
#[derive(Debug)]
pub struct Reply {
    /// The short text a model reads first.
    pub text: String,
    /// The structured content: `{"result": …}` plus `page`, `folded`, `more` when they apply.
    pub structured: Json,
}

/// The arguments this door adds to every tool (not part of the request).
struct Extras {
    cursor: usize,
    /// The page size, when the request has no `limit` of its own.
    limit: Option<usize>,
    tokens: usize,
    json: bool,
    path: Option<KeyPath>,
    dry_run: bool,
}

fn usize_arg(args: &Map<String, Json>, name: &str) -> Result<Option<usize>, ApiError> {
    match args.get(name) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| ApiError::invalid(format!("{name}: expected a whole number ≥ 0"))),
        Some(Json::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| ApiError::invalid(format!("{name}: expected a number, got {s:?}"))),
        Some(other) => Err(ApiError::invalid(format!(
            "{name}: expected a number, got {other}"
        ))),
    }
}

/// Take this door's own arguments out of `args`, leaving the request's.
fn extras(
    spec: &ToolSpec,
    args: &mut Map<String, Json>,
    own_limit: bool,
) -> Result<Extras, ApiError> {
    let cursor = usize_arg(args, "cursor")?.unwrap_or(0);
    args.remove("cursor");
    let limit = if own_limit {
        None
    } else {
        let l = usize_arg(args, "limit")?;
        args.remove("limit");
        l
    };
    if limit == Some(0) {
        return Err(ApiError::invalid("limit: expected at least 1"));
    }
    let tokens = usize_arg(args, "max_tokens")?.unwrap_or(DEFAULT_TOKENS);
    args.remove("max_tokens");
    if !(500..=MAX_TOKENS).contains(&tokens) {
        return Err(ApiError::invalid(format!(
            "max_tokens: expected 500 to {MAX_TOKENS}, got {tokens}"
        )));
    }
    let json = match args.remove("format") {
        None | Some(Json::Null) => false,
        Some(Json::String(f)) if f == "text" => false,
        Some(Json::String(f)) if f == "json" => true,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "format: expected \"text\" or \"json\", got {other}"
            )))
        }
    };
    let path = if spec.name == "state" {
        match args.remove("path") {
            None | Some(Json::Null) => None,
            Some(Json::String(p)) => {
                Some(KeyPath::parse(&p).map_err(|e| ApiError::invalid(e.to_string()))?)
            }
            Some(other) => {
                return Err(ApiError::invalid(format!(
                    "path: expected a string such as \"messages[-1]\", got {other}"
                )))
            }
        }
    } else {
        None
    };
    let dry_run = match spec.access {
        Access::Read => true,
        Access::Write | Access::Run => match args.get("dry_run") {
            None | Some(Json::Null) => true,
            Some(Json::Bool(b)) => *b,
            Some(other) => {
                return Err(ApiError::invalid(format!(
                    "dry_run: expected true or false, got {other}"
                )))
            }
        },
    };
    Ok(Extras {
        cursor,
        limit,
        tokens,
        json,
        path,
        dry_run,
    })
}

/// Refuse arguments the tool does not take (a misspelt one would otherwise be ignored).
fn check_names(spec: &ToolSpec, args: &Map<String, Json>, schema: &Json) -> Result<(), ApiError> {
    let known = schema.get("properties").and_then(Json::as_object);
    for name in args.keys() {
        if !known.is_some_and(|k| k.contains_key(name)) {
            let names: Vec<&str> = known
                .map(|k| k.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(ApiError::invalid(format!(
                "{}: unknown argument {name:?} (it takes {})",
                spec.name,
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// Call `spec` with the model's arguments.
pub async fn call(
    door: &Door,
    spec: &ToolSpec,
    args: Map<String, Json>,
) -> Result<Reply, ApiError> {
    let tool_schema = schema::input_schema(spec).unwrap_or_else(|| json!({}));
    check_names(spec, &args, &tool_schema)?;
    let own_limit = schema::request_has(spec, "limit");
    let mut args = args;
    let ex = extras(spec, &mut args, own_limit)?;
    if spec.access != Access::Read {
        if !schema::request_has(spec, "dry_run") {
            args.remove("dry_run");
        } else {
            args.insert("dry_run".into(), Json::Bool(ex.dry_run));
        }
    }
    resolve_ids(door, &mut args).await?;
    args.insert("db".into(), Json::String(door.db.clone()));
    let req = Json::Object(args);
    if let (Some(path), "state") = (&ex.path, spec.name) {
        let answer = super::statepath::state_at(door, &req, path, ex.cursor, ex.limit).await?;
        return Ok(shape(spec, answer, &ex));
    }
    let answer =
        if ex.dry_run && spec.access != Access::Read && !schema::request_has(spec, "dry_run") {
            dry::preview(door, spec, req).await?
        } else {
            match spec.shape {
                Shape::Plain => table::call(&door.api, spec.command, req).await?,
                Shape::Job => jobs::run(door, spec, req).await?,
            }
        };
    let answer = if spec.name == "threads" {
        with_tokens(door, answer).await?
    } else {
        answer
    };
    Ok(shape(spec, answer, &ex))
}

/// The checkpoint ids of a request as people (and models reading the CLI's tables) give them:
/// whole, in the short form the tables print (`7f9a-6f8b-3e7c`), or a unique start or end —
/// resolved against the thread's checkpoints as every CLI command does.
async fn resolve_ids(door: &Door, args: &mut Map<String, Json>) -> Result<(), ApiError> {
    let Some(thread) = args
        .get("thread_id")
        .and_then(Json::as_str)
        .map(str::to_owned)
    else {
        return Ok(());
    };
    let ns = args
        .get("checkpoint_ns")
        .and_then(Json::as_str)
        .map(str::to_owned);
    let resolve = |id: String, ns: Option<String>| {
        let thread = thread.clone();
        async move {
            let ns = ns.as_deref();
            crate::doors::ids::resolve(&door.api, &door.db, &thread, ns, &id).await
        }
    };
    for key in ["checkpoint_id", "tip", "into", "from", "along", "before"] {
        if let Some(Json::String(id)) = args.get(key) {
            let full = resolve(id.clone(), ns.clone()).await?;
            args.insert(key.into(), Json::String(full));
        }
    }
    for side in ["a", "b"] {
        if let Some(Json::Object(o)) = args.get_mut(side) {
            let side_ns = o
                .get("checkpoint_ns")
                .and_then(Json::as_str)
                .map(str::to_owned);
            if let Some(Json::String(id)) = o.get("checkpoint_id") {
                let full = resolve(id.clone(), side_ns.or(Some(String::new()))).await?;
                o.insert("checkpoint_id".into(), Json::String(full));
            }
        }
    }
    Ok(())
}

/// The most threads whose token usage `threads` looks up (as `flashback threads`).
const TOKENS_MAX: usize = 2000;

/// `threads` as `flashback threads --json` gives it: each thread's token usage filled in from
/// `thread_activity` (for lists of a bounded size).
async fn with_tokens(door: &Door, mut answer: Answer) -> Result<Answer, ApiError> {
    let Some(threads) = answer.typed.downcast_mut::<Vec<ThreadSummary>>() else {
        return Ok(answer);
    };
    if threads.is_empty() || threads.len() > TOKENS_MAX {
        return Ok(answer);
    }
    let ids: Vec<String> = threads.iter().map(|t| t.thread_id.clone()).collect();
    let mut tokens = HashMap::new();
    for chunk in ids.chunks(500) {
        let req = ThreadActivityRequest {
            db: door.db.clone(),
            thread_ids: chunk.to_vec(),
        };
        for a in door.api.thread_activity(req).await? {
            tokens.insert(a.thread_id, a.tokens);
        }
    }
    for t in threads.iter_mut() {
        t.tokens = tokens.remove(&t.thread_id).flatten();
    }
    answer.json = serde_json::to_value(&*threads)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot serialise: {e}")))?;
    Ok(answer)
}

/// Page, fold and render an answer.
fn shape(spec: &ToolSpec, answer: Answer, ex: &Extras) -> Reply {
    let total = ex.tokens * CHARS_PER_TOKEN;
    // The text and the structured content share the budget (a client may show both).
    let (text_budget, json_budget) = if ex.json {
        (total / 2, total / 2)
    } else {
        (total / 4, total * 3 / 4)
    };
    let mut notes = Vec::new();
    let mut out = Map::new();
    let mut result = answer.json;
    let mut range = None;
    if let Some(member) = spec.list.filter(|_| ex.path.is_none()) {
        let list = if member.is_empty() {
            result.as_array().cloned()
        } else {
            result.get(member).and_then(Json::as_array).cloned()
        };
        if let Some(items) = list {
            let (page, next) = bound::page(&items, ex.cursor, ex.limit, json_budget);
            let from = ex.cursor.min(items.len());
            range = Some(from..from + page.len());
            let mut p = json!({"total": items.len(), "from": from, "count": page.len()});
            if let Some(n) = next {
                p["next_cursor"] = json!(n.to_string());
                notes.push(format!(
                    "showing {} of {} ({}..{}): call again with cursor=\"{n}\" for the next page",
                    page.len(),
                    items.len(),
                    from,
                    from + page.len()
                ));
            } else if from > 0 {
                notes.push(format!(
                    "showing {}..{} of {}",
                    from,
                    from + page.len(),
                    items.len()
                ));
            }
            out.insert("page".into(), p);
            if member.is_empty() {
                result = Json::Array(page);
            } else if let Some(o) = result.as_object_mut() {
                o.insert(member.into(), Json::Array(page));
            }
        }
    }
    let fitted = bound::fit(result, json_budget);
    if fitted.folded > 0 {
        out.insert("folded".into(), json!(fitted.folded));
        let how = if spec.name == "state" {
            "ask for one value with path=\"channel[index].key\", or a larger max_tokens"
        } else {
            "ask with a narrower request (limit, cursor, a thread or a path), or a larger max_tokens"
        };
        notes.push(format!(
            "{} long values or lists were folded to fit about {} tokens: {how}",
            fitted.folded, ex.tokens
        ));
    }
    out.insert("result".into(), fitted.value);
    if !notes.is_empty() {
        out.insert("more".into(), json!(notes.join("; ")));
    }
    let structured = Json::Object(out);
    let human = if ex.json || ex.path.is_some() {
        None
    } else {
        render::human_text(spec.name, answer.typed.as_ref(), range).or_else(|| answer.text.clone())
    };
    let body = match human {
        Some(t) => t,
        None => {
            // The JSON itself, folded to the text's share rather than cut mid-value.
            let fitted = bound::fit(structured["result"].clone(), text_budget.saturating_sub(1));
            serde_json::to_string(&fitted.value).unwrap_or_default() + "\n"
        }
    };
    let (mut text, cut) = bound::cut_text(&body, text_budget);
    if cut && !ex.json {
        text.push_str(
            "(the whole answer is in the structured content; format=\"json\" prints it here)\n",
        );
    }
    for n in &notes {
        text.push_str(&format!("note: {n}\n"));
    }
    Reply { text, structured }
}
