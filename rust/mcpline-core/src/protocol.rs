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

    /// Whether this revision defines `feature`.
    #[must_use]
    pub fn supports(self, feature: Feature) -> bool {
        match feature {
            Feature::Batches => self == Self::V2025_03_26,
            _ => self >= feature.since(),
        }
    }
}

/// A piece of the protocol that only some revisions define; see [`Revision::supports`].
///
/// Fields and content a revision does not define are left out of what is sent under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// JSON-RPC batches (2025-03-26 only).
    Batches,
    /// Tool `annotations` (behaviour hints) in `tools/list` (from 2025-03-26).
    ToolAnnotations,
    /// `annotations` on content blocks (from 2025-03-26).
    ContentAnnotations,
    /// `audio` content blocks (from 2025-03-26).
    Audio,
    /// The `message` of a progress notification (from 2025-03-26).
    ProgressMessage,
    /// `title` of tools and of the server (from 2025-06-18; before, a tool's title is sent as its
    /// `annotations.title`).
    Titles,
    /// A tool's `outputSchema` and a result's `structuredContent` (from 2025-06-18).
    StructuredOutput,
    /// `resource_link` content blocks (from 2025-06-18).
    ResourceLinks,
    /// `_meta` and `annotations.lastModified` on content blocks (from 2025-06-18).
    ContentMeta,
    /// The server's `description` and `websiteUrl` (from 2025-11-25).
    ServerDescription,
    /// Icons on the server and its primitives (from 2025-11-25).
    Icons,
    /// The `completions` capability (from 2025-03-26; 2024-11-05 has `completion/complete`
    /// without a capability for it).
    CompletionsCapability,
}

impl Feature {
    /// The first revision that defines the feature.
    #[must_use]
    pub const fn since(self) -> Revision {
        match self {
            Self::Batches
            | Self::ToolAnnotations
            | Self::ContentAnnotations
            | Self::Audio
            | Self::ProgressMessage
            | Self::CompletionsCapability => Revision::V2025_03_26,
            Self::Titles | Self::StructuredOutput | Self::ResourceLinks | Self::ContentMeta => {
                Revision::V2025_06_18
            }
            Self::ServerDescription | Self::Icons => Revision::V2025_11_25,
        }
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// MCP log levels, in increasing severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    const ALL: [Self; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// Parses a level name (`"debug"` … `"emergency"`).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// The level's wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    pub(crate) fn to_u8(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_u8(v: u8) -> Option<Self> {
        Self::ALL.get(usize::from(v)).copied()
    }
}
