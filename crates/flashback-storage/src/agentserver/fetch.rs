//! What is read from an Agent Server, and when it is read again: the thread list
//! (`POST /threads/search`, paged by offset as the API pages), each thread's history
//! (`POST /threads/{id}/history`, paged with `before`, root and every subgraph namespace its
//! tasks name) and runs (`GET /threads/{id}/runs`). A thread is read again when the server's
//! thread says it changed (`updated_at`, `state_updated_at`, `status`) or while a run is
//! going on (`busy`), never more than once a second; a listing is read again after a second.

use super::client::Client;
use super::states;
use crate::StoreError;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long what was read is used without asking again.
pub(crate) const FRESH: Duration = Duration::from_secs(1);
/// The API's largest page (`limit` of `/threads/search` and `/history`).
const PAGE: usize = 1000;
/// At most this many pages of one thread's history (a million checkpoints).
const MAX_PAGES: usize = 1000;
/// The whole thread list stops at this many threads, the most recently updated (each
/// listed thread's history is read: a deployment's hundred thousand threads would take
/// hours); a note says so.
pub(crate) const MAX_LISTED: usize = 2 * PAGE;
/// The histories kept stop at about this many bytes of the server's JSON (the least
/// recently read go first).
const KEEP_BYTES: usize = 256 << 20;
/// Threads read at once.
const PARALLEL: usize = 4;
/// Threads whose histories are kept (the least recently read go first).
const KEEP_THREADS: usize = 512;

/// Percent-encode one path segment.
pub(crate) fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A thread's checkpoints as the API shows them.
#[derive(Debug, Default)]
pub(crate) struct History {
    /// Every state of every namespace, newest first by checkpoint id.
    pub states: Vec<Json>,
    /// The namespaces with checkpoints, `""` first, then sorted.
    pub namespaces: Vec<String>,
    /// The thread's runs as the server lists them, oldest first.
    pub runs: Vec<Json>,
    /// The bytes of JSON the server sent for it.
    pub bytes: usize,
    /// What could not be read of it (an answer that is not the API's JSON): one thread's bad
    /// answer damages only that thread.
    pub problem: Option<String>,
}

/// An answer that is wrong for this thread alone (not the server's JSON, refused), as
/// opposed to a server that cannot be reached, a key refused, or a time limit.
fn only_this_thread(e: &StoreError) -> bool {
    matches!(e, StoreError::Query(_) | StoreError::InvalidInput(_))
}

impl History {
    /// The latest root checkpoint id.
    pub fn latest_root(&self) -> Option<&str> {
        self.states
            .iter()
            .filter(|s| states::checkpoint_ns(s).is_empty())
            .filter_map(|s| states::checkpoint_id(s))
            .max()
    }
}

/// The thread's fields that change when its state does.
fn stamp(thread: &Json) -> String {
    let f = |k: &str| thread.get(k).and_then(Json::as_str).unwrap_or("");
    format!(
        "{}|{}|{}",
        f("updated_at"),
        f("state_updated_at"),
        f("status")
    )
}

fn busy(thread: &Json) -> bool {
    thread.get("status").and_then(Json::as_str) == Some("busy")
}

struct Entry {
    stamp: String,
    read: Instant,
    history: Arc<History>,
}

/// The server's thread list at one moment.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Thread objects without their values, in the server's order (`updated_at` newest first).
    pub threads: Vec<Json>,
    /// Whether the list stopped at [`MAX_LISTED`] threads.
    pub truncated: bool,
}

/// What has been read, shared by the store's readers.
pub(crate) struct Fetcher {
    pub client: Client,
    entries: Mutex<HashMap<String, Entry>>,
    listing: Mutex<Option<(Instant, Arc<Listing>)>>,
    assistants: Mutex<Option<(Instant, Arc<Vec<Json>>)>>,
}

/// How long the assistants read are used (they change when a graph is deployed, not as
/// runs land).
const ASSISTANTS_FRESH: Duration = Duration::from_secs(30);

const THREAD_FIELDS: [&str; 6] = [
    "thread_id",
    "created_at",
    "updated_at",
    "state_updated_at",
    "metadata",
    "status",
];

impl Fetcher {
    pub fn new(client: Client) -> Fetcher {
        Fetcher {
            client,
            entries: Mutex::new(HashMap::new()),
            listing: Mutex::new(None),
            assistants: Mutex::new(None),
        }
    }

