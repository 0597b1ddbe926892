//! Handshake-era sessions over HTTP (2025-03-26 … 2025-11-25): what `initialize` negotiated,
//! kept under an unguessable `Mcp-Session-Id` until the client deletes it or leaves it idle.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::jsonrpc::RequestId;
use crate::session::{PeerState, Session};
use crate::sync::lock;

/// One client's session: its handshake and log threshold, and the exchanges still answering.
pub(crate) struct ClientSession {
    pub(crate) peer: PeerState,
    live: Mutex<Vec<Weak<Session>>>,
    last_seen: Mutex<Instant>,
}

impl ClientSession {
    fn new(peer: PeerState) -> Self {
        Self {
            peer,
            live: Mutex::new(Vec::new()),
            last_seen: Mutex::new(Instant::now()),
        }
    }

    /// Keeps a handle on `exchange` while it answers (for `notifications/cancelled`).
    pub(crate) fn join(self: &Arc<Self>, exchange: &Arc<Session>) -> Membership {
        *lock(&self.last_seen) = Instant::now();
        let mut live = lock(&self.live);
        live.retain(|s| s.strong_count() > 0);
        live.push(Arc::downgrade(exchange));
        Membership {
            _client: Arc::clone(self),
        }
    }

    /// `notifications/cancelled` for `id`: the exchange that owes its response drops it and
    /// tells the call to stop.
    pub(crate) fn cancel(&self, id: &RequestId) {
        let live: Vec<Arc<Session>> = lock(&self.live).iter().filter_map(Weak::upgrade).collect();
        for exchange in live {
            exchange.outbox.cancel(id);
        }
    }

    fn idle_for(&self, now: Instant) -> Duration {
        let live = lock(&self.live).iter().any(|s| s.strong_count() > 0);
        if live {
            Duration::ZERO
        } else {
            now.saturating_duration_since(*lock(&self.last_seen))
        }
    }
}

/// An exchange's hold on its session (which then outlives a `DELETE` until the exchange ends).
pub(crate) struct Membership {
    _client: Arc<ClientSession>,
}

/// The live sessions by id.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<ClientSession>>>,
    idle_limit: Duration,
    most: usize,
}

impl Sessions {
    pub(crate) fn new(idle_limit: Duration, most: usize) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            idle_limit,
            most: most.max(1),
        }
    }

    /// Registers `peer` under a new id. Sessions idle past the limit are dropped first; when
    /// the map is still full, the one idle longest goes.
    pub(crate) fn create(&self, peer: PeerState) -> std::io::Result<String> {
        let id = new_id()?;
        let now = Instant::now();
        let mut map = lock(&self.map);
        map.retain(|_, s| s.idle_for(now) < self.idle_limit);
        if map.len() >= self.most {
            let oldest = map
                .iter()
                .max_by_key(|(_, s)| s.idle_for(now))
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                map.remove(&oldest);
            }
        }
        map.insert(id.clone(), Arc::new(ClientSession::new(peer)));
        Ok(id)
    }

    /// The session `id`, unless it ended or was idle past the limit.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<ClientSession>> {
        let mut map = lock(&self.map);
        let session = map.get(id)?;
        if session.idle_for(Instant::now()) >= self.idle_limit {
            map.remove(id);
            return None;
        }
        Some(Arc::clone(session))
    }

    /// Ends session `id`; false when there was none.
    pub(crate) fn remove(&self, id: &str) -> bool {
        lock(&self.map).remove(id).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.map).len()
    }
}

/// 128 random bits from the operating system, as 32 hex digits (visible ASCII, as the
/// specification asks of session ids).
fn new_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut id = String::with_capacity(32);
    for b in bytes {
        let _ = write!(id, "{b:02x}");
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_hex_digits_and_differ() {
        let (a, b) = (new_id().unwrap(), new_id().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn a_full_map_drops_the_session_idle_longest() {
        let sessions = Sessions::new(Duration::from_secs(3600), 2);
        let first = sessions.create(PeerState::new()).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let second = sessions.create(PeerState::new()).unwrap();
        let third = sessions.create(PeerState::new()).unwrap();
        assert!(sessions.get(&first).is_none());
        assert!(sessions.get(&second).is_some());
        assert!(sessions.get(&third).is_some());
    }

    #[test]
    fn an_idle_session_expires_and_a_deleted_one_is_gone() {
        let sessions = Sessions::new(Duration::from_millis(20), 10);
        let id = sessions.create(PeerState::new()).unwrap();
        assert!(sessions.get(&id).is_some());
        assert!(sessions.remove(&id));
        assert!(!sessions.remove(&id));
        let id = sessions.create(PeerState::new()).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(sessions.get(&id).is_none());
    }
}
