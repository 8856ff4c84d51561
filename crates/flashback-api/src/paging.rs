//! Reading one checkpoint for its detail or for a page of it: the tuple (within the session's
//! decode budget, or a raised one for a paged read), its DeltaChannels rebuilt, the view
//! (live or step record) — and `state_page`, a page of the list at a path, with a search over
//! the whole list.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::summaries::{checkpoint_not_found, ensure_namespace};
use crate::types::{
    CheckpointRequest, CheckpointSealing, StatePage, StatePageRequest, DEFAULT_FOLD, DEFAULT_PAGE,
    MAX_PAGE,
};
use crate::{Api, Session};
use flashback_codec::{DecodeBudget, ViewOptions};
use flashback_engine::delta::Rebuilt;
use flashback_engine::watch::KeyPath;
use flashback_storage::{CheckpointStore, CheckpointTuple};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A checkpoint read for showing.
pub(crate) struct Loaded {
    pub tuple: CheckpointTuple,
    pub view: crate::detail::View,
    pub namespaces: Vec<String>,
    pub sealing: Option<CheckpointSealing>,
    pub rebuilt: BTreeMap<String, Rebuilt>,
}

impl Api {
    /// The budget of a paged read: a value may take the whole request's allowance (only a page
    /// of it is viewed and sent), so a list over the per-value limit still pages.
    pub(crate) fn page_budget(&self) -> ApiResult<DecodeBudget> {
        let b = self.decode_budget()?;
        Ok(DecodeBudget {
            max_value_bytes: b.max_request_bytes,
            max_request_bytes: b.max_request_bytes,
        })
    }

    /// Read the checkpoint `req` names as `checkpoint_detail` shows it: with the session's
    /// store, or (`full`, or a `budget` given) a read-only store of its own with that budget.
    pub(crate) async fn read_checkpoint(
        &self,
        s: &Session,
        req: &CheckpointRequest,
        budget: Option<DecodeBudget>,
    ) -> ApiResult<Loaded> {
        let store = s.store.as_ref();
        let ns = &req.checkpoint_ns;
        let delta = delta_options(&self.reducers_for(&s.info.location, &req.reducers)?)?;
        let budget = if req.full {
            Some(DecodeBudget::UNLIMITED)
        } else {
            budget
        };
        let tuple = match budget {
            // A paged read: the session's store for it, opened once.
            Some(budget) if budget != DecodeBudget::UNLIMITED => {
                let key = s.key.clone();
                let paged = s
                    .paged
                    .get_or_try_init(|| async {
                        let read = flashback_storage::Read { budget, key };
                        flashback_storage::open(&s.connect, read)
                            .await
                            .map(Arc::<dyn CheckpointStore>::from)
                    })
                    .await?;
                paged
                    .get_tuple(&req.thread_id, ns, req.checkpoint_id.as_deref())
                    .await?
            }
            // Asked for on purpose: this one read decodes everything, on its own connection.
            Some(budget) => {
                let key = s.key.clone();
                flashback_storage::open(&s.connect, flashback_storage::Read { budget, key })
                    .await?
                    .get_tuple(&req.thread_id, ns, req.checkpoint_id.as_deref())
                    .await?
            }
            None => {
                store
                    .get_tuple(&req.thread_id, ns, req.checkpoint_id.as_deref())
                    .await?
            }
        };
        let Some(mut tuple) = tuple else {
            return Err(match &req.checkpoint_id {
                Some(id) => checkpoint_not_found(&req.thread_id, ns, id),
                None => match ensure_namespace(store, &req.thread_id, ns).await {
                    Err(e) => e,
                    // Gone since the read.
                    Ok(()) => ApiError::not_found(format!(
                        "thread {:?} has no checkpoints in namespace {ns:?}",
                        req.thread_id
                    )),
                },
            });
        };
        let cached = s
            .namespaces
            .lock()
            .ok()
            .and_then(|n| n.get(&req.thread_id).cloned());
        let namespaces = match cached {
            Some(n) => n,
            None => thread_namespaces(store, &req.thread_id).await?,
        };
        let sealing = crate::sealed::checkpoint_sealing(s, &tuple);
        let locked = sealing.as_ref().is_some_and(|x| x.locked);
        if let (Some(x), false) = (sealing.as_ref().filter(|x| x.locked), req.allow_locked) {
            let id = &tuple.header.checkpoint_id;
            return Err(crate::sealed::locked_checkpoint_error(
                &s.info, id, &x.ciphers,
            ));
        }
        let rebuilt = if req.raw || locked {
            Default::default()
        } else {
            flashback_engine::delta::materialize(store, &mut tuple, &delta).await?
        };
        let view = crate::liveview::view_for(store, req, &tuple, store.schema().dialect).await?;
        Ok(Loaded {
            tuple,
            view,
            namespaces,
            sealing,
            rebuilt,
        })
    }