    /// The server's assistants (`POST /assistants/search`), read again after
    /// [`ASSISTANTS_FRESH`]; none when the server does not answer it.
    pub async fn assistants(&self) -> Arc<Vec<Json>> {
        let held = self
            .assistants
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some((at, a)) = held {
            if at.elapsed() < ASSISTANTS_FRESH {
                return a;
            }
        }
        let read: Vec<Json> = self
            .client
            .post("/assistants/search", &json!({"limit": 1000}))
            .await
            .unwrap_or_default();
        let read = Arc::new(read);
        *self.assistants.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((Instant::now(), Arc::clone(&read)));
        read
    }

    /// Every thread the server lists (`limit`: only the most recently updated ones).
    pub async fn listing(&self, limit: Option<usize>) -> Result<Arc<Listing>, StoreError> {
        if limit.is_none() {
            let held = self
                .listing
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if let Some((at, l)) = held {
                if at.elapsed() < FRESH {
                    return Ok(l);
                }
            }
        }
        let mut threads = Vec::new();
        let mut truncated = false;
        for page in 0.. {
            if limit.is_none() && threads.len() >= MAX_LISTED {
                truncated = page > 0;
                break;
            }
            let want = limit.map_or(PAGE, |l| (l - threads.len()).min(PAGE));
            let body = json!({
                "limit": want,
                "offset": threads.len(),
                "sort_by": "updated_at",
                "sort_order": "desc",
                "select": THREAD_FIELDS,
            });
            let got: Vec<Json> = self.client.post("/threads/search", &body).await?;
            let n = got.len();
            threads.extend(got);
            if n < want || limit.is_some_and(|l| threads.len() >= l) {
                break;
            }
        }
        let listing = Arc::new(Listing { threads, truncated });
        if limit.is_none() {
            *self.listing.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((Instant::now(), Arc::clone(&listing)));
        }
        Ok(listing)
    }

    /// The thread's history, read again when the thread changed (its listed fields, from
    /// `listed`, else `GET /threads/{id}`). `None`: the server has no such thread.
    pub async fn history(
        &self,
        thread_id: &str,
        listed: Option<&Json>,
    ) -> Result<Option<Arc<History>>, StoreError> {
        let held = {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries
                .get(thread_id)
                .map(|e| (e.stamp.clone(), e.read, Arc::clone(&e.history)))
        };
        if let Some((_, read, h)) = &held {
            if read.elapsed() < FRESH {
                return Ok(Some(Arc::clone(h)));
            }
        }
        let thread = match listed {
            Some(t) => t.clone(),
            None => match self
                .client
                .get::<Json>(&format!("/threads/{}", seg(thread_id)))
                .await
            {
                Ok(t) => t,
                Err(StoreError::NotFound(_)) => return Ok(None),
                Err(e) => return Err(e),
            },
        };
        let now = stamp(&thread);
        if let Some((old, _, h)) = &held {
            if *old == now && !busy(&thread) {
                self.keep(thread_id, now, Arc::clone(h));
                return Ok(Some(Arc::clone(h)));
            }
        }
        let history = Arc::new(self.read_history(thread_id).await?);
        self.keep(thread_id, now, Arc::clone(&history));
        Ok(Some(history))
    }

