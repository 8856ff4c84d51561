//! Postgres passwords: in the OS keyring when there is one, otherwise only in memory.
//!
//! Never in Flashback's state database, in a file, or in a log. The keyring entry is keyed by
//! the connection URL *without* its password (`service = dev.flashback.app`).

/// The keyring service name (the app identifier).
pub const SERVICE: &str = crate::APP_ID;

/// Where saved passwords live.
pub trait SecretStore: Send + Sync {
    /// Whether passwords can be saved at all (a keyring answered).
    fn available(&self) -> bool;
    /// The saved password for `account`.
    fn get(&self, account: &str) -> Option<String>;
    /// Save a password; `Err` says why it could not be saved.
    fn set(&self, account: &str, password: &str) -> Result<(), String>;
    /// Forget a password (no error when there is none).
    fn delete(&self, account: &str);
}

/// No keyring: nothing is ever saved.
pub struct NoSecrets;

impl SecretStore for NoSecrets {
    fn available(&self) -> bool {
        false
    }
    fn get(&self, _account: &str) -> Option<String> {
        None
    }
    fn set(&self, _account: &str, _password: &str) -> Result<(), String> {
        Err("no keyring is available, so the password is kept for this session only".into())
    }
    fn delete(&self, _account: &str) {}
}

/// The OS keyring (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows).
///
/// Every call runs on its own thread with a time limit: a session bus without a secret service
/// can take D-Bus's 25 s activation timeout to say so, and the UI must not hang meanwhile.
#[cfg(feature = "keyring")]
pub struct OsKeyring {
    available: std::sync::OnceLock<bool>,
}

#[cfg(feature = "keyring")]
const KEYRING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4);

#[cfg(feature = "keyring")]
fn on_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("flashback-keyring".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .ok()?;
    rx.recv_timeout(KEYRING_TIMEOUT).ok()
}

#[cfg(feature = "keyring")]
impl OsKeyring {
    /// A keyring that is probed on first use.
    pub fn new() -> OsKeyring {
        OsKeyring {
            available: std::sync::OnceLock::new(),
        }
    }
}

#[cfg(feature = "keyring")]
impl Default for OsKeyring {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "keyring")]
impl SecretStore for OsKeyring {
    fn available(&self) -> bool {
        *self.available.get_or_init(|| {
            // A lookup of an entry that does not exist must answer cleanly.
            on_thread(|| {
                keyring::Entry::new(SERVICE, "flashback-probe")
                    .is_ok_and(|e| matches!(e.get_password(), Ok(_) | Err(keyring::Error::NoEntry)))
            })
            .unwrap_or(false)
        })
    }
    fn get(&self, account: &str) -> Option<String> {
        if !self.available() {
            return None;
        }
        let account = account.to_owned();
        on_thread(move || {
            keyring::Entry::new(SERVICE, &account)
                .ok()?
                .get_password()
                .ok()
        })
        .flatten()
    }
    fn set(&self, account: &str, password: &str) -> Result<(), String> {
        if !self.available() {
            return NoSecrets.set(account, password);
        }
        let (account, password) = (account.to_owned(), password.to_owned());
        on_thread(move || {
            keyring::Entry::new(SERVICE, &account)
                .and_then(|e| e.set_password(&password))
                .map_err(|e| format!("the keyring refused the password: {e}"))
        })
        .unwrap_or_else(|| Err("the keyring did not answer".into()))
    }
    fn delete(&self, account: &str) {
        if !self.available() {
            return;
        }
        let account = account.to_owned();
        on_thread(move || {
            if let Ok(e) = keyring::Entry::new(SERVICE, &account) {
                let _ = e.delete_credential();
            }
        });
    }
}

/// In memory (tests).
#[derive(Default)]
pub struct MemorySecrets(std::sync::Mutex<std::collections::HashMap<String, String>>);

impl SecretStore for MemorySecrets {
    fn available(&self) -> bool {
        true
    }
    fn get(&self, account: &str) -> Option<String> {
        self.0.lock().ok()?.get(account).cloned()
    }
    fn set(&self, account: &str, password: &str) -> Result<(), String> {
        self.0
            .lock()
            .map_err(|_| "poisoned".to_string())?
            .insert(account.to_owned(), password.to_owned());
        Ok(())
    }
    fn delete(&self, account: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(account);
        }
    }
}
