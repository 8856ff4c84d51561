//! Encrypted databases: finding the key, checking it, unlocking, and what may run locked.
//!
//! The key of a database written with LangGraph's `EncryptedSerializer` comes from the OS
//! keyring (saved for that database by the app's Unlock), else from `LANGGRAPH_AES_KEY` as
//! LangGraph reads it, else from the app's Unlock for the session. It lives only in memory
//! (the session) and in the keyring when asked; never in a file, a log or an answer.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{CheckpointSealing, DbInfo, EncryptionInfo, KeySource, UnlockRequest};
use crate::{Api, Session};
use flashback_codec::cipher::{is_encrypted, unsupported, AES, KEY_ENV};
use flashback_codec::AesKey;
use flashback_storage::{CheckpointStore, CheckpointTuple, EncryptionProbe, Read};
use std::sync::Arc;

/// The keyring account of a database's AES key.
pub(crate) fn keyring_account(location: &str) -> String {
    format!("aes-key:{location}")
}

/// The key to try first for a database: the keyring's, else the environment's.
pub(crate) fn stored_key(
    api: &Api,
    location: &str,
) -> (Option<(Arc<AesKey>, KeySource)>, Option<String>) {
    if let Some(text) = api.secrets.get(&keyring_account(location)) {
        let text = zeroize::Zeroizing::new(text);
        if let Ok(k) = AesKey::from_text(&text) {
            return (Some((Arc::new(k), KeySource::Keyring)), None);
        }
    }
    match AesKey::from_env() {
        Some(Ok(k)) => (Some((Arc::new(k), KeySource::Env)), None),
        Some(Err(e)) => (None, Some(format!("{KEY_ENV} is not a usable key: {e}"))),
        None => (None, None),
    }
}

/// What the probe says, with the key found (if any) checked against it.
pub(crate) fn encryption_info(
    probe: &EncryptionProbe,
    key: Option<&(Arc<AesKey>, KeySource)>,
    env_problem: Option<String>,
) -> Option<EncryptionInfo> {
    if !probe.encrypted() {
        return None;
    }
    let ciphers = probe.ciphers();
    let unopenable = probe.unopenable();
    let key_problem = if unopenable.len() == ciphers.len() {
        // No key opens any of them.
        Some(format!("its values are {}", unsupported(&unopenable)))
    } else {
        match key {
            Some((k, source)) => probe.check(k).err().map(|e| {
                let from = match source {
                    KeySource::Env => format!("the key in {KEY_ENV}"),
                    KeySource::Keyring => "the key saved in the keyring".into(),
                    KeySource::Typed => "the key typed".into(),
                };
                format!("{from} does not open this database's values ({e})")
            }),
            None => env_problem,
        }
    };
    Some(EncryptionInfo {
        tags: probe.tags.clone(),
        ciphers,
        unlocked: key.is_some(),
        key_source: key.map(|(_, s)| *s),
        key_problem,
        mixed: probe.mixed,
    })
}

/// The ciphers of `info` Flashback cannot open with any key; `all`: whether that is every one.
fn unopenable(info: &DbInfo) -> (Vec<String>, bool) {
    let Some(e) = &info.encryption else {
        return (Vec::new(), false);
    };
    let foreign = e.unopenable();
    let all = !foreign.is_empty() && foreign.len() == e.ciphers.len();
    (foreign, all)
}

/// The one line for a read that needs the key and has none; for a database whose values are
/// all sealed with ciphers Flashback cannot open, that line names them instead.
pub(crate) fn locked_error(info: &DbInfo) -> ApiError {
    let (foreign, all) = unopenable(info);
    if all {
        return ApiError::new(
            ErrorCode::Encrypted,
            format!(
                "{}: its values are {}",
                info.display_name,
                unsupported(&foreign)
            ),
        );
    }
    let (tags, problem) = info
        .encryption
        .as_ref()
        .map(|e| (e.tags.join(", "), e.key_problem.clone()))
        .unwrap_or_default();
    let why = problem.map(|p| format!(" ({p})")).unwrap_or_default();
    ApiError::new(
        ErrorCode::Encrypted,
        format!(
            "{} is encrypted ({tags}): set {KEY_ENV} to its AES key (16, 24 or 32 bytes), \
             or unlock it in the app{why}",
            info.display_name
        ),
    )
}

/// The one line for a checkpoint whose `ciphers` stayed locked: the cipher Flashback cannot
/// open when there is one, else (`aes` without a key) [`locked_error`].
pub(crate) fn locked_checkpoint_error(info: &DbInfo, id: &str, ciphers: &[String]) -> ApiError {
    let foreign: Vec<String> = ciphers.iter().filter(|c| *c != AES).cloned().collect();
    if foreign.is_empty() {
        return locked_error(info);
    }
    ApiError::new(
        ErrorCode::Encrypted,
        format!(
            "checkpoint {id} of {} is {}",
            info.display_name,
            unsupported(&foreign)
        ),
    )
}

impl Session {
    /// Whether the database is encrypted and no key is in use.
    pub(crate) fn locked(&self) -> bool {
        self.info.encryption.as_ref().is_some_and(|e| !e.unlocked)
    }