    fn keep(&self, thread_id: &str, stamp: String, history: Arc<History>) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.remove(thread_id);
        let mut bytes: usize = entries.values().map(|e| e.history.bytes).sum();
        while !entries.is_empty()
            && (entries.len() >= KEEP_THREADS || bytes + history.bytes > KEEP_BYTES)
        {
            let Some(oldest) = entries
                .iter()
                .min_by_key(|(_, e)| e.read)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = entries.remove(&oldest) {
                bytes -= e.history.bytes.min(bytes);
            }
        }
        entries.insert(
            thread_id.to_owned(),
            Entry {
                stamp,
                read: Instant::now(),
                history,
            },
        );
    }

    /// Forget what was read of a thread (after a write to it), and the thread list.
    pub fn forget(&self, thread_id: &str) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(thread_id);
        self.forget_listing();
    }

    /// Forget the thread list (after a thread was made).
    pub fn forget_listing(&self) {
        *self.listing.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The histories of the listed threads (`None` for one the server no longer has), read
    /// [`PARALLEL`] at a time.
    pub async fn histories(
        self: &Arc<Self>,
        threads: &[Json],
    ) -> Result<Vec<Option<Arc<History>>>, StoreError> {
        let mut out: Vec<Option<Arc<History>>> = vec![None; threads.len()];
        let sem = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
        let mut set = tokio::task::JoinSet::new();
        for (i, t) in threads.iter().enumerate() {
            let Some(id) = t.get("thread_id").and_then(Json::as_str) else {
                continue;
            };
            let (me, sem, id, t) = (Arc::clone(self), Arc::clone(&sem), id.to_owned(), t.clone());
            set.spawn(async move {
                let _permit = sem.acquire_owned().await;
                (i, me.history(&id, Some(&t)).await)
            });
        }
        while let Some(done) = set.join_next().await {
            let (i, h) = done.map_err(|e| StoreError::Query(format!("read task failed: {e}")))?;
            out[i] = match h {
                Ok(h) => h,
                // Listed with what went wrong (not kept: read again next time).
                Err(e) if only_this_thread(&e) => Some(Arc::new(History {
                    problem: Some(format!("its history cannot be read: {e}")),
                    ..History::default()
                })),
                Err(e) => return Err(e),
            };
        }
        Ok(out)
    }

    /// Every checkpoint of a thread: the root namespace, then each subgraph namespace its
    /// states' tasks name (nested ones too), and its runs.
    async fn read_history(&self, thread_id: &str) -> Result<History, StoreError> {
        let mut bytes = 0;
        let mut states = self.pages(thread_id, "", &mut bytes).await?;
        let mut namespaces = vec![String::new()];
        let mut queue: Vec<String> = Vec::new();
        let mut i = 0;
        loop {
            for s in &states[i..] {
                for ns in states::task_namespaces(s) {
                    if !namespaces.iter().any(|n| n == ns) && !queue.iter().any(|q| q == ns) {
                        queue.push(ns.to_owned());
                    }
                }
            }
            i = states.len();
            let Some(ns) = queue.pop() else { break };
            let more = self.pages(thread_id, &ns, &mut bytes).await?;
            namespaces.push(ns);
            states.extend(more);
        }
        let mut present: Vec<String> = namespaces
            .into_iter()
            .filter(|ns| states.iter().any(|s| states::checkpoint_ns(s) == ns))
            .collect();
        present.sort();
        states.sort_by(|a, b| states::checkpoint_id(b).cmp(&states::checkpoint_id(a)));
        let mut problem = None;
        let runs = match self
            .client
            .get::<Vec<Json>>(&format!("/threads/{}/runs?limit=1000", seg(thread_id)))
            .await
        {
            Ok(mut r) => {
                r.reverse();
                r
            }
            Err(StoreError::NotFound(_)) => Vec::new(),
            Err(e) if only_this_thread(&e) => {
                problem = Some(format!("its runs cannot be read: {e}"));
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        Ok(History {
            states,
            namespaces: present,
            runs,
            bytes,
            problem,
        })
    }

    /// One namespace's states, every page.
    async fn pages(
        &self,
        thread_id: &str,
        ns: &str,
        bytes: &mut usize,
    ) -> Result<Vec<Json>, StoreError> {
        let path = format!("/threads/{}/history", seg(thread_id));
        let mut out: Vec<Json> = Vec::new();
        for _ in 0..MAX_PAGES {
            let mut body = json!({"limit": PAGE, "checkpoint": {"checkpoint_ns": ns}});
            if let Some(last) = out.last().and_then(|s| states::checkpoint_id(s)) {
                body["before"] = json!({"checkpoint_id": last});
            }
            let page: Vec<Json> = match self.client.post_sized(&path, &body).await {
                Ok((p, n)) => {
                    *bytes += n;
                    p
                }
                // A thread deleted while it was read, or a subgraph the server cannot load.
                Err(StoreError::NotFound(_)) => break,
                Err(e) => return Err(e),
            };
            let n = page.len();
            out.extend(page);
            if n < PAGE {
                break;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(seg("a b/c"), "a%20b%2Fc");
        assert_eq!(seg("0bef1a79-9960"), "0bef1a79-9960");
    }

    #[test]
    fn stamps_change_with_the_state() {
        let a = json!({"updated_at": "1", "status": "idle"});
        let b = json!({"updated_at": "1", "status": "busy"});
        assert_ne!(stamp(&a), stamp(&b));
        assert!(busy(&b));
    }
}
