//! Protocol revisions and what each one knows.

/// An MCP protocol revision this server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// The first public revision.
    V2024_11_05,
    /// Adds audio, tool annotations, progress messages and (only here) JSON-RPC batches.
    V2025_03_26,
    /// Adds titles, structured output, `resource_link`.
    V2025_06_18,
    /// Adds icons and server descriptions; input-validation failures are tool errors.
    V2025_11_25,
    /// Stateless: per-request `_meta`, `server/discover`, no `initialize` and no `ping`.
    V2026_07_28,
}

/// Revisions negotiated through `initialize`, oldest first.
pub const HANDSHAKE_REVISIONS: [Revision; 4] = [
    Revision::V2024_11_05,
    Revision::V2025_03_26,
    Revision::V2025_06_18,
    Revision::V2025_11_25,
];

/// Revisions served statelessly through the per-request `_meta` envelope.
pub const STATELESS_REVISIONS: [Revision; 1] = [Revision::V2026_07_28];

/// `_meta` key carrying the protocol revision of a 2026-07-28 request.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client capabilities of a 2026-07-28 request.
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the client identity of a 2026-07-28 request.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key carrying the requested log level of a 2026-07-28 request.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key carrying the server identity in 2026-07-28 results.
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

impl Revision {
    /// The revision's date string.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision date string.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::V2024_11_05,
            Self::V2025_03_26,
            Self::V2025_06_18,
            Self::V2025_11_25,
            Self::V2026_07_28,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// The newest revision negotiated through `initialize`.
    #[must_use]
    pub const fn newest_handshake() -> Self {
        Self::V2025_11_25
    }

    /// True for the stateless era (2026-07-28 and later).
    #[must_use]
    pub fn is_stateless(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// Whether JSON-RPC batches exist in this revision (2025-03-26 only).
    #[must_use]
    pub fn has_batches(self) -> bool {
        self == Self::V2025_03_26
    }

    /// Tool annotations, audio content and progress `message` (from 2025-03-26).
    #[must_use]
    pub fn has_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Titles, `outputSchema`, `structuredContent`, `resource_link` and `_meta` (from 2025-06-18).
    #[must_use]
    pub fn has_structured_output(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Icons, server description and website (from 2025-11-25).
    #[must_use]
    pub fn has_icons(self) -> bool {
        self >= Self::V2025_11_25
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