    /// `Err` (one line naming `LANGGRAPH_AES_KEY`) when the database is locked: for what
    /// needs the values (diff, merge, replay, forks).
    pub(crate) fn require_key(&self) -> ApiResult<()> {
        match self.locked() {
            true => Err(locked_error(&self.info)),
            false => Ok(()),
        }
    }

    /// The key writes encrypt with: only for an encrypted database.
    pub(crate) fn write_key(&self) -> Option<Arc<AesKey>> {
        self.info.encryption.as_ref().and(self.key.clone())
    }

    /// `Err` (one line) when a write that stores new values (fork, merge, re-run, repair, copy
    /// into it) could not seal them as the database's program reads them: locked
    /// ([`Session::require_key`]), or sealed only with ciphers Flashback cannot produce (it
    /// seals with `aes`, which that program's cipher would refuse).
    pub(crate) fn require_sealable(&self) -> ApiResult<()> {
        self.require_key()?;
        let (foreign, all) = unopenable(&self.info);
        if !all {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorCode::Encrypted,
            format!(
                "{}: its values are {}, and Flashback seals what it writes with `{AES}`, which \
                 the program could not read; nothing was written",
                self.info.display_name,
                unsupported(&foreign)
            ),
        ))
    }
}

/// How a checkpoint was stored, for an encrypted database (`None` for a plaintext one).
pub(crate) fn checkpoint_sealing(
    session: &Session,
    tuple: &CheckpointTuple,
) -> Option<CheckpointSealing> {
    session.info.encryption.as_ref()?;
    let mut plaintext: Vec<String> = tuple
        .sealing
        .plaintext
        .iter()
        .map(|p| match p.as_str() {
            "checkpoint" => p.clone(),
            channel => format!("channel {channel}"),
        })
        .collect();
    plaintext.extend(
        tuple
            .pending_writes
            .iter()
            .filter(|w| !is_encrypted(&w.type_tag))
            .map(|w| format!("write {} {}", w.task_id, w.channel)),
    );
    let ciphers = tuple.locked_ciphers();
    Some(CheckpointSealing {
        locked: !ciphers.is_empty(),
        ciphers,
        plaintext,
    })
}

impl Api {
    /// Unlock an encrypted database with its AES key: checked against one of its values
    /// first (a wrong key is refused), then used for every read and write of the session;
    /// saved in the OS keyring for this database when asked.
    pub async fn unlock_database(&self, req: UnlockRequest) -> ApiResult<DbInfo> {
        let s = self.session(&req.db)?;
        let key = Arc::new(
            AesKey::from_text(&req.key)
                .map_err(|e| ApiError::invalid(format!("this is not an AES key: {e}")))?,
        );
        let store = flashback_storage::open(
            &s.connect,
            Read {
                budget: self.decode_budget()?,
                key: Some(key.clone()),
            },
        )
        .await?;
        let probe = store.encryption_probe().await?;
        if !probe.encrypted() {
            return Err(ApiError::invalid(format!(
                "{} is not encrypted: there is nothing to unlock",
                s.info.display_name
            )));
        }
        let foreign = probe.unopenable();
        if foreign.len() == probe.ciphers().len() {
            return Err(ApiError::new(
                ErrorCode::Encrypted,
                format!(
                    "{}: its values are {}; no key opens them",
                    s.info.display_name,
                    unsupported(&foreign)
                ),
            ));
        }
        if let Err(e) = probe.check(&key) {
            return Err(ApiError::new(
                ErrorCode::Encrypted,
                format!("this key does not open {}: {e}", s.info.display_name),
            ));
        }
        let source = if req.remember {
            self.secrets
                .set(&keyring_account(&s.info.location), &req.key)
                .map_err(|why| ApiError::new(ErrorCode::Io, why))?;
            KeySource::Keyring
        } else {
            KeySource::Typed
        };
        let mut info = s.info.clone();
        info.encryption = encryption_info(&probe, Some(&(key.clone(), source)), None);
        let session = Arc::new(Session {
            info: info.clone(),
            connect: s.connect.clone(),
            store: Arc::from(store),
            key: Some(key),
            namespaces: std::sync::Mutex::new(Default::default()),
            paged: Default::default(),
        });
        if let Ok(mut all) = self.sessions.lock() {
            all.insert(info.db.clone(), session);
        }
        Ok(info)
    }
}

/// Open a store and find out whether (and how) it is encrypted: with the stored key when
/// there is one for an encrypted database.
pub(crate) async fn open_sealed(
    api: &Api,
    connect: &str,
    location: &str,
    budget: flashback_codec::DecodeBudget,
) -> Result<
    (
        Box<dyn CheckpointStore>,
        Option<Arc<AesKey>>,
        Option<EncryptionInfo>,
    ),
    flashback_storage::StoreError,
> {
    let (key, env_problem) = stored_key(api, location);
    let store = flashback_storage::open(
        connect,
        Read {
            budget,
            key: key.as_ref().map(|(k, _)| k.clone()),
        },
    )
    .await?;
    // A database that cannot be probed (an odd schema) is read as plaintext.
    let probe = store.encryption_probe().await.unwrap_or_default();
    let info = encryption_info(&probe, key.as_ref(), env_problem);
    let key = info.as_ref().and(key.map(|(k, _)| k));
    Ok((store, key, info))
}