    /// A page of the list at a path inside one checkpoint's state (or the value at a path that
    /// is not a list), long strings folded; with a query, the items of the whole list that hold
    /// it. The list is decoded within the request's budget and only the page is viewed.
    pub async fn state_page(&self, req: StatePageRequest) -> ApiResult<StatePage> {
        let s = self.session(&req.db)?;
        let path = KeyPath::parse(&req.path).map_err(|e| ApiError::invalid(e.to_string()))?;
        let limit = req.limit.unwrap_or(DEFAULT_PAGE);
        if limit == 0 || limit > MAX_PAGE {
            return Err(ApiError::invalid(format!(
                "limit: expected 1 to {MAX_PAGE}, got {limit}"
            )));
        }
        let needle = match req.query.as_deref() {
            None => None,
            Some(q) => Some(
                flashback_engine::search::Needle::new(q)
                    .map_err(|e| ApiError::invalid(e.to_string()))?,
            ),
        };
        let creq = CheckpointRequest {
            db: req.db.clone(),
            thread_id: req.thread_id.clone(),
            checkpoint_ns: req.checkpoint_ns.clone(),
            checkpoint_id: req.checkpoint_id.clone(),
            reveal_secrets: req.reveal_secrets,
            full: false,
            raw: req.raw,
            reducers: req.reducers.clone(),
            allow_locked: false,
            live: req.live,
            page: None,
        };
        let opts = ViewOptions {
            reveal_secrets: req.reveal_secrets,
        };
        let ask = crate::pagedview::Ask {
            offset: req.offset,
            limit,
            fold: req.fold.unwrap_or(DEFAULT_FOLD),
            needle: needle.as_ref(),
            opts,
        };
        // Within the session's budget first: a list over it is paged from its stored bytes;
        // failing that, the checkpoint is read again within the request's budget.
        let read = self.read_checkpoint(&s, &creq, None).await?;
        let (tuple, body) = match self.page_of(&s, read, &path, &ask, false).await? {
            (tuple, Some(body)) => (tuple, body),
            (_, None) => {
                let budget = Some(self.page_budget()?);
                let read = self.read_checkpoint(&s, &creq, budget).await?;
                let (tuple, body) = self.page_of(&s, read, &path, &ask, true).await?;
                let body = body.ok_or_else(|| {
                    ApiError::invalid(format!("channel {:?} cannot be paged", path.channel))
                })?;
                (tuple, body)
            }
        };
        let h = &tuple.header;
        Ok(StatePage {
            thread_id: h.thread_id.clone(),
            checkpoint_ns: h.checkpoint_ns.clone(),
            checkpoint_id: h.checkpoint_id.clone(),
            path: path.to_string(),
            total: body.total,
            offset: req.offset,
            items: body.items,
            value: body.value,
            folded: body.folded,
            hits: body.hits,
            hit_count: body.hit_count,
        })
    }
}

impl Api {
    /// The page `ask` names at `path` in a checkpoint read (its view applied); `None` when
    /// the channel is a list over the read's budget that cannot be paged from its stored bytes
    /// (unless `last`: then that is the error).
    async fn page_of(
        &self,
        s: &Session,
        read: Loaded,
        path: &KeyPath,
        ask: &crate::pagedview::Ask<'_>,
        last: bool,
    ) -> ApiResult<(CheckpointTuple, Option<crate::pagedview::Body>)> {
        let Loaded {
            mut tuple,
            view,
            namespaces,
            rebuilt,
            ..
        } = read;
        let store = s.store.as_ref();
        let dialect = store.schema().dialect;
        let (_, applied) = crate::detail::apply_view(&mut tuple, &view, namespaces, dialect);
        if let Some(problem) = &tuple.header.problem {
            return Err(ApiError::new(
                ErrorCode::Corrupt,
                format!("this checkpoint cannot be read: {problem}"),
            ));
        }
        let values = &tuple.checkpoint.channel_values;
        let Some((_, value)) = values.iter().find(|(c, _)| *c == path.channel) else {
            let names: Vec<&str> = values.iter().map(|(c, _)| c.as_str()).collect();
            return Err(ApiError::not_found(format!(
                "no channel {:?} in this checkpoint (channels: {})",
                path.channel,
                names.join(", ")
            )));
        };
        // Decoded: paged as it is. Over the read's budget: a list from its stored bytes; else
        // (or failing that) read again within the request's budget, whose last try says why not.
        if !matches!(&**value, flashback_codec::Decoded::TooLarge { .. }) {
            let body = crate::pagedview::page(value, path, ask)?;
            return Ok((tuple, Some(body)));
        }
        let changed = rebuilt.contains_key(&path.channel)
            || applied
                .applied
                .iter()
                .any(|a| a.channels.contains(&path.channel));
        let at = flashback_storage::ValueAt::Channel(&path.channel);
        let max = self.page_budget()?.max_request_bytes;
        let list = match changed || !crate::rawpage::is_big_list(value) {
            true => None,
            false => crate::rawpage::stored_list(store, &tuple, at, value, max).await?,
        };
        let body = match list.as_deref().and_then(crate::rawpage::items) {
            Some(items) => Some(crate::pagedview::list_at(
                items.len(),
                |i| crate::rawpage::item_view(&items, i, ask.opts),
                path,
                ask,
            )?),
            None if last => Some(crate::pagedview::page(value, path, ask)?),
            None => None,
        };
        Ok((tuple, body))
    }
}

/// Reducer choices (`{channel: name}`) as rebuild options; an unknown name is a bad request.
pub(crate) fn delta_options(
    reducers: &std::collections::BTreeMap<String, String>,
) -> ApiResult<flashback_engine::delta::DeltaOptions> {
    let mut out = flashback_engine::delta::DeltaOptions::default();
    for (channel, name) in reducers {
        let r = name
            .parse()
            .map_err(|e: String| ApiError::invalid(format!("channel {channel:?}: {e}")))?;
        out.reducers.insert(channel.clone(), r);
    }
    Ok(out)
}

/// The namespaces of a thread, sorted (`""` first).
pub(crate) async fn thread_namespaces(
    store: &dyn CheckpointStore,
    thread_id: &str,
) -> ApiResult<Vec<String>> {
    Ok(store.thread_namespaces(thread_id).await?)
}
