//! The context channels a fold sorts what it keeps into; the context renderer reads them.

/// A context channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    Persistent,
    Ephemeral,
    AtStop,
}

impl Channel {
    pub const ALL: [Channel; 3] = [Channel::Persistent, Channel::Ephemeral, Channel::AtStop];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Persistent => "persistent",
            Channel::Ephemeral => "ephemeral",
            Channel::AtStop => "at-stop",
        }
    }

    pub fn from_name(s: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.as_str() == s)
    }
}
